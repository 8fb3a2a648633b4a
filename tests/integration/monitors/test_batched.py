"""A batch evaluated together (shared statements, bulk writes) gives every monitor exactly the answer it gets
when evaluated alone: the same observation, state, series, changes, notifiers and row, over varied monitors
(thresholds and operators, groups and time bins, other datasets and windows, a missing dataset, match_event,
queries that cannot share a statement and one that fails inside a shared statement)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from sqlalchemy import select

from app.db.dataset import Dataset
from app.db.monitor import Monitor
from app.monitors import batching, runner
from app.settings import asyncpg_dsn

WEB_5XX = "['web'] | where status >= {n} | summarize count()"
BY_SERVICE = "['web'] | summarize count() by service"
BINNED = "['web'] | where status >= 400 | summarize avg(duration) by service, bin(_time, 30s)"
IN_LIST = "['web'] | where service in ({names}) | summarize count()"
REGEX = "['web'] | where msg matches regex '{rx}' | summarize count()"


def web_events(h, at: float, service: str, status: int, count: int, msg: str = "ok") -> list[dict[str, Any]]:
    return [
        {"_time": h.at(at + i % 5), "service": service, "status": status, "duration": 10 * i, "msg": msg}
        for i in range(count)
    ]


async def make_monitors(h) -> list[dict[str, Any]]:
    hook = await h.webhook()
    direct = [hook["id"]]
    made = []
    for n, limit, operator in [(400, 3, "above"), (500, 2, "above_or_equal"), (503, 1, "below"), (600, 0, "above")]:
        made.append(await h.monitor(apl=WEB_5XX.format(n=n), operator=operator, threshold=limit, notifier_ids=direct))
    # The same query shape over other windows and another dataset.
    made.append(await h.monitor(apl=WEB_5XX.format(n=500), operator="above", threshold=4, range_seconds=120))
    made.append(await h.monitor(apl="['api'] | where status >= 500 | summarize count()", operator="above", threshold=1))
    made.append(await h.monitor(apl="['nothere'] | where status >= 500 | summarize count()", operator="above",
                                threshold=1, alert_on_no_data=True))  # fmt: skip
    # Groups, with and without notify_by_group; time bins.
    made.append(await h.monitor(apl=BY_SERVICE, operator="above", threshold=2, notify_by_group=True,
                                notifier_ids=direct))  # fmt: skip
    made.append(await h.monitor(apl=BY_SERVICE, operator="above", threshold=5))
    made.append(await h.monitor(apl=BY_SERVICE.replace("count()", "count(), max(status)"), operator="below",
                                threshold=3, notify_by_group=True, trigger_after={"m": 2, "n": 3}))  # fmt: skip
    made.append(await h.monitor(apl=BINNED, operator="above", threshold=15, notify_by_group=True))
    made.append(await h.monitor(apl=BINNED, operator="below", threshold=5, notify_by_group=True, delay_seconds=10))
    # An `in` list differs as an array: these cannot share a statement.
    made.append(await h.monitor(apl=IN_LIST.format(names="'api', 'db'"), operator="above", threshold=2))
    made.append(await h.monitor(apl=IN_LIST.format(names="'web', 'x'"), operator="above", threshold=0))
    # One regular expression fails on the data: the shared statement fails, each runs alone.
    made.append(await h.monitor(apl=REGEX.format(rx="("), operator="above", threshold=0, notifier_ids=direct))
    made.append(await h.monitor(apl=REGEX.format(rx="o+"), operator="above", threshold=1))
    made.append(await h.monitor(apl=REGEX.format(rx="^b"), operator="above", threshold=1))
    made.append(await h.monitor(type="match_event", apl="['web'] | where status >= 500", notifier_ids=direct))
    return made


async def claimed(h) -> list[tuple[Monitor, int | None]]:
    async with h.db() as s:
        dataset_id = select(Dataset.id).where(Dataset.name == Monitor.dataset).scalar_subquery()
        return [(m, d) for m, d in (await s.execute(select(Monitor, dataset_id).order_by(Monitor.id))).all()]


def answer(report: runner.Report) -> dict[str, Any]:
    step = report.step
    return {
        "observation": report.observation,
        "state": step.state,
        "value": step.value,
        "series": step.series,
        "changes": step.changes,
        "notifier_ids": report.notifier_ids,
        "events": [(e.kind, e.state, e.value, e.group_values, e.match_count, e.error) for e in report.events],
        "row": report.row,
    }


async def alone_and_together(h, at) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every monitor evaluated alone, then the batch together, each in a transaction rolled back."""
    alone = {}
    for monitor_id in [m.id for m, _ in await claimed(h)]:
        async with h.db() as s:
            row = (await s.execute(runner_claim(monitor_id))).one()
            report = await runner.evaluate(s, h.env, row[0], row[1], now=at, scheduled=True)
            alone[monitor_id] = answer(report)
            await s.rollback()
    async with h.db() as s:
        rows = [(m, d) for m, d in (await s.execute(runner_claim(None))).all()]
        together = {r.monitor.id: answer(r) for r in await runner.evaluate_many(s, h.env, rows, now=at)}
        await s.rollback()
    return alone, together


def runner_claim(monitor_id: str | None) -> Any:
    dataset_id = select(Dataset.id).where(Dataset.name == Monitor.dataset).scalar_subquery()
    stmt = select(Monitor, dataset_id).order_by(Monitor.id).with_for_update(of=Monitor)
    return stmt if monitor_id is None else stmt.where(Monitor.id == monitor_id)


class _Sizes(list[int | None]):
    runs: list[int | None]

    def __init__(self) -> None:
        super().__init__()
        self.runs = []


@pytest.fixture
def shared_sizes(monkeypatch) -> _Sizes:
    """How many monitors each shared statement served (None: the shape could not be shared). Each shared statement
    is of one dataset: its id stays a parameter (on Citus it goes to that dataset's shard, issue 32). How many
    times each ran its query (monitors with the same statement share one run): `shared_sizes.runs`."""
    sizes = _Sizes()
    real = batching.shared_statement

    def spy(statements):
        shared = real(statements)
        sizes.append(None if shared is None else len(statements))
        sizes.runs.append(None if shared is None else len(shared.args[0]))
        if shared is not None:
            assert re.search(r"\bdataset_id = \$\d+::integer", shared.sql), shared.sql
        return shared

    monkeypatch.setattr(batching, "shared_statement", spy)
    return sizes


async def test_batched_evaluation_answers_as_each_monitor_alone(h, shared_sizes):
    made = await make_monitors(h)
    await h.ingest("web", web_events(h, 10, "api", 500, 4) + web_events(h, 20, "db", 503, 2, msg="boom"))
    await h.ingest("web", web_events(h, 30, "web", 200, 6, msg="booted") + web_events(h, 40, "api", 404, 3))
    await h.ingest("api", web_events(h, 15, "api", 502, 3))

    alone, together = await alone_and_together(h, h.at(60))
    assert set(together) == {m["id"] for m in made}
    for monitor_id, expected in alone.items():
        assert together[monitor_id] == expected, monitor_id
    # What the batch did: shared statements (the `in` lists could not), one of them with every window and
    # threshold of the `status >=` shape over `web` in one (the `api` monitor of that shape is of another dataset:
    # it runs alone); the failing regular expression was reported alone.
    assert None in shared_sizes and max(s for s in shared_sizes if s is not None) >= 5
    # The two monitors of BY_SERVICE (other thresholds) have the same statement: its query ran once for both.
    assert (2, 1) in zip(shared_sizes, shared_sizes.runs, strict=True)
    by_apl = {m["apl"]: m["id"] for m in made}
    assert "invalid regular expression" in together[by_apl[REGEX.format(rx="(")]]["observation"].error
    assert together[by_apl[REGEX.format(rx="o+")]]["state"] == "alerting"
    assert {a["state"] for a in together.values()} == {"ok", "alerting", "no_data", "error"}

    # A real run of the loop moves every monitor on; the next comparison starts from states and series kept.
    await h.run(h.at(60))
    await h.ingest("web", web_events(h, 70, "api", 500, 1) + web_events(h, 75, "db", 500, 7))
    alone, together = await alone_and_together(h, h.at(120))
    for monitor_id, expected in alone.items():
        assert together[monitor_id] == expected, monitor_id
    kinds = {c.kind for a in together.values() for c in a["changes"]}
    assert {"triggered", "resolved"} <= kinds


async def test_a_shared_statement_past_the_timeout_leaves_each_monitor_the_answer_it_gets_alone(
    h, shared_sizes, database_url
):
    """A shared statement runs under the smallest of its monitors' timeouts (one setting: that of each
    evaluation), so it never gives a monitor an answer it would not get alone: cut off, its monitors run alone,
    each under its own. Here one monitor of the shape reads a day whose partition is locked: it alone fails."""
    old = h.t0 - timedelta(days=2)
    await h.ingest("web", [{"_time": old, "status": 500}, {"_time": h.at(10), "status": 500}])
    wide = await h.monitor(apl=WEB_5XX.format(n=500), operator="above", threshold=0, range_seconds=3 * 86_400)
    narrow = await h.monitor(apl=WEB_5XX.format(n=500), operator="above", threshold=0, range_seconds=120)
    h.env = replace(h.env, settings=replace(h.env.settings, monitor_query_timeout_seconds=0.3))
    blocker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await blocker.execute(f"BEGIN; LOCK TABLE events_{old:%Y%m%d} IN ACCESS EXCLUSIVE MODE")
        async with h.db() as s:
            rows = [(m, d) for m, d in (await s.execute(runner_claim(None))).all()]
            together = {r.monitor.id: r for r in await runner.evaluate_many(s, h.env, rows, now=h.at(60))}
            await s.rollback()
    finally:
        await blocker.close()
    assert shared_sizes == [2]  # the two shared a statement, which the lock held past the timeout
    assert "0.3 s statement timeout" in (together[wide["id"]].observation.error or "")
    assert together[narrow["id"]].observation.error is None
    assert (together[narrow["id"]].step.state, together[narrow["id"]].step.value) == ("alerting", 1.0)
