"""The web console: server-rendered pages under /ui."""
