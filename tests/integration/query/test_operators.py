"""The compiler against real PostgreSQL: every operator and function on a small fixed dataset (conftest.py),
compared with answers worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.helpers import assert_error
from tests.integration.query.helpers import column, rows_of, run

Client = AsyncTestClient[Litestar]
pytestmark = pytest.mark.usefixtures("web")

# The msg of each event in tests/integration/query/conftest.py, to name events in expectations.
E1, E2, E3, E4 = "user list ok", "order failed: Timeout", "upstream timeout", "ok"
E5, E6, E7, E8 = "not found", "job 50% done_now", "heartbeat", "user list ok (later)"


async def msgs(client: Client, auth: dict[str, str], predicate: str) -> list[str]:
    """The msg of every event matching `predicate`, in time order (E8 is told apart from E1 by its time)."""
    rows = await rows_of(client, auth, f"['web'] | where {predicate} | sort by _time asc | project _time, msg")
    return [E8 if r[0].startswith("2025-03-02T09:45") else r[1] for r in rows]


# (predicate, the events it matches): one test runs them all, as each test costs a fresh database.
WHERE_CASES: list[tuple[str, list[str]]] = [
    # typed comparisons: a number never equals a string, a missing field matches nothing
    ("status == 500", [E2]),
    ('status == "500"', [E6]),
    ('status != "500"', [E1, E2, E3, E4, E5, E7, E8]),
    ('tags == \'["a", "b"]\'', []),  # the array's text is not a string value
    ("status >= 500", [E2, E3]),
    ("status < 300", [E1, E4, E8]),
    ("500 <= status", [E2, E3]),
    ("status != 200", [E2, E3, E5, E6, E7]),
    ("not (status == 200)", [E2, E3, E5, E6, E7]),
    ("not (status > 300)", [E1, E4, E6, E7, E8]),
    ("duration_ms > 100", [E2, E3]),
    ("duration_ms >= 100.0", [E2, E3, E6]),
    ("duration_ms == 250", [E2]),  # 250.0 in the event
    ('duration_ms == "fast"', [E8]),
    ('service > "v"', [E4, E5, E6, E7]),
    ("isnull(duration_ms)", [E7]),  # a JSON null
    ("isnull(status)", [E7]),  # missing
    ("isnotnull(tags)", [E7]),
    ("isempty(method)", [E6, E7]),
    ("isnotempty(['http.path'])", [E1, E2, E3, E4, E5, E8]),
    ("status in (404, 503)", [E3, E5]),
    ('status in ("500", 200)', [E1, E4, E6, E8]),
    ('service !in ("api", "web")', [E6, E7]),
    ("duration_ms between (5 .. 100)", [E1, E4, E6]),
    ("duration_ms !between (5 .. 100)", [E2, E3, E5, E7, E8]),
    # string operators: case-insensitive unless _cs; negations include events lacking the field
    ('msg contains "TIMEOUT"', [E2, E3]),
    ('msg contains_cs "Timeout"', [E2]),
    ('msg !contains "timeout"', [E1, E4, E5, E6, E7, E8]),
    ('msg startswith "USER"', [E1, E8]),
    ('msg startswith_cs "USER"', []),
    ('msg endswith "OK"', [E1, E4, E8]),
    ('msg !endswith "ok"', [E2, E3, E5, E6, E7]),
    ('msg has "timeout"', [E2, E3]),
    ('msg has "time"', []),  # a whole term only
    ('msg has "done_now"', [E6]),
    ('msg has_cs "Timeout"', [E2]),
    ('msg !has "list"', [E2, E3, E4, E5, E6, E7]),
    ('msg matches regex "^(order|upstream) "', [E2, E3]),
    ('msg =~ "OK"', [E4]),
    ('method !~ "get"', [E2, E3, E6, E7]),
    ('status contains "50"', [E2, E3, E6]),  # any scalar's text
    # names
    ('http.path == "/api/orders"', [E2, E3]),
    ("['http.path'] startswith \"/api\"", [E1, E2, E3, E8]),
    ("['http'].path == \"/missing\"", [E5]),
    ("user.id == 7", [E7]),
    ("['user.id'] > 6 and service == 'worker'", [E7]),
    # time
    ("_time >= datetime(2025-03-02)", [E6, E7, E8]),
    ("_time between (datetime(2025-03-01T10:00:30Z) .. datetime(2025-03-01T10:02:00Z))", [E2, E3, E4]),
    ("_time < now() and _time > ago(36500d)", [E1, E2, E3, E4, E5, E6, E7, E8]),
    ("_time - datetime(2025-03-01T10:00:00Z) < 1m", [E1, E2]),
    ("_time + 1d >= datetime(2025-03-02T10:02:00Z)", [E4, E5, E6, E7, E8]),
    ("_sysTime > _time", [E1, E2, E3, E4, E5, E6, E7, E8]),
    # logic and arithmetic
    ('service == "api" and (status >= 500 or duration_ms < 20)', [E1, E2, E3]),
    ("duration_ms * 2 > 1000", [E3]),
    ("duration_ms / 0 > 1 or isnull(duration_ms / 0)", [E1, E2, E3, E4, E5, E6, E7, E8]),
    ("toint(status) % 100 == 3", [E3]),
    ("-duration_ms < -500", [E3]),
    ("iff(status >= 500, 'bad', 'good') == 'bad'", [E2, E3]),
]


async def test_where(client: Client, auth: dict[str, str]) -> None:
    wrong = []
    for predicate, expected in WHERE_CASES:
        got = await msgs(client, auth, predicate)
        if got != expected:
            wrong.append(f"{predicate}: got {got}, expected {expected}")
    assert not wrong, "\n".join(wrong)


async def test_where_on_a_dynamic_boolean_field_is_typed(client: Client, auth: dict[str, str]) -> None:
    # `service` holds strings: as a condition it is never true, and never an error
    assert await msgs(client, auth, "service") == []


async def test_extend_and_project(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(
        client,
        auth,
        "['web'] | extend d2 = duration_ms * 2 | where d2 > 400 | sort by d2 asc | project service, d2",
    )
    assert columns == [{"name": "service", "type": "string"}, {"name": "d2", "type": "real"}]
    assert rows == [["api", 500.0], ["api", 1800.0]]

    columns, rows, _ = await run(client, auth, "['web'] | extend a = 1, b = a + 1 | project a, b | take 1")
    assert columns == [{"name": "a", "type": "long"}, {"name": "b", "type": "long"}]
    assert rows == [[1, 2]]

    columns, rows, _ = await run(
        client,
        auth,
        "['web'] | where status == 404 | project service, ['http.path'], code = status, tostring(status), _time + 1h",
    )
    assert [c["name"] for c in columns] == ["service", "http.path", "code", "Column1", "Column2"]
    assert rows == [["web", "/missing", 404, "404", "2025-03-01T11:02:59.250Z"]]


async def test_events_without_project_have_every_field(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(client, auth, "['web'] | where service == 'worker'")
    assert columns == [
        {"name": "_time", "type": "datetime"},
        {"name": "duration_ms", "type": "long"},  # 100 and a JSON null
        {"name": "msg", "type": "string"},
        {"name": "service", "type": "string"},
        {"name": "status", "type": "string"},
        {"name": "tags", "type": "dynamic"},
        {"name": "user.id", "type": "long"},
    ]
    assert rows == [  # newest first
        ["2025-03-02T09:30:00.000Z", None, E7, "worker", None, ["a", "b"], 7],
        ["2025-03-02T09:00:00.000Z", 100, E6, "worker", "500", None, None],
    ]


async def test_extend_on_events_adds_a_column_and_overrides_a_field(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(
        client, auth, "['web'] | where status == 404 | extend status = tostring(status), slow = duration_ms > 100"
    )
    names = [c["name"] for c in columns]
    assert names == ["_time", "duration_ms", "http.path", "method", "msg", "service", "status", "slow"]
    assert rows[0][names.index("status")] == "404"
    assert rows[0][names.index("slow")] is False
    assert columns[names.index("slow")]["type"] == "bool"


async def test_project_away(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(
        client, auth, "['web'] | project-away msg, tags, ['user.id'] | where service == 'worker'"
    )
    assert [c["name"] for c in columns] == ["_time", "duration_ms", "service", "status"]
    assert rows == [
        ["2025-03-02T09:30:00.000Z", None, "worker", None],
        ["2025-03-02T09:00:00.000Z", 100, "worker", "500"],
    ]
    columns, rows, _ = await run(client, auth, "['web'] | take 1 | project a = 1, b = 'x' | project-away a")
    assert columns == [{"name": "b", "type": "string"}] and rows == [["x"]]


async def test_summarize_by(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(client, auth, "['web'] | summarize n = count() by service | sort by service asc")
    assert columns == [{"name": "service", "type": "string"}, {"name": "n", "type": "long"}]
    assert rows == [["api", 4], ["web", 2], ["worker", 2]]

    columns, rows, _ = await run(client, auth, "['web'] | summarize count() by bin(_time, 1d) | sort by _time asc")
    assert columns == [{"name": "_time", "type": "datetime"}, {"name": "count_", "type": "long"}]
    assert rows == [["2025-03-01T00:00:00.000Z", 5], ["2025-03-02T00:00:00.000Z", 3]]

    rows = await rows_of(client, auth, "['web'] | summarize count() by bin(_time, 1m) | sort by _time asc | take 3")
    assert rows == [["2025-03-01T10:00:00.000Z", 2], ["2025-03-01T10:01:00.000Z", 1], ["2025-03-01T10:02:00.000Z", 2]]

    rows = await rows_of(client, auth, "['web'] | summarize c = count() by b = bin(duration_ms, 100) | sort by b asc")
    assert rows == [[None, 2], [0.0, 3], [100.0, 1], [200.0, 1], [900.0, 1]]


async def test_every_aggregation(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(
        client,
        auth,
        "['web'] | summarize count(), countif(status >= 500), sum(duration_ms), avg(duration_ms), "
        "min(duration_ms), max(duration_ms), dcount(service), percentile(duration_ms, 50), make_set(method), "
        "min(_time), max(tostring(msg)), sum(toint(status))",
    )
    assert columns == [
        {"name": "count_", "type": "long"},
        {"name": "countif_", "type": "long"},
        {"name": "sum_duration_ms", "type": "real"},
        {"name": "avg_duration_ms", "type": "real"},
        {"name": "min_duration_ms", "type": "real"},
        {"name": "max_duration_ms", "type": "real"},
        {"name": "dcount_service", "type": "long"},
        {"name": "percentile_duration_ms_50", "type": "real"},
        {"name": "make_set_method", "type": "dynamic"},
        {"name": "min__time", "type": "datetime"},
        {"name": "max_", "type": "string"},
        {"name": "sum_", "type": "long"},
    ]
    # numbers among duration_ms: 12.5 250 900 5 3 100 ("fast" and null are not numbers)
    assert rows == [[8, 2, 1270.5, 211.75, 3.0, 900.0, 3, 56.25, ["GET", "POST"], "2025-03-01T10:00:00.000Z", E1, 2507]]


async def test_aggregations_over_an_empty_set(client: Client, auth: dict[str, str]) -> None:
    rows = await rows_of(
        client, auth, "['web'] | where service == 'none' | summarize count(), avg(duration_ms), make_set(method)"
    )
    assert rows == [[0, None, []]]
    assert await rows_of(client, auth, "['web'] | where service == 'none' | summarize count() by service") == []


async def test_expressions_of_aggregations_and_after_summarize(client: Client, auth: dict[str, str]) -> None:
    rows = await rows_of(
        client,
        auth,
        "['web'] | summarize errors = countif(status >= 500) * 100.0 / count(), c = count() by service "
        "| where c > 1 | extend double = c * 2 | sort by service asc",
    )
    assert rows == [["api", 50.0, 4, 8], ["web", 0.0, 2, 4], ["worker", 0.0, 2, 4]]
    rows = await rows_of(client, auth, "['web'] | summarize count() by service | where count_ > 2")
    assert rows == [["api", 4]]
    rows = await rows_of(client, auth, "['web'] | summarize by service, method | count")
    assert rows == [[4]]  # api GET, api POST, web GET, worker (no method)
    rows = await rows_of(client, auth, "['web'] | summarize c = count() by service | summarize sum(c)")
    assert rows == [[8]]


async def test_sort_take_top(client: Client, auth: dict[str, str]) -> None:
    assert await column(
        client, auth, "['web'] | where duration_ms > 0 | sort by duration_ms asc | project duration_ms"
    ) == [3, 5, 12.5, 100, 250.0, 900]
    assert await column(client, auth, "['web'] | top 2 by duration_ms | project duration_ms") == [900, 250.0]
    assert await column(client, auth, "['web'] | top 1 by _time asc | project msg") == [E1]
    assert await column(client, auth, "['web'] | sort by _time asc | take 2 | project msg") == [E1, E2]
    assert await column(client, auth, "['web'] | order by _time desc | limit 1 | project msg") == [E8[:12]]
    rows = await rows_of(client, auth, "['web'] | sort by service asc, _time desc | project service, msg | take 3")
    assert rows == [["api", E8[:12]], ["api", E3], ["api", E2]]
    # sort after take sorts the rows taken; where after take filters them
    assert await column(client, auth, "['web'] | sort by _time asc | take 3 | sort by _time desc | project msg") == [
        E3,
        E2,
        E1,
    ]
    assert await column(client, auth, "['web'] | sort by _time asc | take 3 | where status >= 500 | project msg") == [
        E2,
        E3,
    ]
    assert await column(client, auth, "['web'] | take 3 | count") == [3]
    # nulls: first when ascending, last when descending, unless told
    assert await column(client, auth, "['web'] | sort by toint(status) asc | project toint(status) | take 1") == [None]
    assert await column(client, auth, "['web'] | sort by toint(status) desc | project s = toint(status)") == [
        503,
        500,
        500,
        404,
        200,
        200,
        200,
        None,
    ]
    assert await column(
        client, auth, "['web'] | sort by toint(status) asc nulls last | project toint(status) | take 1"
    ) == [200]


async def test_count_and_distinct(client: Client, auth: dict[str, str]) -> None:
    columns, rows, _ = await run(client, auth, "['web'] | where service == 'api' | count")
    assert columns == [{"name": "Count", "type": "long"}] and rows == [[4]]
    assert await column(client, auth, "['web'] | distinct service | sort by service asc") == ["api", "web", "worker"]
    rows = await rows_of(client, auth, "['web'] | distinct service, method | sort by service asc, method asc")
    assert rows == [["api", "GET"], ["api", "POST"], ["web", "GET"], ["worker", None]]


SCALAR_CASES: list[tuple[str, list[Any], str]] = [
        ("tostring(status)", ["200", "500", "503", "200", "404", "500", None, "200"], "string"),
        ("toint(status)", [200, 500, 503, 200, 404, 500, None, 200], "int"),
        ("tolong(duration_ms)", [12, 250, 900, 5, 3, 100, None, None], "long"),
        ("todouble(duration_ms)", [12.5, 250.0, 900.0, 5.0, 3.0, 100.0, None, None], "real"),
        ("toreal(status)", [200.0, 500.0, 503.0, 200.0, 404.0, 500.0, None, 200.0], "real"),
        ("strlen(method)", [3, 4, 4, 3, 3, None, None, 3], "long"),
        ("toupper(method)", ["GET", "POST", "POST", "GET", "GET", None, None, "GET"], "string"),
        ("tolower(service)", ["api", "api", "api", "web", "web", "worker", "worker", "api"], "string"),
        ("bin(_time, 1h)", ["2025-03-01T10:00:00.000Z"] * 5 + ["2025-03-02T09:00:00.000Z"] * 3, "datetime"),
        ("_time - datetime(2025-03-01T10:00:00Z)", ["00:00:00", "00:00:30", "00:01:10", "00:02:00",
                                                    "00:02:59.250000", "23:00:00", "23:30:00", "23:45:00"],
         "timespan"),
        ("isnull(status)", [False] * 6 + [True, False], "bool"),
        ("iff(isnull(status), -1, toint(status))", [200, 500, 503, 200, 404, 500, -1, 200], "long"),
        ("tostring(_time)", ["2025-03-01T10:00:00.000000Z", "2025-03-01T10:00:30.000000Z",
                             "2025-03-01T10:01:10.000000Z", "2025-03-01T10:02:00.000000Z",
                             "2025-03-01T10:02:59.250000Z", "2025-03-02T09:00:00.000000Z",
                             "2025-03-02T09:30:00.000000Z", "2025-03-02T09:45:00.000000Z"], "string"),
]  # fmt: skip


async def test_scalar_functions(client: Client, auth: dict[str, str]) -> None:
    wrong = []
    for expr, expected, type_ in SCALAR_CASES:
        columns, rows, _ = await run(client, auth, f"['web'] | sort by _time asc | project v = {expr}")
        got = ([r[0] for r in rows], columns)
        if got != (expected, [{"name": "v", "type": type_}]):
            wrong.append(f"{expr}: got {got}")
    assert not wrong, "\n".join(wrong)


async def test_literal_conversions(client: Client, auth: dict[str, str]) -> None:
    rows = await rows_of(
        client,
        auth,
        "['web'] | take 1 | project toint('12'), toint(2.7), todouble('1.5'), toint(true), toint('x'), "
        "todouble('1e5'), tolong(' -7 '), 7 / 2, 7.0 / 2, 2h / 30m, 1h * 2, now() - ago(1h)",
    )
    assert rows == [[12, 2, 1.5, 1, None, 100000.0, -7, 3, 3.5, 4.0, "02:00:00", "01:00:00"]]


TYPE_ERRORS: list[tuple[str, str, str]] = [
        ("['web'] | where nosuch(x)", "column 17", "unknown function 'nosuch'"),
        ("['web'] | where count() > 1", "column 17", "aggregation count() cannot be used outside 'summarize'"),
        ("['web'] | summarize avg(count())", "column 25", "inside another aggregation"),
        ("['web'] | where 5", "column 17", "'where' needs a true/false condition, got a whole number"),
        ("['web'] | where _time + 1 > 0", "column 23", "cannot apply '+' to a datetime and a whole number"),
        ("['web'] | where msg contains _time", "column 30", "needs a string, got a datetime"),
        ("['web'] | where _time > 5", "column 23", "cannot compare a datetime with a whole number"),
        ("['web'] | where _time < null", "column 23", "use isnull()"),
        ("['web'] | summarize count() by service | where status > 1", "column 48",
         "unknown column 'status' (the columns here are: service, count_)"),
        ("['web'] | project a = 1 | project-away b", "column 40", "unknown column 'b'"),
        ("['web'] | project-away msg | where msg == 'x'", "column 36", "'msg' was removed by project-away"),
        ("['web'] | summarize status", "column 21", "'status' must be inside an aggregation"),
        ("['web'] | summarize x = 1", "column 21", "'summarize' needs an aggregation"),
        ("['web'] | project a = 1, a = 2", "column 26", "duplicate column name 'a'"),
        ("['web'] | summarize percentile(duration_ms, 200)", "column 45", "from 0 to 100"),
        ("['web'] | summarize count() by bin(_time, 0s)", "column 43", "positive timespan"),
        ("['web'] | where msg has tostring(status)", "column 25", "needs a string literal"),
        ("['web'] | where toint() > 1", "column 17", "toint() takes 1 argument, got 0"),
        ("['web'] | where ago(x) < now()", "column 21", "needs a timespan literal"),
        ("['web'] | where status == 99999999999999999999", "column 27", "out of range"),
        ("['web'] | project make_set(x)", "column 19", "outside 'summarize'"),
        ("['web'] | project true % 2", "column 19", "'%' needs a number, got a bool"),
        ("['web'] | project 1.5 % 2", "column 23", "'%' needs two whole numbers"),
        ("['web'] | where _time > datetime(2025-03-01) + _time", "column 46",
         "cannot apply '+' to a datetime and a datetime"),
        ("['web'] | where iff(true, 1, 'x') == 1", "column 17", "both results of one type"),

]  # fmt: skip


async def test_type_errors_name_the_position(client: Client, auth: dict[str, str]) -> None:
    for apl, position, fragment in TYPE_ERRORS:
        resp = await client.post("/v1/query", json={"apl": apl}, headers=auth)
        err = assert_error(resp, 400, "invalid_query", param="apl")
        assert err["message"].startswith(f"Line 1, {position}:"), (apl, err["message"])
        assert fragment in err["message"], (apl, err["message"])


async def test_a_bad_regular_expression_is_a_400(client: Client, auth: dict[str, str]) -> None:
    resp = await client.post("/v1/query", json={"apl": "['web'] | where msg matches regex '(unclosed'"}, headers=auth)
    err = assert_error(resp, 400, "invalid_query", param="apl")
    assert "regular expression" in err["message"]


PIPELINE_STEPS = [
    "where status >= 200",
    "extend x = duration_ms * 2",
    "project service, status, d = duration_ms",
    "project-away msg",
    "summarize c = count(), a = avg(duration_ms) by service",
    "sort by _time asc",
    "take 3",
    "top 2 by duration_ms",
    "count",
    "distinct service",
    "extend _time = bin(_time, 1h)",
    "summarize make_set(method) by bin(_time, 1d)",
    "project-away _time",
    "summarize by method",
    "extend s = tostring(_time - datetime(2025-01-01))",
]


async def test_pipelines_of_any_two_steps_answer_or_explain(client: Client, auth: dict[str, str]) -> None:
    """Every operator after every other: a result, or a 400 saying why (a column the first step removed),
    never a server error."""
    wrong = []
    for first in PIPELINE_STEPS:
        for second in PIPELINE_STEPS[::2]:
            apl = f"['web'] | {first} | {second}"
            for path in ("/v1/query", "/v1/export"):
                resp = await client.post(path, json={"apl": apl}, headers=auth)
                if resp.status_code != 200 and not (
                    resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_query"
                ):
                    wrong.append(f"{path} {apl}: {resp.status_code} {resp.text[:200]}")
    assert not wrong, "\n".join(wrong)
