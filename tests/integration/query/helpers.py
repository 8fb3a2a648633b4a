"""Calling POST /v1/query from tests."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient


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
