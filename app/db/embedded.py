"""The embedded PostgreSQL used when no BEACON_DATABASE_URL is set (the `pgserver` package).

Lifecycle: every Beacon process that uses the server in a data directory registers itself in it (pgserver's
handle list, `pg/.handle_pids.json`); a process that finds it running reuses it, and when the last of them exits
(Ctrl-C or SIGTERM on `beacon serve`, or a `migrate`/`tokens` command ending) the server is stopped. A process
killed with SIGKILL cannot deregister: the next one to start removes the dead entries, so it stops the server
when it is done with it.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.settings import Settings, normalize_database_url

log = logging.getLogger("beacon.db")


def _import_pgserver() -> Any:
    # pgserver asks platformdirs for a runtime directory when it is imported; without XDG_RUNTIME_DIR (a container,
    # cron, ssh without a session) platformdirs warns and uses its fallback, which suits a lock file well.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*XDG_RUNTIME_DIR")
        import pgserver  # imported here: starting a server is a side effect only commands ask for

    return pgserver


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop the processes that ended without deregistering (SIGKILL), so the last live one stops the server."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_embedded(data_dir: Path, *, stop_at_exit: bool = True) -> str:
    """Start (or reuse, if one already runs there) a PostgreSQL in `data_dir/pg`; return its asyncpg URL.

    With `stop_at_exit` the server is stopped when this process exits, unless another process still uses it.
    """
    pgserver = _import_pgserver()
    pgdata = (data_dir / "pg").resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    with pgserver.PostgresServer._lock:  # the lock pgserver holds while it changes the handle list
        _forget_dead_handles(pgdata)
    server = pgserver.get_server(pgdata, cleanup_mode="stop" if stop_at_exit else None)
    url = normalize_database_url(server.get_uri())
    log.info("embedded PostgreSQL at %s", pgdata)
    return url


def stop_embedded(data_dir: Path) -> None:
    """Let go of the server in `data_dir/pg` now rather than at exit: stops it unless another process uses it."""
    pgserver = _import_pgserver()
    pgdata = (data_dir / "pg").resolve()
    server = pgserver.PostgresServer._instances.get(pgdata)
    if server is not None:
        server.cleanup()  # pgserver's "last handle" rule; the exit hook then finds nothing left to do


def embedded_running(data_dir: Path) -> bool:
    """Whether a PostgreSQL runs on `data_dir/pg` (read from its postmaster.pid)."""
    pid_file = (data_dir / "pg" / "postmaster.pid").resolve()
    try:
        pid = int(pid_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return False
    return _alive(pid)


def with_database(settings: Settings) -> Settings:
    """Settings whose `database_url` is set, starting the embedded server when it is not."""
    if settings.database_url:
        return settings
    return replace(settings, database_url=start_embedded(settings.data_dir))
