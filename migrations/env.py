"""Alembic environment: async, the URL from `config.attributes` or from Settings (BEACON_DATABASE_URL)."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.db.embedded import with_database
from app.settings import Settings, normalize_database_url

config = context.config


def _url() -> str:
    url = config.attributes.get("database_url")
    if url:
        return str(url)
    settings = with_database(Settings.from_env())
    assert settings.database_url
    return normalize_database_url(settings.database_url)


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=None, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async())
