"""sum() of event fields: exact, and whole when the values are (issue 18)."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.services import services_of
from tests.integration.query.helpers import column, run
from tests.integration.query.loader import load_events

Client = AsyncTestClient[Litestar]


async def test_a_sum_of_whole_json_numbers_is_a_whole_number(client: Client, auth: dict[str, str]) -> None:
    """Issue 18: sum() of an integer field answered 5020686274.0 (a real). Summed exactly, as jsonb holds them:
    whole numbers give a `long` (beyond 2**53 too), fractions a `real` without binary noise."""
    events = [
        {"_time": datetime(2025, 5, 1, tzinfo=UTC), "bytes": 2**53 + 1, "share": 0.1, "kind": "a"},
        {"_time": datetime(2025, 5, 1, 0, 1, tzinfo=UTC), "bytes": 5020686273, "share": 0.2, "kind": "a"},
        {"_time": datetime(2025, 5, 1, 0, 2, tzinfo=UTC), "bytes": "12", "share": None, "kind": "b"},
    ]
    await load_events(services_of(client.app).settings.database_url, "sums", events)
    columns, rows, _ = await run(client, auth, "['sums'] | summarize sum(bytes), sum(share), n = count() by kind")
    assert [c["type"] for c in columns] == ["string", "long", "real", "long"]
    assert rows == [["a", 2**53 + 1 + 5020686273, 0.3, 2], ["b", None, None, 1]]
    # The sum reads as a number after summarize, and a monitor-style comparison still works on it.
    assert await column(client, auth, "['sums'] | summarize s = sum(bytes) | extend s2 = s * 2 | project s2") == [
        float((2**53 + 1 + 5020686273) * 2)
    ]
    assert await column(client, auth, "['sums'] | summarize s = sum(bytes) by kind | where s > 10 | project kind") == [
        "a"
    ]
