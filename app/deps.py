"""Litestar dependencies made per request from the app's Services: a database session and the cursor codec."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from sqlalchemy.ext.asyncio import AsyncSession

from app.pagination import CursorCodec
from app.services import Services


async def provide_session(services: Services) -> AsyncGenerator[AsyncSession, None]:
    # Services commit explicitly; anything left uncommitted (an error midway) is rolled back on close.
    async with services.sessionmaker() as session:
        yield session


def provide_codec(services: Services) -> CursorCodec:
    return services.cursor_codec
