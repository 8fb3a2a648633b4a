"""Run a monitor's query for one window and say what it observed: the values per group (threshold), the new
matching events (match_event), or why the query failed.

Runs on the evaluating transaction's own connection, inside a savepoint: a failing query (a bad regular
expression on the data, the statement timeout) is rolled back to the savepoint and reported as the monitor's
`error`, and the transaction goes on to record it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import msgspec
import orjson

from app.db.monitor import Monitor
from app.monitors import batching, queries
from app.monitors.state import Failed, Rules, Values
from app.query.compiler import Statement
from app.query.errors import QueryError, line_column
from app.query.render import table_result
from app.timefmt import iso_ms

MAX_ROWS = 50_000  # rows of one threshold result (groups x time bins)
MAX_GROUPS = 1000  # groups one monitor keeps a state for
SAMPLE = 10  # matching events listed per message
FIELDS_PER_MATCH = 50
TEXT_PER_VALUE = 500
SAVEPOINT = "monitor_eval"


@dataclass(frozen=True)
class Window:
    """The evaluated `_time` range [start, end); for match_event also the arrival range [since, until)."""

    start: datetime
    end: datetime
    since: datetime | None = None
    until: datetime | None = None

    @property
    def shown(self) -> tuple[datetime, datetime]:
        """The range a message names: the arrival range of a match, else the time range."""
        if self.since is not None and self.until is not None:
            return self.since, self.until
        return self.start, self.end


def window_for(monitor: Monitor, now: datetime, *, settle_seconds: float) -> Window:
    end = now - timedelta(seconds=monitor.delay_seconds)
    span = timedelta(seconds=monitor.range_seconds)
    if monitor.type == "threshold":
        return Window(end - span, end)
    # Events are reported once, by arrival: from where the previous run stopped (after downtime, that covers
    # the whole gap in one run) up to `settle` before now, so that a request still being committed with an
    # earlier `_sysTime` is seen by the next run rather than missed.
    until = end - timedelta(seconds=settle_seconds)
    since = monitor.match_cursor or until - timedelta(seconds=monitor.interval_seconds)
    if monitor.disabled_until is not None and since < monitor.disabled_until:
        since = monitor.disabled_until  # what arrived while the monitor was disabled stays unreported
    since = min(since, until)
    return Window(since - span, end, since, until)


@dataclass
class Observation:
    """What one run saw. `result` feeds the state machine."""

    result: Values | Failed | int
    matches: list[dict[str, Any]] = field(default_factory=list)
    match_count: int | None = None

    @property
    def error(self) -> str | None:
        return self.result.error if isinstance(self.result, Failed) else None


def rules_of(monitor: Monitor) -> Rules:
    assert monitor.operator is not None and monitor.threshold is not None
    return Rules(
        operator=monitor.operator,
        threshold=monitor.threshold,
        m=monitor.trigger_m,
        n=monitor.trigger_n,
        resolvable=monitor.resolvable,
        alert_on_no_data=monitor.alert_on_no_data,
        grouped=monitor.notify_by_group,
    )


def _failure(exc: Exception, apl: str, timeout: float) -> Failed:
    if isinstance(exc, asyncpg.exceptions.QueryCanceledError):
        return Failed(f"the query ran longer than the {timeout:g} s statement timeout")
    if isinstance(exc, QueryError):
        line, column = line_column(apl, exc.pos)
        return Failed(f"line {line}, column {column}: {exc.message}")
    if isinstance(exc, asyncpg.exceptions.DataError):
        return Failed(f"the query failed on the data: {exc}")
    if isinstance(exc, OverflowError):  # read from the result: beyond what Python's datetime or timedelta holds
        return Failed("a datetime or timespan in the result is out of range (years 1 to 9999, 999,999,999 days)")
    return Failed(f"the query failed: {exc}")


async def _fetch(conn: asyncpg.Connection, statement: Statement) -> list[asyncpg.Record]:
    return list(await conn.fetch(statement.sql, *statement.args))


async def observe(
    conn: asyncpg.Connection,
    monitor: Monitor,
    dataset_id: int | None,
    window: Window,
    now: datetime,
    *,
    statement_timeout: float,
    savepoint_open: bool = False,
    compiled: tuple[Statement, queries.Shape] | None = None,
) -> Observation:
    """Run the query (nothing when the dataset does not exist yet: no events, no data); a threshold query's
    statement may come `compiled` already. Afterwards a savepoint is open on `conn` (the next monitor of a batch
    releases it: `savepoint_open`), so one statement goes ahead of each query however many monitors a
    transaction evaluates."""
    timeout_ms = max(1, round(statement_timeout * 1000))
    release = f"RELEASE SAVEPOINT {SAVEPOINT}; " if savepoint_open else ""
    await conn.execute(f"{release}SET LOCAL statement_timeout = {timeout_ms}; SAVEPOINT {SAVEPOINT}")
    try:
        if monitor.type == "threshold":
            return await _threshold(conn, monitor, dataset_id, window, now, compiled)
        return await _match(conn, monitor, dataset_id, window, now)
    except (asyncpg.PostgresError, QueryError, OverflowError) as exc:
        if isinstance(exc, asyncpg.PostgresError):
            await conn.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")  # the savepoint stays, the failure goes
        return Observation(_failure(exc, monitor.apl, statement_timeout))


@dataclass
class _Planned:
    at: int  # the monitor's place in the batch
    monitor: Monitor
    statement: Statement
    shape: queries.Shape


async def observe_many(
    conn: asyncpg.Connection,
    batch: Sequence[tuple[Monitor, int | None, Window]],
    now: datetime,
    *,
    statement_timeout: float,
    savepoint_open: bool = False,
) -> list[Observation]:
    """`observe` for a batch of monitors: threshold queries of one shape share a statement
    (app/monitors/batching.py); the rest, and every monitor of a shared statement that failed, run alone."""
    found: list[Observation | None] = [None] * len(batch)
    compiled: dict[int, _Planned] = {}  # by place in the batch: what runs alone is not compiled again
    # One statement per SQL text and dataset: the dataset id stays a parameter (on Citus the statement then goes to
    # the dataset's shard; an id taken from a row of the batch would send it to every shard).
    shapes: dict[tuple[str, int], list[_Planned]] = {}
    for at, (monitor, dataset_id, window) in enumerate(batch):
        if monitor.type != "threshold" or dataset_id is None:
            continue
        try:
            statement, shape = threshold_statement(monitor, dataset_id, window, now)
        except (QueryError, OverflowError):
            continue  # alone, it reports the error as always
        compiled[at] = _Planned(at, monitor, statement, shape)
        shapes.setdefault((statement.sql, dataset_id), []).append(compiled[at])
    # A shared statement runs under the smallest of its monitors' timeouts (`statement_timeout`, the one every
    # evaluation has): finished in time, each monitor's part was too, so no monitor gets an answer it would not
    # get alone; cut off, its monitors run alone below, each under its own.
    timeout_ms = max(1, round(statement_timeout * 1000))
    for planned in shapes.values():
        shared = batching.shared_statement([p.statement for p in planned]) if len(planned) > 1 else None
        if shared is None:
            continue
        release = f"RELEASE SAVEPOINT {SAVEPOINT}; " if savepoint_open else ""
        await conn.execute(f"{release}SET LOCAL statement_timeout = {timeout_ms}; SAVEPOINT {SAVEPOINT}")
        savepoint_open = True
        try:
            records = await conn.fetch(shared.sql, *shared.args)
        except asyncpg.PostgresError:
            await conn.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")
            continue
        for p, rows in zip(planned, batching.split(records, shared), strict=True):
            try:
                found[p.at] = threshold_observation(p.monitor, p.statement, p.shape, rows)
            except OverflowError as exc:
                found[p.at] = Observation(_failure(exc, p.monitor.apl, statement_timeout))
    out: list[Observation] = []
    for at, (monitor, dataset_id, window) in enumerate(batch):
        observation = found[at]
        if observation is None:
            alone = compiled.get(at)
            observation = await observe(
                conn,
                monitor,
                dataset_id,
                window,
                now,
                statement_timeout=statement_timeout,
                savepoint_open=savepoint_open,
                compiled=(alone.statement, alone.shape) if alone is not None else None,
            )
            savepoint_open = True
        out.append(observation)
    return out


async def _threshold(
    conn: asyncpg.Connection,
    monitor: Monitor,
    dataset_id: int | None,
    window: Window,
    now: datetime,
    compiled: tuple[Statement, queries.Shape] | None,
) -> Observation:
    if dataset_id is None:
        return Observation(Values({}))
    statement, shape = compiled or threshold_statement(monitor, dataset_id, window, now)
    return threshold_observation(monitor, statement, shape, await _fetch(conn, statement))


def threshold_statement(
    monitor: Monitor, dataset_id: int, window: Window, now: datetime
) -> tuple[Statement, queries.Shape]:
    compiled, shape = queries.threshold_query(monitor.apl, now=now, start=window.start, end=window.end)
    return compiled.statement(dataset_id, limit=MAX_ROWS + 1, newest_first=False), shape


def threshold_observation(
    monitor: Monitor, statement: Statement, shape: queries.Shape, records: Sequence[Sequence[Any]]
) -> Observation:
    """What a threshold query's rows say (read alone or from a shared statement: the same rows either way)."""
    if len(records) > MAX_ROWS:
        return Observation(
            Failed(f"the query returned more than {MAX_ROWS:,} rows; summarize into fewer groups or bins")
        )
    _, rows = table_result(records, statement.layout)
    return Observation(values(rows, shape, rules_of(monitor), grouped=monitor.notify_by_group))


# Query results hold integers beyond 64 bits exactly (render.py reads JSON with msgspec); orjson cannot write
# them, msgspec can.
_JSON = msgspec.json.Encoder()
_SORTED_JSON = msgspec.json.Encoder(order="sorted")


def series_key(group: dict[str, Any]) -> str:
    """The key a group's state is stored under: its values as JSON with sorted keys. Written by orjson as it
    always was (msgspec writes some floats differently, 1e20 for 1e+20, and a changed key would lose the
    group's state), by msgspec only for what orjson cannot write."""
    try:
        return orjson.dumps(group, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return _SORTED_JSON.encode(group).decode()


def values(rows: Sequence[Sequence[Any]], shape: queries.Shape, rules: Rules, *, grouped: bool) -> Values | Failed:
    """Per series key, the group and its value most in breach; rows whose value is null are no data."""
    found: dict[str, tuple[dict[str, Any], list[float]]] = {}
    for row in rows:
        raw = row[shape.value_index]
        if raw is None:
            continue
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            return Failed(f"the value '{shape.value_name}' is not a number: {_JSON.encode(raw).decode()[:100]}")
        group = (
            {name: row[i] for name, i in zip(shape.group_names, shape.group_indexes, strict=True)} if grouped else {}
        )
        key = series_key(group) if grouped else ""
        entry = found.get(key)
        if entry is None:
            if len(found) >= MAX_GROUPS:
                return Failed(f"the query has more than {MAX_GROUPS:,} groups; a monitor keeps state for at most that")
            found[key] = entry = (group, [])
        entry[1].append(float(raw))
    return Values({key: (group, rules.worst(vals)) for key, (group, vals) in found.items()})


async def _match(
    conn: asyncpg.Connection, monitor: Monitor, dataset_id: int | None, window: Window, now: datetime
) -> Observation:
    assert window.since is not None and window.until is not None
    if dataset_id is None or window.since >= window.until:
        return Observation(0, [], 0)
    rows_query, count_query = queries.match_queries(
        monitor.apl, now=now, start=window.start, end=window.end, since=window.since, until=window.until
    )
    statement = rows_query.statement(dataset_id, limit=SAMPLE + 1, newest_first=True)
    records = await _fetch(conn, statement)
    count = len(records)
    if count > SAMPLE:
        counted = await _fetch(conn, count_query.statement(dataset_id, limit=None, newest_first=False))
        count = int(counted[0][0])
    columns, rows = table_result(records[:SAMPLE], statement.layout)
    names = [c["name"] for c in columns]
    return Observation(count, [_trimmed(names, row) for row in rows], count)


def _trimmed(names: list[str], row: Sequence[Any]) -> dict[str, Any]:
    """A matching event as a message shows it: its non-null fields, long text cut (an event may be 1 MB)."""
    out: dict[str, Any] = {}
    for name, value in zip(names, row, strict=True):
        if value is None:
            continue
        if len(out) >= FIELDS_PER_MATCH:
            break
        if isinstance(value, (dict, list)):
            value = _JSON.encode(value).decode()
        if isinstance(value, str) and len(value) > TEXT_PER_VALUE:
            value = value[: TEXT_PER_VALUE - 1] + "…"
        out[name] = value
    return out


def iso_range(window: Window) -> tuple[str, str]:
    start, end = window.shown
    return iso_ms(start), iso_ms(end)
