"""Litestar dependencies shared by every area: a database session and the cursor codec."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.pagination import CursorCodec


async def provide_session(state: State) -> AsyncGenerator[AsyncSession, None]:
    # Services commit explicitly; anything left uncommitted (an error midway) is rolled back on close.
    async with state.sessionmaker() as session:
        yield session


def provide_codec(state: State) -> CursorCodec:
    codec: CursorCodec = state.cursor_codec
    return codec
