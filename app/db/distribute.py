"""Applying the Citus plan (app/db/citus_plan.py) to a database: `beacon migrate --distributed`.

The citus extension is checked before anything else, so a database without it is left exactly as it was (the
migrations included: the command checks before it migrates). Each statement of the plan then runs on its own:
Citus's table conversions do not all run inside one transaction block, and each statement skips what is done
already, so a run that stopped half-way is finished by running the command again.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from app.settings import asyncpg_dsn


class NotDistributable(Exception):
    """The database cannot take the plan (no citus extension); nothing was changed."""


async def citus_version(database_url: str) -> str:
    """The citus extension's version in this database; NotDistributable when it is not installed there."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        version = await conn.fetchval("SELECT extversion FROM pg_extension WHERE extname = 'citus'")
        database = await conn.fetchval("SELECT current_database()")
    finally:
        await conn.close()
    if version is None:
        raise NotDistributable(
            f"The citus extension is not installed in database {database!r}, so it cannot be distributed; nothing "
            "was changed. On every node (coordinator and workers), in this database: CREATE EXTENSION citus "
            "(citus must be in shared_preload_libraries). Citus keeps its extension and node list per database. "
            "`beacon migrate --distributed --print` shows the plan's SQL."
        )
    return str(version)


async def apply_plan(database_url: str, statements: Sequence[str]) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()
