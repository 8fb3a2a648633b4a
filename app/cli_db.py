"""What the commands that talk to the database directly share (serve, migrate, and `beacon tokens` without a
token): the settings, with the embedded PostgreSQL started when there is no BEACON_DATABASE_URL, and one session.

Imported by those commands when they run, never by `beacon --help` (see app/cli.py)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.settings import Settings

T = TypeVar("T")


def command_settings() -> Settings:
    from app.db.embedded import with_database
    from app.settings import Settings

    # SIGTERM ends the process through SystemExit, so that the exit hooks run and the embedded PostgreSQL is let
    # go (uvicorn handles SIGTERM while it serves, then raises it again once it has shut down).
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    try:
        return with_database(Settings.from_env()).with_secret_key()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def run_db(settings: Settings, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    import asyncio

    from app.db.engine import make_engine, make_sessionmaker
    from app.errors import BeaconError

    async def main() -> T:
        engine = make_engine(settings.database_url or "", pool_size=1)
        try:
            async with make_sessionmaker(engine)() as session:
                return await work(session)
        finally:
            await engine.dispose()

    try:
        return asyncio.run(main())
    except BeaconError as exc:
        raise click.ClickException(exc.message) from exc
