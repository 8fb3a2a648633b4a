"""Many threshold monitors' queries in one statement.

Threshold monitors of one dataset whose queries compile to the same SQL text (the same query shape and window:
only the literals differ, e.g. `where k == 3` and `where k == 4`, all evaluated at the batch's one `now`) run as
one statement (app/monitors/evaluation.py groups them; per dataset, so that the dataset id stays a parameter and
on Citus the statement goes to that dataset's shard): the parameters that differ become rows of `unnest(...)`,
and each row runs the monitor's own SQL as a `LATERAL` subquery with its own `LIMIT`:

    SELECT b.i, q.* FROM unnest($1::integer[], $2::jsonb[]) AS b(i, a4) CROSS JOIN LATERAL (<the SQL>) AS q

So a batch of N monitors costs one round trip and one plan instead of N, and each monitor's rows are exactly
those its own statement returns: it is the same SQL with the same values bound. Monitors whose statements are
the same (the same query at other thresholds: a warning and a critical monitor, each team's copy) share one row,
so the query runs once for all of them: in one snapshot, the same SQL and values give the same rows. What cannot
go this way runs alone (app/monitors/evaluation.py `observe`): a shape only one monitor of the batch has, a
parameter that differs and is itself an array (`in (...)` lists), and every monitor of a shared statement that
failed (one monitor's regular expression failing on the data must not fail the others; alone, each reports its
own error).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.query.compiler import Statement

_PLACEHOLDER = re.compile(r"\$(\d+)::([a-z0-9_]+(?:\[\])?)")


@dataclass(frozen=True)
class Shared:
    """One statement for several monitors' statements: `rows[k]` is the number, in the result's first column, of
    the rows that belong to `statements[k]`."""

    sql: str
    args: list[Any]
    rows: list[int]


def _same(values: Sequence[Any]) -> bool:
    first = values[0]
    return all(type(v) is type(first) and v == first for v in values[1:])


def _identity(values: Sequence[Any]) -> tuple[tuple[type, str], ...]:
    """What tells two statements' differing values apart: their types and reprs (values equal but written
    otherwise, a dict in another order, are merely not shared)."""
    return tuple((type(v), repr(v)) for v in values)


def shared_statement(statements: Sequence[Statement]) -> Shared | None:
    """The statements (of one SQL text) as one, or None when a parameter that differs is an array."""
    sql = statements[0].sql
    assert all(s.sql == sql for s in statements)
    types: dict[int, str] = {}
    for match in _PLACEHOLDER.finditer(sql):
        types.setdefault(int(match.group(1)), match.group(2))
    count = len(statements[0].args)
    if sorted(types) != list(range(1, count + 1)):
        return None  # not our own numbering: leave it alone
    varying = [n for n in range(1, count + 1) if not _same([s.args[n - 1] for s in statements])]
    if any(types[n].endswith("[]") for n in varying):
        return None
    # $1 is the row number; then one array per differing parameter; then the parameters all share.
    arrays = {n: k for k, n in enumerate(varying, start=2)}
    constants = {n: k for k, n in enumerate((n for n in range(1, count + 1) if n not in arrays), start=len(arrays) + 2)}

    def rewrite(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if n in arrays:
            return f"b.a{n}::{match.group(2)}"
        return f"${constants[n]}::{match.group(2)}"

    inner = _PLACEHOLDER.sub(rewrite, sql)
    unnest = ", ".join(["$1::integer[]", *(f"${k}::{types[n]}[]" for n, k in arrays.items())])
    names = ", ".join(["i", *(f"a{n}" for n in arrays)])
    distinct: dict[tuple[tuple[type, str], ...], int] = {}  # the differing values -> their row number
    firsts: list[Statement] = []  # the first statement of each row number
    rows = []
    for s in statements:
        number = distinct.setdefault(_identity([s.args[n - 1] for n in arrays]), len(distinct))
        if number == len(firsts):
            firsts.append(s)
        rows.append(number)
    args: list[Any] = [list(range(len(firsts)))]
    args += [[s.args[n - 1] for s in firsts] for n in arrays]
    args += [statements[0].args[n - 1] for n in constants]
    sql = f"SELECT b.i, q.* FROM unnest({unnest}) AS b({names}) CROSS JOIN LATERAL ({inner}) AS q"
    return Shared(sql, args, rows)


def split(records: Sequence[Sequence[Any]], shared: Shared) -> list[list[tuple[Any, ...]]]:
    """The shared statement's rows, per statement (the row number taken off); statements that share a row number
    get the same rows."""
    found: list[list[tuple[Any, ...]]] = [[] for _ in range(len(shared.args[0]))]
    for record in records:
        row = tuple(record)
        found[row[0]].append(row[1:])
    return [found[number] for number in shared.rows]
