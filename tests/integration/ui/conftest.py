"""Console tests: a signed-in client, and a dataset of known events and annotations."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

EVENTS_START = "2025-03-01T00:00:00Z"
EVENTS_END = "2025-03-02T00:00:00Z"
# Three events at 10:01-10:04 (one 5-minute bucket), two at 12:30, one at 23:59:59: six in the day.
EVENTS = [
    {"_time": "2025-03-01T10:01:00Z", "duration_ms": 10, "service": "api"},
    {"_time": "2025-03-01T10:02:00Z", "duration_ms": 20, "service": "api"},
    {"_time": "2025-03-01T10:04:59Z", "duration_ms": 60, "service": "web"},
    {"_time": "2025-03-01T12:30:00Z", "duration_ms": 5, "service": "api"},
    {"_time": "2025-03-01T12:31:00Z", "duration_ms": 7, "service": "web"},
    {"_time": "2025-03-01T23:59:59Z", "duration_ms": 1, "service": "api"},
    {"_time": "2025-03-02T00:00:00Z", "duration_ms": 1000, "service": "api"},  # outside the day
]


async def sign_in(client: Any, token: str) -> None:
    r = await client.post("/ui/login", data={"token": token}, follow_redirects=False)
    assert r.status_code == 303, r.text


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


@pytest.fixture
async def web(client: Any, auth: dict[str, str]) -> str:
    body = b"".join(orjson.dumps(e) + b"\n" for e in EVENTS)
    r = await client.post("/v1/ingest/web", headers={**auth, "content-type": "application/x-ndjson"}, content=body)
    assert r.status_code == 200 and r.json()["ingested"] == len(EVENTS), r.text
    for annotation in (
        {"type": "deploy", "title": "v1.2.3", "time": "2025-03-01T06:00:00Z", "url": "https://ci.example/run/1"},
        {
            "type": "incident",
            "title": "DB failover",
            "time": "2025-03-01T12:00:00Z",
            "end_time": "2025-03-01T18:00:00Z",
        },
        {"type": "deploy", "title": "other day", "time": "2025-02-27T06:00:00Z"},
        {"type": "deploy", "title": "other dataset", "time": "2025-03-01T08:00:00Z", "datasets": ["db"]},
    ):
        r = await client.post("/v1/annotations", headers=auth, json={"datasets": ["web"], **annotation})
        assert r.status_code == 201, r.text
    return "web"
