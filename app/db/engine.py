from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

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
