"""Every function and operator applied after `summarize`, to grouped columns of every type and to aggregate
columns, against real PostgreSQL.

After `summarize` the rows are groups, and PostgreSQL accepts in them only the grouped expressions and functions
of them: an expression that still read the raw event (`data ->> 'status'` beside a grouped `data -> 'status'`)
was a 500 (GroupingError). Each query runs as written and again behind `where true`, which makes the summarized
rows a subquery whose columns are plain values: both forms must give the same answer, and never a 5xx.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.query.compiler import Compiled
from app.query.errors import QueryError
from app.query.functions import _SCALARS, AGGREGATIONS
from app.query.parser import parse
from app.settings import RateLimits
from tests.conftest import AppClient

pytestmark = pytest.mark.usefixtures("web")

# Grouped columns of every type, and aggregate columns of every aggregation.
BY = {
    "status": "status",  # an event field (dynamic): a number, a string or missing
    "msg": "msg",
    "tags": "tags",  # an array in one event
    "s": "tostring(service)",
    "n": "toint(status)",
    "l": "tolong(duration_ms)",
    "d": "todouble(duration_ms)",
    "b": "isnull(status)",
    "t": "bin(_time, 1h)",
    "span": "_time - datetime(2025-03-01)",
}
AGG = {
    "c": "count()",
    "ci": "countif(status == 200)",
    "su": "sum(toint(status))",
    "av": "avg(duration_ms)",
    "mi": "min(tostring(msg))",
    "ma": "max(_time)",
    "dc": "dcount(service)",
    "p": "percentile(duration_ms, 50)",
    "ms": "make_set(service)",  # a JSON array
    "mt": "make_set(tostring(service))",  # a typed set of strings
    "md": "make_set(bin(_time, 1d))",  # a typed set of datetimes
    "sp": "sum(_time - datetime(2025-03-01))",
}
assert set(AGGREGATIONS) <= {AGG[name].split("(")[0] for name in AGG}
COLUMNS = [*BY, *AGG]
SUMMARY = "['web'] | summarize " + ", ".join(f"{n} = {e}" for n, e in AGG.items()) + " by "
SUMMARY += ", ".join(n if n == e else f"{n} = {e}" for n, e in BY.items())
ORDER = ", ".join(f"{n} asc" for n in BY if n != "tags")  # the groups in one total order (with `tags` aside)

# Every scalar function (X: the column) ...
FUNCTIONS = [
    "tostring(X)", "toint(X)", "tolong(X)", "todouble(X)", "toreal(X)", "tolower(X)", "toupper(X)", "strlen(X)",
    "isnull(X)", "isnotnull(X)", "isempty(X)", "isnotempty(X)", "iff(isnull(X), X, X)", "iif(isnotnull(X), X, X)",
    "bin(X, 1h)", "bin(X, 10)", "floor(X, 2.5)", "iff(isnull(X), now(), ago(1h)) - now()",
]  # fmt: skip
assert {t.split("(")[0] for t in FUNCTIONS} | {"now", "ago"} == set(_SCALARS)
# ... and every scalar operator.
OPERATORS = [
    "X == X", "X != 'api'", "X == 200", "X <> 'ok'", "X < 300", "X >= 1.5", "X > ago(1000d)", "X + 1", "X - X",
    "X * 2", "X / 0", "X % 7", "-X", "not(isnull(X))", "X in (200, 'api')", "X !in ('x', X)",
    "X between (1 .. 500)", "X !between (X .. X)", "X contains 'a'", "X !contains_cs 'A'", "X startswith 'up'",
    "X endswith 'k'", "X has 'ok'", "X !has_cs 'ok'", "X matches regex 'o+'", "X =~ 'API'", "X !~ 'api'",
    "X + 1h", "X - datetime(2025-03-01)", "X * 2 > 1h", "isnull(X) and isnotnull(X)", "isnull(X) or X == X",
]  # fmt: skip
TEMPLATES = FUNCTIONS + OPERATORS


def _compiles(apl: str) -> bool:
    try:
        Compiled(parse(apl), now=datetime.now(UTC), start=None, end=datetime.now(UTC))
    except QueryError:
        return False
    return True


def _valid(template: str, columns: list[str], shape: Callable[[str], str]) -> list[str]:
    """The expressions of `template` over the columns for which `SUMMARY | shape(expression)` type-checks."""
    exprs = [template.replace("X", c) for c in columns]
    return [e for e in exprs if _compiles(f"{SUMMARY} | {shape(e)}")]


def _queries() -> list[str]:
    """Each template over every column where it type-checks, after summarize, in each operator."""
    out: list[str] = []
    columns = itertools.cycle(COLUMNS)
    for i, template in enumerate(TEMPLATES):
        exprs = _valid(template, COLUMNS, lambda e: f"extend x = {e}")
        assert exprs, template
        named = ", ".join(f"x{i} = {e}" for i, e in enumerate(exprs))
        out += [
            f"extend {named} | sort by {', '.join(exprs)}, {ORDER}",
            f"project {', '.join(BY)}, {named}",
            f"summarize count() by {named}" if i % 2 else f"distinct {named}",
        ]
        preds = _valid(template, COLUMNS, lambda e: f"where {e}")
        if preds:
            out.append(f"where {' or '.join(preds)}")
        key = next(k for c in columns if _compiles(f"{SUMMARY} | top 1 by {(k := template.replace('X', c))}"))
        out.append(f"top 3 by {key} | project k = {key}")
    return out


CHAINS = [
    # Two summarizes, and more operators between and after them.
    "summarize n = count(), m = max(c), k = make_set(s), u = make_set(status) by status "
    "| extend x = tostring(status), y = strlen(tostring(k)) + n | sort by y, x | top 2 by strlen(x)",
    "summarize count() by s | summarize n = count(), l = max(strlen(s)) | extend z = tostring(l) | project z, n",
    "summarize by status, msg | summarize count() by tostring(status) | count | extend twice = Count * 2",
    "distinct status | extend x = tostring(status) | summarize make_set(x) by isnull(status)",
    "take 100 | summarize by b | extend x = iff(b, 'yes', 'no') | sort by x",
    "project-away tags | summarize count() by st = tostring(status) | where st != '' | top 1 by st asc",
]


def _canonical(body: dict[str, Any], ordered: bool) -> Any:
    if "error" in body:
        return body["error"]["code"], body["error"]["message"]
    rows = [msgspec.json.encode(row) for row in body["rows"]]
    return body["columns"], rows if ordered else sorted(rows)


@pytest.fixture
async def client(app_client: AppClient) -> Any:
    async with app_client(rate_limits=RateLimits(query=1_000_000)) as c:
        yield c


async def _same_answer(client: AsyncTestClient[Litestar], auth: dict[str, str], after: str) -> str | None:
    """None when `SUMMARY | after` answers as `SUMMARY | where true | after` does, else what differed."""
    ordered = "sort by" in after or after.startswith("top")
    answers = []
    for apl in (f"{SUMMARY} | {after}", f"{SUMMARY} | where true | {after}"):
        resp = await client.post("/v1/query", json={"apl": apl}, headers=auth)
        if resp.status_code >= 500:
            return f"{resp.status_code} for SUMMARY | {after}"
        answers.append((resp.status_code, _canonical(resp.json(), ordered)))
    if answers[0] != answers[1]:
        return f"{after[:200]}: {str(answers[0])[:300]} != {str(answers[1])[:300]}"
    return None


async def test_the_queries_of_the_issue(client: AsyncTestClient[Litestar], auth: dict[str, str]) -> None:
    for apl, rows in [
        ("['web'] | summarize count() by status | extend x = tostring(status) | sort by x asc | project x",
         [[None], ["200"], ["404"], ["500"], ["500"], ["503"]]),
        ("['web'] | summarize count() by status | sort by tostring(status) asc | project status",
         [[None], [200], [404], [500], ["500"], [503]]),
        ("['web'] | summarize count() by msg | top 1 by strlen(msg)", [["order failed: Timeout", 1]]),
    ]:  # fmt: skip
        resp = await client.post("/v1/query", json={"apl": apl}, headers=auth)
        assert resp.status_code == 200, (apl, resp.text)
        got = resp.json()["rows"]
        assert got == rows or sorted(map(str, got)) == sorted(map(str, rows)), (apl, got)


async def test_every_function_and_operator_after_summarize(
    client: AsyncTestClient[Litestar], auth: dict[str, str]
) -> None:
    queries = _queries()
    assert len(queries) >= 4 * len(TEMPLATES)
    problems = [p for after in queries if (p := await _same_answer(client, auth, after))]
    assert not problems, "\n".join(problems[:20])


async def test_chains_of_summarize(client: AsyncTestClient[Litestar], auth: dict[str, str]) -> None:
    problems = [p for after in CHAINS if (p := await _same_answer(client, auth, after))]
    assert not problems, "\n".join(problems)
    for after in CHAINS:  # and they run
        resp = await client.post("/v1/query", json={"apl": f"{SUMMARY} | {after}"}, headers=auth)
        assert resp.status_code == 200, (after, resp.text)
