"""Alertmanager's API v2 at /api/v2, so that Prometheus and amtool work against Beacon unmodified: a
translation layer over app/routing (no routing logic of its own)."""
