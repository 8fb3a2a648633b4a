from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from app.settings import normalize_database_url

# The array types Beacon's statements pass (a batch's columns, unnested). asyncpg knows text[] but learns any other
# array type by asking the server, once per connection, when a statement first uses it: a catalog query with JIT
# switched off and on around it, 10-15 ms here, paid inside whatever first meets it on a new connection: the first
# alerts' POST and their flush after a start (bench/RESULTS.md), a burst that grows the pool. Naming them all in one
# statement when a connection opens makes that one lookup, paid there.
_ARRAY_TYPES = ("timestamptz", "boolean", "integer", "bigint", "jsonb", "float8")
_LEARN_ARRAY_TYPES = "SELECT " + ", ".join(f"NULL::{name}[]" for name in _ARRAY_TYPES)


def _learn_array_types(dbapi_connection: Any, _record: object) -> None:
    # After SQLAlchemy's own setup of the connection (its JSON codecs: setting a codec forgets learned types).
    dbapi_connection.run_async(lambda conn: conn.fetchrow(_LEARN_ARRAY_TYPES))


def make_engine(database_url: str, *, pool_size: int = 10) -> AsyncEngine:
    engine = create_async_engine(
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
    event.listen(engine.sync_engine, "connect", _learn_array_types)
    return engine


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
