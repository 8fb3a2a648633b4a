"""Hostile query text and time bounds are 400s, never 500s, in /v1/query, /v1/export and monitors alike: other
scripts' digits, numbers and timespans beyond every range, times before the year 1 or after 9999, and queries
that fail on the data at run time (a value out of range on some row, a regular expression PostgreSQL refuses)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.helpers import assert_error
from tests.integration.query.helpers import run
from tests.integration.query.loader import load_events

pytestmark = pytest.mark.usefixtures("web")
Client = AsyncTestClient[Litestar]

# Query text that does not parse or type-check: 400 invalid_query naming the problem.
BAD_TEXT = [
    ("\u00b9", "unexpected character '¹'"),  # str.isdigit() accepted superscripts; int() did not
    ("['web'] | take \u00b2", "unexpected character"),
    ("['web'] | take 1\u00b2", "unexpected character"),
    ("['web'] | where status > \u0661", "unexpected character"),  # an Arabic-Indic one, which int() reads as 1
    ("['web'] | take 99999999999999999999", "out of range"),
    ("['web'] | take " + "9" * 5000, "out of range"),  # int() refuses more than 4,300 digits
    ("['web'] | where status == " + "9" * 25, "out of range"),
    ("['web'] | extend x = 1000000000d", "out of range (at most 999,999,999 days)"),
    ("['web'] | extend x = 100000000000d", "out of range"),
    ("['web'] | extend x = 1e9d", "out of range"),
    ("['web'] | extend x = " + "9" * 5000 + "us", "out of range"),
    ("['web'] | where _time > ago(999999999d)", "ago() is out of range"),
    # PostgreSQL 15 and 16 refuse it differently (and 16 wrongly: "stride must be greater than zero").
    ("['web'] | summarize count() by bin(_time, 999999999d)", "at most 3,652,500d"),
    ("['web'] | summarize count() by bin(_time, 3652501d)", "at most 3,652,500d"),
    ("['web'] | where _time > ago(-999999999d)", "ago() is out of range"),
    ("['web'] | where _time > datetime(0001-01-01T00:00:00+05:00)", "out of range (years 1 to 9999 in UTC)"),
    ("['web'] | where _time < datetime(9999-12-31T23:59:59-05:00)", "out of range"),
    ("['web'] | summarize count() by bin(_time, 0s)", "positive timespan"),
    ("['web'] | summarize percentile(duration_ms, 101)", "from 0 to 100"),
    ("['web'] | where msg has '" + "a" * 1001 + "'", "a term of at most 1,000 characters"),
]
# Bounds of the range in the body: 400 invalid_field naming the field.
BAD_BOUNDS: list[dict[str, Any]] = [
    {"start_time": "now-100000000d"},
    {"start_time": "now-" + "9" * 400 + "d"},
    {"end_time": "now+100000000d"},
    {"start_time": "0001-01-01T00:00:00+05:00"},
    {"end_time": "9999-12-31T23:59:59-05:00"},
    {"start_time": "now-\u0661h"},
]
# Valid queries that fail at run time on the data: 400 invalid_query with the reason.
ON_THE_DATA = [
    ("['web'] | extend x = datetime(9999-12-31) + 10d", "datetime or timespan in the result is out of range"),
    ("['web'] | extend x = _time - 999999d", "datetime or timespan in the result is out of range"),
    ("['web'] | extend x = 999999999d * 2", "datetime or timespan in the result is out of range"),
    ("['web'] | extend x = _time + 900000000d", "timestamp out of range"),
    ("['web'] | extend x = todouble(status) * 1e308 * 10", "value out of range"),
    ("['web'] | extend x = toint(status) + 9223372036854775807", "bigint out of range"),
    ("['web'] | where msg matches regex '('", "invalid regular expression"),
    ("['web'] | project " + ", ".join(f"a{i} = {i}" for i in range(1700)), "too large for the database"),
]
# Conversions and arithmetic that give null rather than an error.
NULL_NOT_ERROR = [
    "toint('" + "1" * 400 + "')",  # matched the number pattern, then overflowed float8
    "todouble('" + "1" * 400 + "')",
    "todouble('0." + "0" * 400 + "1')",  # underflowed to zero: also an error of the cast
    "toint(' 12\u2003')",  # `\s` matched the em space, which the cast refuses
    "todouble('1.5\u2003')",
    "1 / 0",
    "toint(status) % 0",
    "1d / 0",
]


async def test_bad_query_text_is_an_invalid_query(client: Client, auth: dict[str, str]) -> None:
    for apl, words in BAD_TEXT:
        for path in ("/v1/query", "/v1/export"):
            err = assert_error(await client.post(path, json={"apl": apl}, headers=auth), 400, "invalid_query")
            assert words in err["message"] and err["message"].startswith("Line 1, column "), (path, apl, err)
        monitor = {"name": "m", "type": "threshold", "apl": apl + " | summarize count()", "operator": "above",
                   "threshold": 1, "notifier_ids": []}  # fmt: skip
        err = assert_error(await client.post("/v1/monitors", json=monitor, headers=auth), 400, "invalid_query")
        assert words in err["message"], (apl, err)


async def test_bad_bounds_are_an_invalid_field(client: Client, auth: dict[str, str]) -> None:
    for bounds in BAD_BOUNDS:
        (param,) = bounds
        for path in ("/v1/query", "/v1/export"):
            resp = await client.post(path, json={"apl": "['web']", **bounds}, headers=auth)
            err = assert_error(resp, 400, "invalid_field", param=param)
            assert "years 1 to 9999" in err["message"] or "RFC 3339" in err["message"], (bounds, err)


async def test_a_query_that_fails_on_the_data_is_a_400(client: Client, auth: dict[str, str]) -> None:
    for apl, words in ON_THE_DATA:
        for path in ("/v1/query", "/v1/export"):
            err = assert_error(await client.post(path, json={"apl": apl}, headers=auth), 400, "invalid_query")
            assert words in err["message"], (path, apl, err)
            assert len(err["message"]) < 500


async def test_out_of_range_conversions_are_null(client: Client, auth: dict[str, str]) -> None:
    for expr in NULL_NOT_ERROR:
        _, rows, _ = await run(client, auth, f"['web'] | take 1 | project x = {expr}")
        assert rows == [[None]], expr


async def test_monitor_evaluations_report_such_failures(
    client: Client, auth: dict[str, str], database_url: str
) -> None:
    now = datetime.now(UTC)
    await load_events(database_url, "recent", [{"_time": now - timedelta(seconds=30), "n": 5, "msg": "x"}])
    for apl, words in [
        ("['recent'] | summarize count() by bin(_time + 3000000d, 1d)", "out of range"),
        ("['recent'] | summarize sum(toint(n) * 9223372036854775807)", "bigint out of range"),
        ("['recent'] | where msg matches regex '(' | summarize count()", "invalid regular expression"),
    ]:
        monitor = {"name": "m", "type": "threshold", "apl": apl, "operator": "above", "threshold": 1,
                   "notifier_ids": [], "range_seconds": 600}  # fmt: skip
        created = await client.post("/v1/monitors", json=monitor, headers=auth)
        assert created.status_code == 201, created.text
        mid = created.json()["id"]
        for dry_run in (True, False):
            resp = await client.post(f"/v1/monitors/{mid}/evaluate", json={"dry_run": dry_run}, headers=auth)
            assert resp.status_code == 200, (apl, resp.text)
            assert resp.json()["state"] == "error" and words in resp.json()["error"], (apl, resp.json())


async def test_the_widest_bin_allowed_runs_on_every_postgresql(client: Client, auth: dict[str, str]) -> None:
    """10,000 years: every event in one bin, on PostgreSQL 15 and 16 alike (date_bin refuses wider strides with
    messages that differ by version)."""
    _, rows, _ = await run(client, auth, "['web'] | summarize n = count() by bin(_time, 3652500d)")
    assert len(rows) == 1 and rows[0][1] > 0, rows
