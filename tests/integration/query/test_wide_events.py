"""One wide event (50,000 fields) among ordinary ones: a query result carries a bounded number of columns and
values and says so in `warnings`, and neither a query nor an export of it holds the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx
import orjson
import pytest

from tests.integration.query.conftest import t
from tests.integration.query.loader import load_events

T = TypeVar("T")
WIDE_FIELDS = 50_000


@pytest.fixture
async def wide(database_url: str) -> str:
    events: list[dict[str, Any]] = [
        {"_time": t(f"2025-03-01T10:{i // 60:02d}:{i % 60:02d}"), "n": i, "service": "api", "msg": f"ok {i}"}
        for i in range(2_000)
    ]
    # The newest event, and the first by `n` descending.
    events.append({"_time": t("2025-03-01T11:00:00"), "n": 10**6, **{f"k{i:05d}": i for i in range(WIDE_FIELDS)}})
    await load_events(database_url, "wide", events)
    return "wide"


async def beside_healthz(base: str, work: Awaitable[T]) -> tuple[T, float]:
    """`work`'s result, and the longest /healthz took while it ran (sampled one after another)."""
    task = asyncio.ensure_future(work)
    worst = 0.0
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        while not task.done():
            started = time.monotonic()
            assert (await http.get("/healthz")).status_code == 200
            worst = max(worst, time.monotonic() - started)
            await asyncio.sleep(0.01)
    return await task, worst


async def post_query(base: str, auth: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=120) as http:
        return await http.post("/v1/query", json=body)


async def test_take_2000_over_a_wide_event_is_bounded_and_keeps_the_loop_free(
    served: str, auth: dict[str, str], wide: str
) -> None:
    started = time.monotonic()
    r, healthz = await beside_healthz(served, post_query(served, auth, {"apl": "['wide'] | take 2000"}))
    elapsed = time.monotonic() - started
    assert r.status_code == 200, r.text
    out = r.json()
    names = [c["name"] for c in out["columns"]]
    assert len(names) == 1_000 and names[0] == "_time"  # was: 50,004 columns, 39 s
    assert {"n", "service", "msg"} <= set(names)  # the fields every event has are kept
    (warning,) = out["warnings"]
    assert warning["code"] == "too_many_fields" and f"{WIDE_FIELDS + 3 - 999:,} more fields" in warning["message"]
    assert len(out["rows"]) == 2000 and not out["status"]["truncated"]
    assert elapsed < 15, elapsed
    assert healthz < 0.5, healthz  # the result was built and encoded off the event loop


async def test_top_of_the_largest_count_is_bounded(served: str, auth: dict[str, str], wide: str) -> None:
    body = {"apl": "['wide'] | top 9223372036854775807 by n"}
    r, healthz = await beside_healthz(served, post_query(served, auth, body))
    assert r.status_code == 200, r.text
    out = r.json()
    # 1,000 columns (the wide event comes first) fit 2,000 of the 2,001 rows in 2,000,000 values.
    assert len(out["columns"]) == 1_000 and len(out["rows"]) == 2_000 and out["status"]["truncated"]
    n = [c["name"] for c in out["columns"]].index("n")
    assert [row[n] for row in out["rows"][:3]] == [10**6, 1999, 1998]
    assert [w["code"] for w in out["warnings"]] == ["too_many_fields", "too_many_cells"]
    assert healthz < 0.5, healthz


async def test_rows_past_the_cell_bound_are_cut_and_said(
    make_app: Any, auth: dict[str, str], wide: str, database_url: str
) -> None:
    from litestar.testing import AsyncTestClient

    app = make_app(query_max_cells=2_400, query_max_columns=100)
    async with AsyncTestClient(app=app) as client:
        projected = await client.post("/v1/query", json={"apl": "['wide'] | project n, service, msg"}, headers=auth)
        events = await client.post("/v1/query", json={"apl": "['wide'] | take 2000"}, headers=auth)
    out = projected.json()
    assert len(out["rows"]) == 800 and out["status"]["truncated"]  # 3 columns x 800 rows
    assert [w["code"] for w in out["warnings"]] == ["too_many_cells"]
    assert "800 rows of 3 columns (2,400 values at most)" in out["warnings"][0]["message"]
    out = events.json()
    # The wide event comes first: 100 columns, which fit 24 rows.
    assert len(out["rows"]) == 24 and out["status"]["truncated"] and len(out["columns"]) == 100
    assert {"_time", "msg", "n", "service"} <= {c["name"] for c in out["columns"]}
    assert [w["code"] for w in out["warnings"]] == ["too_many_fields", "too_many_cells"]


async def test_an_export_of_wide_events_keeps_the_loop_free(served: str, auth: dict[str, str], wide: str) -> None:
    async def export(body: dict[str, Any]) -> list[bytes]:
        async with httpx.AsyncClient(base_url=served, headers=auth, timeout=120) as http:
            r = await http.post("/v1/export", json=body)
            assert r.status_code == 200, r.text
            return r.content.splitlines()

    async def many_wide() -> list[bytes]:
        return await export({"apl": "['wide'] | sort by n asc"})  # parsed rows (sorted), encoded per row

    lines, healthz = await beside_healthz(served, many_wide())
    assert len(lines) == 2_001 and len(orjson.loads(lines[-1])) == WIDE_FIELDS + 2  # every field of each event
    assert healthz < 0.5, healthz
