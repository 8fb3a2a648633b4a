"""Random query texts, built from the language's own pieces and from hostile ones (other scripts' digits,
numbers and timespans beyond every range, dates at the ends of the calendar): parsing and compiling either
succeed or raise QueryError (a 400 with line and column), never anything else (a 500)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from app.query.compiler import Compiled
from app.query.errors import QueryError
from app.query.parser import parse

NOW = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
SEED = 15  # fixed: the same texts every run

OPERATORS = [
    "where {e}",
    "extend {n} = {e}",
    "extend {e}",
    "project {n} = {e}, {f}",
    "project-away {f}",
    "summarize {a} by {e}",
    "summarize {n} = {a}, {a} by {f}, bin(_time, {span})",
    "summarize by {e}",
    "sort by {e} {dir}",
    "order by {e} asc nulls first",
    "take {int}",
    "limit {int}",
    "top {int} by {e} {dir}",
    "count",
    "distinct {e}",
]
AGGREGATIONS = [
    "count()", "countif({e})", "sum({e})", "avg({e})", "min({e})", "max({e})", "dcount({e})",
    "percentile({e}, {num})", "make_set({e})",
]  # fmt: skip
SCALARS = [
    "{f}", "{lit}", "({e})", "-{e}", "not {e}", "{e} + {e}", "{e} - {e}", "{e} * {e}", "{e} / {e}", "{e} % {e}",
    "{e} == {e}", "{e} != {e}", "{e} < {e}", "{e} >= {e}", "{e} and {e}", "{e} or {e}", "{e} in ({e}, {lit})",
    "{e} !in ({lit})", "{e} between ({e} .. {e})", "{e} contains {e}", "{e} !startswith {e}", "{e} has {str}",
    "{e} matches regex {str}", "{e} =~ {e}", "now()", "ago({span})", "bin({e}, {span})", "bin({e}, {num})",
    "floor({e}, {num})", "isnull({e})", "isnotempty({e})", "tostring({e})", "toint({e})", "tolong({e})",
    "todouble({e})", "tolower({e})", "toupper({e})", "strlen({e})", "iff({e}, {e}, {e})", "{f} + {span}",
    "_time - {span}", "_time - {date}", "{date} + {span}", "{span} * {num}", "{span} / {span}",
]  # fmt: skip
FIELDS = ["status", "msg", "_time", "_sysTime", "['http.path']", "a.b", "count_", "n", "x1"]
NUMBERS = [
    "0", "1", "-1", "500", "1.5", ".5", "1e3", "1e308", "1e309", "1e-400", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "99999999999999999999", "9" * 30, "9" * 5000,
    "\u00b2", "1\u00b2", "\u0661", "\u0bef", "\u00bd", "0x10", "1_000",
]  # fmt: skip
SPANS = [
    "1s", "5m", "1h", "1d", "0s", "-1d", "1.5h", "100ms", "1us", "999999999d", "1000000000d", "1e9d", "1e400d",
    "100000000000d", "9" * 30 + "us", "9" * 5000 + "d", "106751991d", "1\u00b2d", "5M", "1 d",
]  # fmt: skip
DATES = [
    "datetime(2026-11-21T10:00:00Z)", "datetime(0001-01-01)", "datetime(0001-01-01T00:00:00+05:00)",
    "datetime(9999-12-31T23:59:59-05:00)", "datetime(9999-12-31T23:59:59.999999Z)", "datetime(10000-01-01)",
    "datetime('2026-11-21')", "datetime(\u0662\u0660\u0662\u0666-01-01)", "datetime()", "datetime(2026-02-30)",
]  # fmt: skip
STRINGS = ["'api'", '"a\\"b"', "@'c:\\x'", "'('", "'\u00b9'", "'" + "a" * 1001 + "'", "''", "'\\u0301'"]


class _Texts:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, choices: list[str]) -> str:
        return self.rng.choice(choices)

    def fill(self, template: str, depth: int) -> str:
        out = template
        for slot, make in (
            ("{e}", lambda: self.expr(depth + 1)),
            ("{a}", lambda: self.fill(self.pick(AGGREGATIONS), depth + 1)),
            ("{f}", lambda: self.pick(FIELDS)),
            ("{n}", lambda: self.pick(["x", "y", "status", "_time", "count_"])),
            ("{lit}", lambda: self.pick([*NUMBERS, *SPANS, *DATES, *STRINGS, "true", "null"])),
            ("{num}", lambda: self.pick(NUMBERS)),
            ("{int}", lambda: self.pick(NUMBERS)),
            ("{span}", lambda: self.pick(SPANS)),
            ("{date}", lambda: self.pick(DATES)),
            ("{str}", lambda: self.pick(STRINGS)),
            ("{dir}", lambda: self.pick(["", "asc", "desc"])),
        ):
            while slot in out:
                out = out.replace(slot, make(), 1)
        return out

    def expr(self, depth: int) -> str:
        if depth > 3:
            return self.pick([*FIELDS, *NUMBERS, *STRINGS])
        return self.fill(self.pick(SCALARS), depth)

    def query(self) -> str:
        ops = [self.fill(self.pick(OPERATORS), 0) for _ in range(self.rng.randint(0, 4))]
        return " | ".join(["['web']", *ops])


def _texts(count: int) -> list[str]:
    texts = _Texts(random.Random(SEED))
    return [texts.query() for _ in range(count)]


@pytest.mark.parametrize("chunk", range(4))
def test_random_queries_parse_and_compile_or_are_query_errors(chunk: int) -> None:
    for text in _texts(4000)[chunk::4]:
        try:
            Compiled(parse(text), now=NOW, start=None, end=NOW)
        except QueryError:
            pass
        except Exception as exc:  # pragma: no cover - the failure report
            pytest.fail(f"{type(exc).__name__}: {exc} for {text[:300]!r}")
