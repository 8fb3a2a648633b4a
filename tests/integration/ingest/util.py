"""Helpers shared by the ingest and dataset tests: posting bodies and reading back what was stored."""

from __future__ import annotations

import gzip as gzip_module
from typing import Any

import httpx
import orjson
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

NDJSON = "application/x-ndjson"
JSON = "application/json"


def ndjson(events: list[Any]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


async def post_events(
    client: Any,
    auth: dict[str, str],
    dataset: str,
    body: bytes,
    *,
    content_type: str = NDJSON,
    gzip: bool = False,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    sent = {**auth, "content-type": content_type, **(headers or {})}
    if gzip:
        body = gzip_module.compress(body)
        sent["content-encoding"] = "gzip"
    response: httpx.Response = await client.post(f"/v1/ingest/{dataset}", headers=sent, content=body, params=params)
    return response


async def stored(db: async_sessionmaker[AsyncSession], dataset: str | None = None) -> list[dict[str, Any]]:
    """Every stored event, oldest first, as {time, sys_time, data, partition}."""
    sql = (
        "SELECT e.time, e.sys_time, e.data, e.tableoid::regclass::text AS partition FROM events e "
        "JOIN datasets d ON d.id = e.dataset_id WHERE (CAST(:name AS text) IS NULL OR d.name = :name) "
        "ORDER BY e.time, e.data::text"
    )
    async with db() as s:
        rows = (await s.execute(text(sql), {"name": dataset})).mappings().all()
    return [dict(r) for r in rows]


async def count_rows(db: async_sessionmaker[AsyncSession], table: str) -> int:
    async with db() as s:
        return int((await s.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one())


async def fields_of(db: async_sessionmaker[AsyncSession], dataset: str) -> dict[str, list[str]]:
    sql = "SELECT f.name, f.types FROM dataset_fields f JOIN datasets d ON d.id = f.dataset_id WHERE d.name = :n"
    async with db() as s:
        return {r.name: list(r.types) for r in (await s.execute(text(sql), {"n": dataset})).all()}
