"""Injection attempts through every literal and field-name form: the text always arrives as data, never as
SQL (or jsonpath, or JSON), and nothing in the database changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import orjson
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.query.compiler import Compiled
from app.query.parser import parse
from app.settings import asyncpg_dsn
from tests.helpers import assert_error
from tests.integration.query.helpers import column, rows_of, run
from tests.integration.query.loader import load_events

Client = AsyncTestClient[Litestar]

PAYLOADS = [
    "'; DROP TABLE events; --",
    '"; DROP TABLE datasets; --',
    "') OR 1=1 --",
    "' OR '1'='1",
    "$1",
    "$$; DELETE FROM datasets; $$",
    "\\'; SELECT pg_sleep(5); --",
    "x' || (SELECT current_user) || '",
    "%",
    "_",
    "\\",
    "]}'\"",
    '" || @ == @ || "',  # jsonpath: would widen a comparison if it escaped its string
    'a" == 1 || $."b',
    "$.a ? (@ > 0)",
    '{"status": 500}',
    "𝔘nicode ✓ ' \"",
    "line\nbreak\ttab",
    "null",
    "*/ /*",
]
BASE = datetime(2025, 7, 1, tzinfo=UTC)


def lit(text: str) -> str:
    """`text` as a double-quoted string literal of the language."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def name(text: str) -> str:
    """`text` as a bracketed field name."""
    return f"[{lit(text)}]"


@pytest.fixture
async def inj(database_url: str) -> list[dict[str, Any]]:
    """One event per payload: the payload as a string value (`s`) and as a field name (holding i + 10)."""
    events = [{"_time": BASE + timedelta(minutes=i), "n": i, "s": p, p: i + 10} for i, p in enumerate(PAYLOADS)]
    await load_events(database_url, "inj", events)
    return events


async def _database_unharmed(database_url: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        assert await conn.fetchval("SELECT count(*) FROM events") == len(PAYLOADS)
        assert await conn.fetchval("SELECT array_agg(name) FROM datasets") == ["inj"]
    finally:
        await conn.close()


async def test_string_literals_are_data(
    client: Client, auth: dict[str, str], inj: list[dict[str, Any]], database_url: str
) -> None:
    for i in range(len(PAYLOADS)):
        await _string_literal(client, auth, i)
    await _database_unharmed(database_url)


async def _string_literal(client: Client, auth: dict[str, str], i: int) -> None:
    p, n = PAYLOADS[i], len(PAYLOADS)

    def q(op: str) -> str:
        return f"['inj'] | where s {op} {lit(p)} | count"

    assert await column(client, auth, f"['inj'] | where s == {lit(p)} | project n") == [i]
    assert await column(client, auth, q("!=")) == [n - 1]
    assert await column(client, auth, q("=~")) == [sum(s.lower() == p.lower() for s in PAYLOADS)]
    assert await column(client, auth, f"['inj'] | where s in ({lit(p)}, 'zz') | count") == [1]
    assert await column(client, auth, f"['inj'] | where s !in ({lit(p)}) | count") == [n - 1]
    assert await column(client, auth, q("contains")) == [sum(p.lower() in s.lower() for s in PAYLOADS)]
    assert await column(client, auth, q("contains_cs")) == [sum(p in s for s in PAYLOADS)]
    assert await column(client, auth, q("startswith")) == [sum(s.lower().startswith(p.lower()) for s in PAYLOADS)]
    assert await column(client, auth, q("endswith_cs")) == [sum(s.endswith(p) for s in PAYLOADS)]
    assert (await column(client, auth, q(">=")))[0] >= 1  # order depends on the collation; itself is >=
    assert (await column(client, auth, q("has")))[0] >= 0
    assert await column(client, auth, f"['inj'] | where s between ({lit(p)} .. {lit(p)}) | count") == [1]
    assert await column(client, auth, f"['inj'] | where tostring(s) == {lit(p)} | count") == [1]
    assert await column(client, auth, f"['inj'] | summarize countif(s == {lit(p)})") == [1]
    # the literal comes back exactly as sent
    assert await column(client, auth, f"['inj'] | take 1 | extend x = {lit(p)} | project x") == [p]
    assert await column(client, auth, f"['inj'] | take 1 | project iff(true, {lit(p)}, '')") == [p]
    resp = await client.post(
        "/v1/query", json={"apl": f"['inj'] | where s matches regex {lit(p)} | count"}, headers=auth
    )
    assert resp.status_code in (200, 400), resp.text  # some payloads are not valid regular expressions


async def test_field_names_are_data(
    client: Client, auth: dict[str, str], inj: list[dict[str, Any]], database_url: str
) -> None:
    for i in range(len(PAYLOADS)):
        await _field_name(client, auth, i)
    await _database_unharmed(database_url)


async def _field_name(client: Client, auth: dict[str, str], i: int) -> None:
    p, f = PAYLOADS[i], name(PAYLOADS[i])
    # equality (JSONB containment) and order (jsonpath) both find exactly the event holding that field
    assert await column(client, auth, f"['inj'] | where {f} == {i + 10} | project n") == [i]
    assert await column(client, auth, f"['inj'] | where {f} > {i + 9} and {f} < {i + 11} | project n") == [i]
    assert await column(client, auth, f"['inj'] | where {f} between ({i + 10} .. {i + 10}) | project n") == [i]
    assert await column(client, auth, f"['inj'] | where isnotnull({f}) | project n") == [i]
    assert await column(client, auth, f"['inj'] | where {f} in ({i + 10}) | project n") == [i]
    assert await column(client, auth, f"['inj'] | where {f} contains '{i + 10}' | project n") == [i]
    # names of columns
    columns, rows, _ = await run(client, auth, f"['inj'] | where n == {i} | project {f}")
    assert columns == [{"name": p, "type": "long"}] and rows == [[i + 10]]
    columns, rows, _ = await run(client, auth, f"['inj'] | where n == {i} | extend {f} = s | project {f}")
    assert columns == [{"name": p, "type": "string"}] and rows == [[p]]
    columns, rows, _ = await run(client, auth, f"['inj'] | summarize {f} = count() by s | where s == {lit(p)}")
    assert [c["name"] for c in columns] == ["s", p] and rows == [[p, 1]]
    assert await rows_of(client, auth, f"['inj'] | summarize count() by {f} | where isnotnull({f})") == [[i + 10, 1]]
    assert await rows_of(client, auth, f"['inj'] | distinct {f} | where isnotnull({f})") == [[i + 10]]
    assert await column(client, auth, f"['inj'] | top 1 by {f} | project n") == [i]  # the others lack it
    assert await column(client, auth, f"['inj'] | summarize sum({f})") == [float(i + 10)]
    columns, _, _ = await run(client, auth, f"['inj'] | where n == {i} | project-away {f}")
    assert p not in [c["name"] for c in columns] and "s" in [c["name"] for c in columns]
    resp = await client.post("/v1/export", json={"apl": f"['inj'] | where {f} == {i + 10} | project {f}"}, headers=auth)
    assert resp.status_code == 200 and resp.json() == {p: i + 10}


async def test_other_places_reject_the_text(client: Client, auth: dict[str, str], inj: list[Any]) -> None:
    for p in PAYLOADS:
        await _rejected(client, auth, p)


async def _rejected(client: Client, auth: dict[str, str], p: str) -> None:
    resp = await client.post("/v1/query", json={"apl": f"[{lit(p)}] | count"}, headers=auth)
    if p == "null":  # a well-formed dataset name that does not exist
        assert_error(resp, 404, "not_found")
    else:
        assert_error(resp, 400, "invalid_query", param="apl")
    for apl in (f"['inj'] | where _time > datetime({p}) | count", f"['inj'] | take {p}"):
        resp = await client.post("/v1/query", json={"apl": apl}, headers=auth)
        assert_error(resp, 400, "invalid_query", param="apl")
    for field in ("start_time", "end_time"):
        resp = await client.post("/v1/query", json={"apl": "['inj'] | count", field: p}, headers=auth)
        assert_error(resp, 400, "invalid_field", param=field)


QUERY_FORMS = [
    "['inj'] | where s == {lit}",
    "['inj'] | where s != {lit} and s > {lit}",
    "['inj'] | where s in ({lit}, {lit}) or s contains {lit} or s startswith {lit} or s endswith {lit}",
    "['inj'] | where s has {lit} or s matches regex {lit} or s =~ {lit} or s between ({lit} .. {lit})",
    "['inj'] | where {name} == 1 or {name} > 2 or isnull({name}) or {name} in (1, 2)",
    "['inj'] | extend {name} = {lit} | project {name}, x = {lit}",
    "['inj'] | summarize {name} = countif(s == {lit}) by s | sort by {name}",
    "['inj'] | distinct {name}, s | project-away {name}",
]


@pytest.mark.parametrize("form", QUERY_FORMS)
def test_the_sql_text_does_not_depend_on_names_or_literals(form: str) -> None:
    """Compiled with each payload, a query form gives the same SQL text as with a harmless word: every name
    and literal travels only as a bind parameter. (A string that reads like JSON object text compares by
    containment rather than as text, so its reference is a harmless word in braces.)"""
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def sql_for(text: str) -> tuple[str, list[Any]]:
        query = parse(form.format(lit=lit(text), name=name(text)))
        statement = Compiled(query, now=now, start=None, end=now).statement(1, limit=10, newest_first=True)
        return statement.sql, statement.args

    references = {shape: sql_for(shape)[0] for shape in ("harmless", "{harmless}")}
    for p in PAYLOADS:
        sql, args = sql_for(p)
        assert sql == references["{harmless}" if p.startswith("{") else "harmless"], p
        as_json = orjson.dumps(p).decode()[1:-1]  # inside JSONB or jsonpath parameters
        assert any(p in str(a) or as_json in str(a) for a in args), p
