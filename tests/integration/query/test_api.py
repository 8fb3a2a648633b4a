"""POST /v1/query over HTTP: access rules, body validation, time range, row caps, status, timeout."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.db.reads import open_read_pool, read_connection
from app.query.compiler import Compiled
from app.query.parser import parse
from app.services import services_of
from app.settings import asyncpg_dsn
from tests.conftest import AppClient, TokenFactory
from tests.helpers import assert_error, captured_logs
from tests.integration.query.conftest import MANY
from tests.integration.query.helpers import column, fetch, run
from tests.integration.query.loader import load_events, load_generated

Client = AsyncTestClient[Litestar]


# ---- access -------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("web")
async def test_a_token_needs_the_query_scope(client: Client, make_token: TokenFactory) -> None:
    token = await make_token(["ingest", "datasets:read"])
    for path in ("/v1/query", "/v1/export"):
        resp = await client.post(path, json={"apl": "['web'] | count"}, headers={"Authorization": f"Bearer {token}"})
        err = assert_error(resp, 403, "insufficient_scope", type_="permission_error")
        assert "`query`" in err["message"]
    resp = await client.post("/v1/query", json={"apl": "['web'] | count"})
    assert_error(resp, 401, "missing_token")


@pytest.mark.usefixtures("web")
async def test_a_token_limited_to_datasets_reads_only_those(client: Client, make_token: TokenFactory) -> None:
    await load_events_into(client, "other")
    limited = {"Authorization": f"Bearer {await make_token(['query'], datasets=['other'])}"}
    for path in ("/v1/query", "/v1/export"):
        resp = await client.post(path, json={"apl": "['web'] | count"}, headers=limited)
        err = assert_error(resp, 403, "insufficient_scope")
        assert "'web'" in err["message"]
        # An unknown dataset outside the list is a 403 too: the token learns nothing about what exists.
        assert_error(
            await client.post(path, json={"apl": "['nope'] | count"}, headers=limited), 403, "insufficient_scope"
        )
    assert await column(client, limited, "['other'] | count") == [1]


async def load_events_into(client: Client, dataset: str) -> None:
    settings = services_of(client.app).settings
    await load_events(settings.database_url, dataset, [{"_time": datetime(2025, 1, 1, tzinfo=UTC), "a": 1}])


async def test_an_unknown_dataset_is_a_404(client: Client, auth: dict[str, str]) -> None:
    for path in ("/v1/query", "/v1/export"):
        err = assert_error(await client.post(path, json={"apl": "['nope'] | count"}, headers=auth), 404, "not_found")
        assert "'nope'" in err["message"]


async def test_a_name_that_cannot_be_a_dataset_is_an_invalid_query(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post("/v1/query", json={"apl": "['bad name!'] | count"}, headers=auth)
    err = assert_error(resp, 400, "invalid_query", param="apl")
    assert err["message"].startswith("Line 1, column 1: invalid dataset name 'bad name!'")


# ---- body validation ----------------------------------------------------------------------------------


BAD_BODIES: list[tuple[dict[str, Any], str, str]] = [
    ({}, "missing_field", "apl"),
    ({"apl": ""}, "invalid_field", "apl"),
    ({"apl": 5}, "invalid_field", "apl"),
    ({"apl": "['web']", "tak": 5}, "invalid_field", "tak"),
    ({"apl": "['web']", "take": 0}, "invalid_field", "take"),
    ({"apl": "['web']", "take": "ten"}, "invalid_field", "take"),
    ({"apl": "['web']", "start_time": "yesterday"}, "invalid_field", "start_time"),
    ({"apl": "['web']", "start_time": "2025-03-01T00:00:00"}, "invalid_field", "start_time"),
    ({"apl": "['web']", "end_time": "now-5parsecs"}, "invalid_field", "end_time"),
    ({"apl": "['web']", "start_time": "now", "end_time": "now-1h"}, "invalid_field", "start_time"),
]


@pytest.mark.usefixtures("web")
async def test_bad_bodies(client: Client, auth: dict[str, str]) -> None:
    for body, code, param in BAD_BODIES:
        assert_error(await client.post("/v1/query", json=body, headers=auth), 400, code, param=param)


async def test_the_openapi_document_describes_both_routes(client: Client) -> None:
    paths = (await client.get("/schema/openapi.json")).json()["paths"]
    assert "post" in paths["/v1/query"] and "post" in paths["/v1/export"]


async def test_not_json_is_invalid_json(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post("/v1/query", content=b"{not json", headers={**auth, "Content-Type": "application/json"})
    assert_error(resp, 400, "invalid_json")


# ---- time range and status ----------------------------------------------------------------------------


@pytest.mark.usefixtures("web")
async def test_time_range_bounds(client: Client, auth: dict[str, str]) -> None:
    count = "['web'] | count"
    assert await column(client, auth, count, start_time="2025-03-02T00:00:00Z") == [3]
    assert await column(client, auth, count, end_time="2025-03-01T10:01:00Z") == [2]
    # end is exclusive, start inclusive; offsets are honoured
    assert await column(client, auth, count, end_time="2025-03-01T10:00:30Z") == [1]
    assert await column(
        client, auth, count, start_time="2025-03-01T11:00:30+01:00", end_time="2025-03-01T10:01:10Z"
    ) == [1]
    _, rows, status = await run(
        client, auth, "['web'] | project msg", start_time="2025-03-01T10:00:10Z", end_time="2025-03-02T09:40:00Z"
    )
    assert status["min_time"] == "2025-03-01T10:00:30.000Z"
    assert status["max_time"] == "2025-03-02T09:30:00.000Z"
    assert status["rows_returned"] == len(rows) == 6
    assert status["rows_examined"] is None
    assert status["truncated"] is False
    assert isinstance(status["elapsed_ms"], float) and status["elapsed_ms"] > 0


async def test_relative_times_and_the_default_end_of_now(client: Client, auth: dict[str, str]) -> None:
    now = datetime.now(UTC)
    settings = services_of(client.app).settings
    await load_events(
        settings.database_url,
        "recent",
        [
            {"_time": now - timedelta(minutes=10), "when": "recent"},
            {"_time": now - timedelta(days=2), "when": "old"},
            {"_time": now + timedelta(hours=1), "when": "future"},
        ],
    )
    apl = "['recent'] | sort by _time asc | project when"
    assert await column(client, auth, apl) == ["old", "recent"]  # by default the range ends now
    assert await column(client, auth, apl, start_time="now-1h") == ["recent"]
    assert await column(client, auth, apl, start_time="now-1h", end_time="now+2h") == ["recent", "future"]
    assert await column(client, auth, apl, start_time="now - 3d", end_time="now-1d") == ["old"]
    assert await column(client, auth, "['recent'] | where _time > ago(1h) | project when") == ["recent"]
    _, _, status = await run(client, auth, apl, start_time="now-1h")
    assert status["min_time"] == status["max_time"]


@pytest.mark.usefixtures("web")
async def test_an_empty_range_has_no_times(client: Client, auth: dict[str, str]) -> None:
    columns, rows, status = await run(client, auth, "['web']", end_time="2020-01-01T00:00:00Z")
    assert columns == [{"name": "_time", "type": "datetime"}] and rows == []
    assert status["min_time"] is None and status["max_time"] is None


async def test_the_dataset_and_time_range_prune_partitions_and_use_the_index(database_url: str, web: str) -> None:
    compiled = Compiled(
        parse("['web'] | where status >= 500 | count"),
        now=datetime.now(UTC),
        start=datetime(2025, 3, 2, tzinfo=UTC),
        end=datetime(2025, 3, 3, tzinfo=UTC),
    )
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        dataset_id = await conn.fetchval("SELECT id FROM datasets WHERE name = 'web'")
        statement = compiled.statement(dataset_id, limit=1001, newest_first=True)
        await conn.execute("SET enable_seqscan = off")  # tiny tables: make the planner show it can use the index
        plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + statement.sql, *statement.args))
        assert "events_p20250302" in plan
        assert "events_p20250301" not in plan  # pruned: outside the time range
        assert "dataset_id_time_idx" in plan
        # a `where _time` literal prunes as well
        compiled = Compiled(
            parse("['web'] | where _time < datetime(2025-03-02) | count"), now=datetime.now(UTC), start=None,
            end=datetime.now(UTC),
        )  # fmt: skip
        statement = compiled.statement(dataset_id, limit=1001, newest_first=True)
        plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + statement.sql, *statement.args))
        assert "events_p20250301" in plan and "events_p20250302" not in plan
    finally:
        await conn.close()


# ---- row caps -----------------------------------------------------------------------------------------


# (query, take in the body, rows returned, truncated)
ROW_CAPS: list[tuple[str, int | None, int, bool]] = [
    ("['many']", None, 1000, True),  # neither take: 1,000
    ("['many']", 10, 10, True),  # the body's take
    ("['many'] | take 5", None, 5, False),  # the query's own take is not truncation
    ("['many'] | take 5", 3, 3, True),  # the smaller of the two
    ("['many'] | take 5", 10, 5, False),
    ("['many'] | take 1100", None, 1100, False),  # a query take lifts the default
    ("['many'] | top 1100 by n", None, 1100, False),
    ("['many']", 5000, MANY, False),  # everything fits
    ("['many'] | take 1100 | where n >= 0", None, 1000, True),  # a take midway is not the result's cap
    ("['many'] | summarize count() by bin(_time, 1s)", None, 1000, True),  # aggregates are capped too
    ("['many'] | summarize count() by service", None, 4, False),
]


@pytest.mark.usefixtures("many")
async def test_row_cap_rules(client: Client, auth: dict[str, str]) -> None:
    wrong = []
    for apl, take, rows, truncated in ROW_CAPS:
        body = {} if take is None else {"take": take}
        _, got, status = await run(client, auth, apl, **body)
        if not (len(got) == rows == status["rows_returned"] and status["truncated"] is truncated):
            wrong.append(f"{apl} take={take}: {len(got)} rows, truncated={status['truncated']}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.usefixtures("many")
async def test_the_server_maximum_caps_everything(app_client: AppClient, auth: dict[str, str]) -> None:
    async with app_client(query_max_rows=50) as client:
        for apl, body in (("['many'] | take 100", {}), ("['many']", {"take": 100}), ("['many']", {})):
            _, rows, status = await run(client, auth, apl, **body)
            assert len(rows) == 50 and status["truncated"] is True, (apl, body)
        _, rows, status = await run(client, auth, "['many'] | take 20")
        assert len(rows) == 20 and status["truncated"] is False


@pytest.mark.usefixtures("many")
async def test_events_come_newest_first_unless_sorted(client: Client, auth: dict[str, str]) -> None:
    assert await column(client, auth, "['many'] | project n | take 3") == [1204, 1203, 1202]
    assert await column(client, auth, "['many'] | sort by n asc | project n | take 3") == [0, 1, 2]


# ---- the read pool ------------------------------------------------------------------------------------


async def test_queries_run_on_sessions_that_cannot_write(database_url: str) -> None:
    """Every statement is compiled from bind parameters, and the sessions it runs on are read-only besides."""
    pool = await open_read_pool(database_url)
    async with read_connection(pool) as conn:
        assert await conn.fetchval("SHOW default_transaction_read_only") == "on"
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
            await conn.execute("DELETE FROM events")
        async with conn.transaction():  # as an export's cursor runs
            with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
                await conn.execute("INSERT INTO datasets (name) VALUES ('sneaky')")
    await pool.close()


# ---- timeout ------------------------------------------------------------------------------------------


async def _app_sessions(database_url: str) -> list[dict[str, Any]]:
    """The app's database sessions: their state and the tables they hold locks on."""
    rows = await fetch(
        database_url,
        "SELECT a.pid, a.application_name, a.state, a.query,"
        " array_remove(array_agg(l.relation::regclass::text), NULL) AS locks"
        " FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND l.relation IS NOT NULL"
        " WHERE a.datname = current_database() AND a.application_name LIKE 'beacon%'"
        " GROUP BY a.pid, a.application_name, a.state, a.query",
    )
    return [dict(r) for r in rows]


async def test_a_query_over_the_statement_timeout_is_a_400(
    app_client: AppClient, auth: dict[str, str], database_url: str
) -> None:
    # 100,000 events: no plan reads them all in 1 ms.
    await load_generated(database_url, "slow", 100_000, datetime(2025, 5, 1, tzinfo=UTC), step_ms=10)
    slow = "['slow'] | summarize dcount(tostring(msg)) by bin(_time, 1s), service | count"
    with captured_logs("asyncio") as logs:
        async with app_client(query_timeout_seconds=0.001) as client:
            for path in ["/v1/query"] * 10 + ["/v1/export"] * 3:
                err = assert_error(await client.post(path, json={"apl": slow}, headers=auth), 400, "query_timeout")
                assert "0.001 s statement timeout" in err["message"]
                # Every statement was ended, and every transaction: no session of the app is left inside one (an
                # unfinished statement, `active`, holds locks on events and datasets until its session is used
                # again: retention could not drop a partition meanwhile).
                sessions = await _app_sessions(database_url)
                assert sessions and all(s["state"] == "idle" and not s["locks"] for s in sessions), (path, sessions)
        gc.collect()  # a task whose exception nobody took is reported when it is collected
    assert not [line for line in logs if "never retrieved" in line], logs
    async with app_client() as client:  # the 30 s default lets it finish
        assert await column(client, auth, slow) == [4000]


async def test_integers_beyond_64_bits_stay_exact(client: Client, auth: dict[str, str]) -> None:
    # Ingest stores them exactly; a query or an export must not turn them into floats (or fail on them).
    big, negative = 2**70 + 1, -(2**65) - 3
    line = json.dumps({"_time": (datetime.now(UTC) - timedelta(hours=1)).isoformat(), "big": big, "neg": negative})
    resp = await client.post(
        "/v1/ingest/bignums", content=line + "\n", headers={**auth, "Content-Type": "application/x-ndjson"}
    )
    assert resp.status_code == 200, resp.text
    for apl in ("['bignums']", "['bignums'] | project big, neg", "['bignums'] | extend b = big | project b, neg"):
        columns, rows, _ = await run(client, auth, apl)  # the body is parsed by Python's json: exact integers
        values = dict(zip([c["name"] for c in columns], rows[0], strict=True))
        assert (values.get("big", values.get("b")), values["neg"]) == (big, negative), apl
        exported = await client.post("/v1/export", json={"apl": apl}, headers=auth)
        assert exported.status_code == 200, exported.text
        (event,) = [json.loads(line) for line in exported.text.splitlines()]
        assert (event.get("big", event.get("b")), event["neg"]) == (big, negative), apl
