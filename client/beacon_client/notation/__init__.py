"""The notations people type and read, shared by the client, its commands and the server: durations (`1h30m`),
times relative to now (`now-1h`), labels (`team=payments`, `{a="1"}`). Standard library only, so that the client
installs and starts without the server (the server imports them from here: one copy of each)."""
