"""A monitor's query: checked at creation, compiled for one evaluation window, with the query area's own
parser and compiler (app/query), never a second compiler.

- threshold: the pipeline ends in `summarize`. The monitor's value is the first aggregation; the `by`
  columns that are not datetimes (time bins) are the group. With several rows per group (time bins), the
  group's value is the one most in breach (the largest for `above`, the smallest for `below`).
- match_event: only row-level operators (`where`, `extend`, `project`, `project-away`); the events that
  arrived (`_sysTime`) since the previous run are the matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from app.datasets.names import is_dataset_name
from app.errors import BeaconError
from app.query import ast
from app.query.compiler import Compiled
from app.query.errors import QueryError, to_beacon_error
from app.query.parser import parse
from app.query.plan import SYS_TIME
from app.query.types import NUMERIC, T

ROW_LEVEL = (ast.Where, ast.Extend, ast.Project, ast.ProjectAway)
_ROW_LEVEL_NAMES = "where, extend, project and project-away"


@dataclass(frozen=True)
class Shape:
    """Where a threshold query's result holds the value and the group."""

    value_index: int
    value_name: str
    group_indexes: tuple[int, ...]
    group_names: tuple[str, ...]


@lru_cache(maxsize=4096)
def parsed(apl: str) -> ast.Query:
    """Parse (cached: every run of a monitor parses the same text; the tree is immutable)."""
    query = parse(apl)
    if not is_dataset_name(query.dataset):
        raise QueryError(f"invalid dataset name {query.dataset!r}", query.dataset_pos)
    return query


def _shape_check(type_: str, query: ast.Query) -> None:
    if type_ == "threshold":
        last = query.operators[-1] if query.operators else None
        if not isinstance(last, ast.Summarize):
            pos = last.pos if last is not None else query.dataset_pos
            raise QueryError("a threshold monitor's query must end in 'summarize' (e.g. '| summarize count()')", pos)
        if not last.aggregates:
            raise QueryError(
                "the final 'summarize' needs an aggregation: its first one is the monitor's value", last.pos
            )
        return
    for operator in query.operators:
        if not isinstance(operator, ROW_LEVEL):
            word = type(operator).__name__.lower().replace("projectaway", "project-away")
            raise QueryError(
                f"a match_event monitor's query may use only {_ROW_LEVEL_NAMES}, not '{word}'", operator.pos
            )


def shape_of(compiled: Compiled) -> Shape:
    """The value and group columns of a compiled threshold query (it ends in `summarize`)."""
    last = compiled.query.operators[-1]
    assert isinstance(last, ast.Summarize)
    names = list(compiled.rel.cols)
    types = list(compiled.rel.cols.values())
    by = len(last.by)
    groups = tuple(i for i in range(by) if types[i].type is not T.DATETIME)
    return Shape(by, names[by], groups, tuple(names[i] for i in groups))


def check(type_: str, apl: str, *, now: datetime, range_seconds: int, notify_by_group: bool) -> Compiled:
    """Validate a monitor's query at creation (or update): 400 `invalid_query` with line and column."""
    try:
        query = parsed(apl)
        _shape_check(type_, query)
        compiled = Compiled(query, now=now, start=now - timedelta(seconds=range_seconds), end=now)
    except QueryError as exc:
        raise to_beacon_error(apl, exc) from None
    if type_ == "threshold":
        shape = shape_of(compiled)
        value = compiled.rel.cols[shape.value_name]
        last = query.operators[-1]
        assert isinstance(last, ast.Summarize)
        first = last.aggregates[0].expr
        is_set = value.array or (isinstance(first, ast.Call) and first.name == "make_set")
        if is_set or (value.type not in NUMERIC and value.type is not T.DYNAMIC):
            value_type = "set" if is_set else value.type.value
            raise to_beacon_error(
                apl,
                QueryError(
                    f"the monitor's value is the first aggregation, '{shape.value_name}', which is a "
                    f"{value_type}; a threshold needs a number",
                    last.pos,
                ),
            )
        if notify_by_group and not shape.group_indexes:
            raise BeaconError(
                "invalid_field",
                "`notify_by_group` needs a query that summarizes `by` at least one column other than a time bin.",
                param="notify_by_group",
            )
    return compiled


def threshold_query(apl: str, *, now: datetime, start: datetime, end: datetime) -> tuple[Compiled, Shape]:
    compiled = Compiled(parsed(apl), now=now, start=start, end=end)
    return compiled, shape_of(compiled)


def arrived_between(query: ast.Query, since: datetime, until: datetime) -> ast.Query:
    """The query restricted to events that arrived in [since, until): a `where` on `_sysTime` put first."""
    sys_time = ast.Field(SYS_TIME, 0)
    window = ast.Binary(
        "and",
        ast.Binary(">=", sys_time, ast.Literal("datetime", since, 0), 0),
        ast.Binary("<", sys_time, ast.Literal("datetime", until, 0), 0),
        0,
    )
    return ast.Query(query.dataset, query.dataset_pos, (ast.Where(window, 0), *query.operators))


def match_queries(
    apl: str, *, now: datetime, start: datetime, end: datetime, since: datetime, until: datetime
) -> tuple[Compiled, Compiled]:
    """The sample of matching events (rows) and their number (`count`)."""
    query = arrived_between(parsed(apl), since, until)
    rows = Compiled(query, now=now, start=start, end=end)
    counted = ast.Query(query.dataset, query.dataset_pos, (*query.operators, ast.Count(0)))
    return rows, Compiled(counted, now=now, start=start, end=end)
