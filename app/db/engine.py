from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from app.settings import normalize_database_url


def make_engine(database_url: str, *, pool_size: int = 10) -> AsyncEngine:
    return create_async_engine(
        normalize_database_url(database_url),
        pool_size=pool_size,
        max_overflow=10,
        # No pre-ping: with asyncpg it costs three round trips per checkout, and every request checks out twice
        # (auth, then the handler). A connection the server dropped fails its request with a 503 instead, and
        # recycling keeps connections from outliving server-side idle timeouts.
        pool_recycle=1800,
        # Times are always written and read as UTC.
        connect_args={"server_settings": {"timezone": "UTC", "application_name": "beacon"}},
    )


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def driver_connection(conn: AsyncConnection | AsyncSession) -> asyncpg.Connection:
    """The asyncpg connection under a SQLAlchemy connection (or a session's, in its transaction): for COPY and
    for hot reads as plain records, where the ORM would cost more than the statement."""
    if isinstance(conn, AsyncSession):
        conn = await conn.connection()
    driver = (await conn.get_raw_connection()).driver_connection
    assert isinstance(driver, asyncpg.Connection)
    return driver


@asynccontextmanager
async def autocommit_connection(engine: AsyncEngine) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection's asyncpg connection with no transaction open: each statement commits by itself, in one
    round trip. A connection that broke meanwhile (terminated, the server gone) is thrown away, not pooled again:
    the pool only notices breaks in statements SQLAlchemy runs itself."""
    async with engine.connect() as conn:
        driver = await driver_connection(conn)
        try:
            yield driver
        except BaseException:
            if driver.is_closed():
                await conn.invalidate()
            raise
