"""Calling POST /v1/query from tests, and looking at the database beside the app."""

from __future__ import annotations

from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.settings import asyncpg_dsn


async def run(
    client: AsyncTestClient[Litestar], auth: dict[str, str], apl: str, **body: Any
) -> tuple[list[dict[str, str]], list[list[Any]], dict[str, Any]]:
    """Columns, rows and status of a query that must succeed."""
    resp = await client.post("/v1/query", json={"apl": apl, **body}, headers=auth)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["object"] == "query_result"
    return out["columns"], out["rows"], out["status"]


async def rows_of(client: AsyncTestClient[Litestar], auth: dict[str, str], apl: str, **body: Any) -> list[list[Any]]:
    return (await run(client, auth, apl, **body))[1]


async def column(client: AsyncTestClient[Litestar], auth: dict[str, str], apl: str, **body: Any) -> list[Any]:
    """The values of a one-column result."""
    columns, rows, _ = await run(client, auth, apl, **body)
    assert len(columns) == 1, columns
    return [r[0] for r in rows]


async def fetch(database_url: str, sql: str) -> list[asyncpg.Record]:
    """The rows of `sql` on a connection of the test's own (pg_stat_activity, pg_locks)."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        return await conn.fetch(sql)
    finally:
        await conn.close()
