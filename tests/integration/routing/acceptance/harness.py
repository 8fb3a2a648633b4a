"""A small port of Alertmanager's acceptance harness (`test/with_api_v2`): alerts posted at times, what a local
webhook receiver (`format: alertmanager`) gets collected with the time it arrived, and each expected batch
looked for in its interval, as `Collector.Check` does: every expected batch must have arrived in its window,
an empty expectation means nothing arrived then, and the alerts received add up to the alerts expected.

Times are seconds after the scenario's start (`At(1)` is `1`), stretched by `SCALE` when it runs. Several
scenarios share one app and one routing document: each is a child route matching its own `scenario` label
(dropped again when batches are compared), so they run at once and the whole set takes as long as the longest.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from werkzeug import Request, Response

# Alertmanager's harness allows 150 ms for start and end times, and its windows are half a second wide. Here the
# app, its scheduler, the receiver and the test share one event loop on a 2-core machine shared with other
# work, where a flush was seen up to a second late (load average 13). So a scenario runs on a clock `SCALE`
# times slower than it is written (every time, timer and window stretched alike: the same scenario), and the
# slack below is in the scenario's seconds.
SCALE = 2
TOLERANCE = 0.25  # for start and end times (a post stamps an alert without `starts_at` when it is handled)
LATE = 0.5  # how far past its window a batch may arrive
START = 2.0  # the first second of a scenario starts this long after `play`: the app's start-up jobs have run by then


@dataclass(frozen=True)
class A:
    """An alert as the scenario writes it: labels, and `active` (start[, end]) in scenario seconds."""

    labels: dict[str, str]
    start: float | None = None
    end: float | None = None
    annotations: dict[str, str] = field(default_factory=dict)


def alert(*pairs: str, active: tuple[float, ...] = (), **annotations: str) -> A:
    labels = dict(zip(pairs[::2], pairs[1::2], strict=True))
    start, end = (*active, None, None)[:2]
    return A(labels, start, end, annotations=annotations)


@dataclass
class Received:
    at: float
    alerts: list[dict[str, Any]]


class Scenario:
    def __init__(self, name: str, route: dict[str, Any], receivers: int = 1) -> None:
        self.name = name
        self.route = route
        self.receivers = receivers
        self.notifier_ids: list[str] = []
        self.actions: list[tuple[float, Callable[[Run], Awaitable[None]]]] = []
        self.wants: list[tuple[int, float, float, list[A]]] = []  # (receiver, from, to, batch)
        self.got: list[list[Received]] = [[] for _ in range(receivers)]
        self.inhibit_rules: list[dict[str, Any]] = []
        self.offset = 0.0  # when its second 0 is, after the run's: scenarios that run at once are staggered

    def push(self, at: float, *alerts: A) -> None:
        self.actions.append((at, lambda run: run.post(self, alerts)))

    def do(self, at: float, action: Callable[[Run, Scenario], Awaitable[None]]) -> None:
        self.actions.append((at, lambda run: action(run, self)))

    def want(self, between: tuple[float, float], *batch: A, receiver: int = 0) -> None:
        self.wants.append((receiver, between[0], between[1], list(batch)))

    @property
    def end(self) -> float:
        return max(to for _, _, to, _ in self.wants)

    def check(self) -> list[str]:
        """What does not hold, in words (empty: the scenario passed)."""
        problems = []
        for receiver, lo, hi, batch in self.wants:
            arrived = [r for r in self.got[receiver] if lo <= r.at <= hi + LATE]
            if not batch:
                if arrived:
                    problems.append(f"{self.name}: nothing expected in [{lo}, {hi}], got {self._show(arrived)}")
                continue
            if not any(self._equal(batch, r.alerts) for r in arrived):
                problems.append(
                    f"{self.name}: receiver {receiver} expected {self._show_expected(batch)} in [{lo}, {hi}],"
                    f" got {self._show(arrived)} (all: {self._show(self.got[receiver])})"
                )
        expected = sum(len(b) for _, _, _, b in self.wants)
        got = sum(len(r.alerts) for rs in self.got for r in rs if r.at <= self.end + LATE)
        if expected != got:
            problems.append(f"{self.name}: expected {expected} alerts in all, got {got}: {self.got}")
        return problems

    def _equal(self, batch: list[A], alerts: list[dict[str, Any]]) -> bool:
        if len(batch) != len(alerts):
            return False
        left = list(alerts)
        for want in batch:
            match = next((a for a in left if self._same(want, a)), None)
            if match is None:
                return False
            left.remove(match)
        return True

    def _same(self, want: A, got: dict[str, Any]) -> bool:
        if {k: v for k, v in got["labels"].items() if k != "scenario"} != want.labels:
            return False
        if want.annotations and got["annotations"] != want.annotations:
            return False
        start = got["start"]
        if want.start is not None and abs(start - want.start) > TOLERANCE:
            return False
        if want.end is None:
            return got["status"] == "firing"
        return got["status"] == "resolved" and abs(got["end"] - want.end) <= TOLERANCE

    def _show(self, received: list[Received]) -> str:
        return "; ".join(
            f"@{r.at:.2f} " + ", ".join(f"{a['labels'].get('alertname')}{self._times(a)}" for a in r.alerts)
            for r in received
        )

    @staticmethod
    def _times(a: dict[str, Any]) -> str:
        return f"({a['start']:.2f}" + (f", {a['end']:.2f})" if a["status"] == "resolved" else ")")

    @staticmethod
    def _show_expected(batch: list[A]) -> str:
        return ", ".join(f"{a.labels.get('alertname')}({a.start}, {a.end})" for a in batch)


class Run:
    """The scenarios against one app: their routes, their receivers, their clock."""

    def __init__(self, client: Any, auth: dict[str, str], httpserver: Any, scenarios: list[Scenario]) -> None:
        self.client = client
        self.auth = auth
        self.httpserver = httpserver
        self.scenarios = scenarios
        self.t0 = 0.0
        self.wall0 = datetime.now(UTC)

    def wall(self, scenario: Scenario, seconds: float) -> str:
        return (self.wall0 + timedelta(seconds=(scenario.offset + seconds) * SCALE)).isoformat()

    def seconds(self, scenario: Scenario, text: str) -> float:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (at - self.wall0).total_seconds() / SCALE - scenario.offset

    async def setup(self, resolve_timeout_seconds: int) -> None:
        routes, rules = [], []
        for s in self.scenarios:
            for i in range(s.receivers):
                path = f"/{s.name}/{i}"
                self.httpserver.expect_request(path, method="POST").respond_with_handler(self._receiver(s, i))
                config = {"url": self.httpserver.url_for(path), "format": "alertmanager"}
                body = {"name": f"{s.name}-{i}", "type": "webhook", "config": config}
                body.update(s.route.get("_notifier", [{}] * s.receivers)[i])
                r = await self.client.post("/v1/notifiers", headers=self.auth, json=body)
                assert r.status_code == 201, r.text
                s.notifier_ids.append(r.json()["id"])
            route = {k: v * SCALE if k.endswith("_seconds") else v for k, v in s.route.items() if not k.startswith("_")}
            routes.append({**route, "matchers": [f"scenario={s.name}"], "notifier_ids": s.notifier_ids})
            for rule in s.inhibit_rules:
                rules.append(
                    {
                        **rule,
                        "source_matchers": [*rule["source_matchers"], f"scenario={s.name}"],
                        "target_matchers": [*rule["target_matchers"], f"scenario={s.name}"],
                    }
                )
        current = await self.client.get("/v1/routing", headers=self.auth)
        doc = {
            "route": {"notifier_ids": [], "group_by": [], "routes": routes},
            "resolve_timeout_seconds": resolve_timeout_seconds * SCALE,
            "inhibit_rules": rules,
        }
        r = await self.client.put("/v1/routing", headers={**self.auth, "If-Match": current.json()["version"]}, json=doc)
        assert r.status_code == 200, r.text

    def _receiver(self, scenario: Scenario, index: int) -> Callable[[Request], Response]:
        def receive(request: Request) -> Response:
            at = (time.monotonic() - self.t0) / SCALE - scenario.offset
            body = request.get_json()
            alerts = [
                {
                    "labels": a["labels"],
                    "annotations": a["annotations"],
                    "status": a["status"],
                    "start": self.seconds(scenario, a["startsAt"]),
                    "end": self.seconds(scenario, a["endsAt"]) if a["status"] == "resolved" else None,
                }
                for a in body["alerts"]
            ]
            scenario.got[index].append(Received(at, alerts))
            return Response("", status=200)

        return receive

    async def post(self, scenario: Scenario, alerts: tuple[A, ...]) -> None:
        body = []
        for a in alerts:
            item: dict[str, Any] = {"labels": {**a.labels, "scenario": scenario.name}, "annotations": a.annotations}
            if a.start is not None:
                item["starts_at"] = self.wall(scenario, a.start)
            if a.end is not None:
                item["ends_at"] = self.wall(scenario, a.end)
            body.append(item)
        r = await self.client.post("/v1/alerts", headers=self.auth, json=body)
        assert r.status_code == 200, r.text

    async def play(self) -> list[str]:
        """Run every scenario's actions at their times; then what did not hold."""
        self.wall0 = datetime.now(UTC) + timedelta(seconds=START)
        self.t0 = time.monotonic() + START
        for i, s in enumerate(self.scenarios):  # spread over a second: their groups do not all fall due at once
            s.offset = i / len(self.scenarios)
        actions = sorted(((s.offset + at, act) for s in self.scenarios for at, act in s.actions), key=lambda x: x[0])

        async def at(when: float, act: Callable[[Run], Awaitable[None]]) -> None:
            await asyncio.sleep(max(0.0, self.t0 + when * SCALE - time.monotonic()))
            await act(self)

        await asyncio.gather(*(at(when, act) for when, act in actions))
        end = max(s.offset + s.end for s in self.scenarios) + LATE + 0.1
        await asyncio.sleep(max(0.0, self.t0 + end * SCALE - time.monotonic()))
        return [p for s in self.scenarios for p in s.check()]
