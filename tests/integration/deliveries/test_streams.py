"""One alert's messages in order after an outage, and mutes that defer: a threshold monitor evaluated by the
loop's own code, its messages sent by the worker running as in a server (in the background, retries on their
timers), to real local receivers (pytest-httpserver)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from werkzeug import Response

from adapters import testing as kit
from app.deliveries import service
from app.deliveries.worker import Dispatcher, serve
from tests.integration.monitors.conftest import Harness

ERRORS_5XX = "['web'] | where status >= 500 | summarize count()"


@pytest.fixture
async def h(client, auth, db, worker, httpserver) -> Harness:
    return Harness(client, auth, db, worker.env, httpserver)


@pytest.fixture
async def serving(worker) -> AsyncIterator[Dispatcher]:
    """The worker as a server runs it: sends in the background, woken by timers, by each finished send and by
    the scheduler's poll (every `delivery_poll_seconds`)."""
    dispatcher = Dispatcher(worker.env)

    async def poll() -> None:
        while True:
            serve(dispatcher)
            await asyncio.sleep(worker.env.settings.delivery_poll_seconds)

    poller = asyncio.create_task(poll())
    yield dispatcher
    poller.cancel()
    await dispatcher.stop(grace=5)


class Outage:
    """A receiver that answers 500 until `until`, then 204; it records (arrival time, status, body)."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds
        self.log: list[tuple[float, int, dict]] = []

    def __call__(self, request):
        status = 500 if time.monotonic() < self.until else 204
        self.log.append((time.monotonic(), status, json.loads(request.get_data())))
        return Response("down" if status == 500 else "", status=status)

    def delivered(self) -> list[dict]:
        return [body for _, status, body in self.log if status == 204]


async def trigger_then_resolve(h: Harness, notifier_id: str) -> dict:
    """A monitor that triggers (run at t=120) and resolves (run at t=240); returns it."""
    m = await h.monitor(
        name="API 5xx", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[notifier_id]
    )
    await h.ingest("web", [{"_time": h.at(70), "status": 500} for _ in range(5)])
    assert (await h.run(h.at(120))).deliveries == 1
    await h.deliver()  # the first attempt fails: the receiver is down
    await h.ingest("web", [{"_time": h.at(200), "status": 500}])
    assert (await h.run(h.at(240))).deliveries == 1
    return m


async def wait_until(predicate, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not await predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def settled(h: Harness, monitor_id: str, count: int) -> bool:
    rows = await h.deliveries(monitor_id)
    return len(rows) == count and all(d["status"] not in ("pending", "retrying", "deferred") for d in rows)


async def test_after_an_outage_triggered_arrives_before_resolved(h, httpserver, serving):
    outage = Outage(seconds=3)
    httpserver.expect_request("/hook", method="POST").respond_with_handler(outage)
    hook = await h.webhook("/hook")
    m = await trigger_then_resolve(h, hook["id"])
    await wait_until(lambda: settled(h, m["id"], 2), seconds=30)

    assert [b["type"] for b in outage.delivered()] == ["monitor.triggered", "monitor.resolved"]
    # The resolve was not tried while the trigger was failing: every failed request was the trigger.
    assert {b["type"] for _, status, b in outage.log if status == 500} == {"monitor.triggered"}
    assert {d["status"] for d in await h.deliveries(m["id"])} == {"succeeded"}


async def test_incident_a_gets_trigger_then_resolve_for_one_dedup_key(h, auth, httpserver, serving):
    outage = Outage(seconds=3)
    httpserver.expect_request("/pd/v2/enqueue", method="POST").respond_with_handler(outage)
    r = await h.client.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "pager", "type": "incident_a", "config": {"integration_key": "k" * 32}},
    )
    assert r.status_code == 201, r.text
    m = await trigger_then_resolve(h, r.json()["id"])
    await wait_until(lambda: settled(h, m["id"], 2), seconds=30)

    delivered = outage.delivered()
    assert [b["event_action"] for b in delivered] == ["trigger", "resolve"]
    assert delivered[0]["dedup_key"] == delivered[1]["dedup_key"]  # the incident it opened is the one closed


async def mute(h: Harness, notifier_id: str, until: datetime | None) -> None:
    body = {"disabled_until": until.isoformat() if until else None}
    r = await h.client.patch(f"/v1/notifiers/{notifier_id}", headers=h.auth, json=body)
    assert r.status_code == 200, r.text


def errors(h: Harness, at: float, count: int) -> list[dict]:
    return [{"_time": h.at(at), "status": 500} for _ in range(count)]


async def test_unmute_while_alerting_sends_the_latest_state_once(h, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    hook = await h.webhook("/hook")
    await mute(h, hook["id"], datetime.now(UTC) + timedelta(hours=1))
    m = await h.monitor(
        name="API 5xx", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[hook["id"]]
    )
    # Muted: triggers, resolves, triggers again. Nothing is sent; the first message waits (deferred).
    await h.ingest("web", errors(h, 70, 5) + errors(h, 200, 1) + errors(h, 310, 6))
    for at in (120, 240, 360):
        assert (await h.run(h.at(at))).deliveries == 1
        await h.deliver()
    assert httpserver.log == []
    first = (await h.deliveries(m["id"]))[-1]
    assert first["status"] == "deferred" and first["error"].startswith("the notifier is disabled until ")
    assert first["attempts"] == 0

    await mute(h, hook["id"], None)  # unmuted while the monitor is alerting
    await h.deliver()
    assert [b["type"] for b in h.received_raw()] == ["monitor.triggered"]
    assert h.received_raw()[0]["data"]["value"] == 6  # the latest state, not the first trigger
    newest, *older = await h.deliveries(m["id"])  # newest first
    assert newest["status"] == "succeeded" and newest["attempts"] == 1
    assert [d["status"] for d in older] == ["superseded", "superseded"]
    assert all(d["error"].startswith(f"superseded by {newest['id']}: the notifier was muted") for d in older)
    listed = await h.client.get("/v1/deliveries", headers=h.auth, params={"status": "superseded"})
    assert {d["id"] for d in listed.json()["data"]} == {d["id"] for d in older}


async def test_an_alert_over_before_the_mute_ends_is_not_sent(h, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    hook = await h.webhook("/hook")
    await mute(h, hook["id"], datetime.now(UTC) + timedelta(hours=1))
    m = await h.monitor(
        name="API 5xx", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[hook["id"]]
    )
    await h.ingest("web", errors(h, 70, 5) + errors(h, 200, 1))
    for at in (120, 240):
        await h.run(h.at(at))
        await h.deliver()
    await mute(h, hook["id"], None)
    await h.deliver()
    assert httpserver.log == []  # the destination never heard it fire, and all is well again
    resolved, triggered = await h.deliveries(m["id"])
    assert triggered["status"] == "superseded" and triggered["error"].startswith(f"superseded by {resolved['id']}")
    assert resolved["status"] == "superseded"
    assert resolved["error"] == "not sent: the alert fired and resolved while the notifier was muted"


async def test_a_mute_that_runs_out_sends_what_is_still_true(h, httpserver, serving):
    arrived: list[float] = []

    def receive(request):
        arrived.append(time.monotonic())
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    hook = await h.webhook("/hook")
    ends = datetime.now(UTC) + timedelta(seconds=2)
    await mute(h, hook["id"], ends)
    m = await h.monitor(
        name="API 5xx", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[hook["id"]]
    )
    await h.ingest("web", errors(h, 70, 5))
    assert (await h.run(h.at(120))).deliveries == 1
    serving.wake()  # as the monitor loop does after queueing
    await wait_until(lambda: settled(h, m["id"], 1), seconds=15)
    # Sent once the mute ran out (the worker's own timer), not failed, not before.
    assert len(arrived) == 1 and datetime.now(UTC) >= ends
    (d,) = await h.deliveries(m["id"])
    assert d["status"] == "succeeded" and d["attempts"] == 1


async def test_each_stream_keeps_its_order_under_concurrency(h, db, httpserver, serving):
    # Three monitors' streams to one notifier and one stream to another, 15 messages each, queued at once; the
    # worker sends up to 8 at a time per notifier, yet each stream arrives in the order it was made.
    arrived: list[str] = []

    def receive(request):
        arrived.append(request.headers["webhook-id"])
        time.sleep(0.002)
        return Response("", status=204)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    a, b = (await h.webhook("/hook"))["id"], (await h.webhook("/hook"))["id"]
    streams = [(a, "mon_1"), (a, "mon_2"), (a, "mon_3"), (b, "mon_1")]
    made: dict[tuple[str, str], list[str]] = {s: [] for s in streams}
    events = kit.sample_events()
    async with db() as s:
        for i in range(15):
            for notifier_id, monitor_id in streams:
                event = events["triggered" if i % 2 == 0 else "resolved"]
                d = service.enqueue(s, h.env, notifier_id=notifier_id, event=event, monitor_id=monitor_id)
                made[(notifier_id, monitor_id)].append(d.id)
        await s.commit()
    serving.wake()
    await wait_until(lambda: asyncio.sleep(0, len(arrived) == 60), seconds=30)
    for ids in made.values():
        assert [i for i in arrived if i in ids] == ids
    assert sorted(arrived) == sorted(i for ids in made.values() for i in ids)  # each once
