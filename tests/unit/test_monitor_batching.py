"""Shared statements: the differing parameters become rows, the common ones stay parameters, arrays that differ
cannot be shared (the SQL each row runs is checked against PostgreSQL in tests/integration/monitors/test_batched.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.monitors.batching import shared_statement, split
from app.monitors.queries import parsed
from app.query.compiler import Compiled

NOW = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def statement(apl: str, dataset: int = 7, range_seconds: int = 60):
    compiled = Compiled(parsed(apl), now=NOW, start=NOW - timedelta(seconds=range_seconds), end=NOW)
    return compiled.statement(dataset, limit=50_001, newest_first=False)


def test_only_what_differs_becomes_rows():
    a = statement("['web'] | where k == 1 | summarize count()")
    b = statement("['web'] | where k == 2 | summarize count()", dataset=8)
    assert a.sql == b.sql
    shared = shared_statement([a, b])
    assert shared is not None
    assert shared.sql.startswith("SELECT b.i, q.* FROM unnest($1::integer[], $2::integer[], $3::jsonb[]) AS b(i, a1, ")
    assert "CROSS JOIN LATERAL (SELECT count(*) FROM events WHERE dataset_id = b.a1::integer" in shared.sql
    assert shared.args[:3] == [[0, 1], [7, 8], ['{"k":1}', '{"k":2}']]
    assert shared.args[3:] == [NOW - timedelta(seconds=60), NOW, 50_001]  # the window and limit stay parameters


def test_a_differing_array_cannot_be_shared():
    a = statement("['web'] | where service in ('api', 'db') | summarize count()")
    b = statement("['web'] | where service in ('web', 'x') | summarize count()")
    assert a.sql == b.sql and shared_statement([a, b]) is None
    assert shared_statement([a, statement("['web'] | where service in ('api', 'db') | summarize count()")])


def test_the_same_statement_runs_once_for_every_monitor_that_has_it():
    one, two = (statement(f"['web'] | where k == {k} | summarize count()") for k in (1, 2))
    shared = shared_statement([one, two, one, statement("['web'] | where k == 1 | summarize count()"), two])
    assert shared is not None
    assert shared.args[:2] == [[0, 1], ['{"k":1}', '{"k":2}']]  # two rows: the query runs twice, not five times
    assert shared.rows == [0, 1, 0, 0, 1]
    assert split([(1, "x"), (0, "y")], shared) == [[("y",)], [("x",)], [("y",)], [("y",)], [("x",)]]
    # All the same: one row, every parameter stays a parameter.
    alike = shared_statement([one, one])
    assert alike is not None and alike.rows == [0, 0] and alike.args[0] == [0]
    assert alike.sql.startswith("SELECT b.i, q.* FROM unnest($1::integer[]) AS b(i) CROSS JOIN LATERAL")


def test_rows_go_back_to_their_statement():
    a, b, c = (statement(f"['web'] | where k == {k} | summarize count()") for k in (1, 2, 3))
    shared = shared_statement([a, b, c])
    assert shared is not None and shared.rows == [0, 1, 2]
    assert split([(1, "x", 2), (0, "y", 3), (1, "z", 4)], shared) == [[("y", 3)], [("x", 2), ("z", 4)], []]
