from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from app.settings import normalize_database_url


def make_engine(database_url: str, *, pool_size: int = 10) -> AsyncEngine:
    return create_async_engine(
        normalize_database_url(database_url),
        pool_size=pool_size,
        max_overflow=10,
        pool_pre_ping=True,
        # Times are always written and read as UTC; JSON goes through orjson-speed msgspec elsewhere.
        connect_args={"server_settings": {"timezone": "UTC", "application_name": "beacon"}},
    )


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
