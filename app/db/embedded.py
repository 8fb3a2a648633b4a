"""The embedded PostgreSQL used when no BEACON_DATABASE_URL is set (the `pgserver` package)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from app.settings import Settings, normalize_database_url

log = logging.getLogger("beacon.db")


def start_embedded(data_dir: Path) -> str:
    """Start (or reuse, if one already runs there) a PostgreSQL in `data_dir/pg`; return its asyncpg URL."""
    import pgserver  # imported here: starting a server is a side effect only commands ask for

    pgdata = (data_dir / "pg").resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this process, so later commands and restarts reuse it.
    server = pgserver.get_server(pgdata, cleanup_mode=None)
    url = normalize_database_url(server.get_uri())
    log.info("embedded PostgreSQL at %s", pgdata)
    return url


def with_database(settings: Settings) -> Settings:
    """Settings whose `database_url` is set, starting the embedded server when it is not."""
    if settings.database_url:
        return settings
    return replace(settings, database_url=start_embedded(settings.data_dir))
