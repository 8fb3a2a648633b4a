"""Threshold monitors end to end: events in through ingest, the loop evaluates, state changes once, the webhook
receiver gets one message per change with what an on-call engineer needs."""

from __future__ import annotations

from dataclasses import replace

import asyncpg
from sqlalchemy import text

from app.monitors.tick import evaluate_due
from app.settings import asyncpg_dsn
from app.timefmt import iso_ms as _iso
from tests.helpers import captured_logs

ERRORS_5XX = "['web'] | where status >= 500 | summarize count()"


def errors(h, at_seconds: float, count: int, service: str = "api", status: int = 500):
    return [{"_time": h.at(at_seconds), "status": status, "service": service} for _ in range(count)]


async def test_ok_alerting_ok_notifies_once_each_way(h):
    hook = await h.webhook()
    m = await h.monitor(
        name="API 5xx",
        description="Too many server errors.",
        apl=ERRORS_5XX,
        operator="above",
        threshold=3,
        interval_seconds=60,
        notifier_ids=[hook["id"]],
    )
    assert m["state"] == "ok" and m["last_evaluated_at"] is None
    # Run 1 at t=60 over [0, 60): 2 errors, not above 3.
    await h.ingest("web", errors(h, 10, 2) + errors(h, 20, 5, status=200))
    await h.run(h.at(60))
    assert (await h.get(m["id"]))["state"] == "ok"
    # Run 2 at t=120 over [60, 120): 5 errors -> alerting, one message.
    await h.ingest("web", errors(h, 70, 5))
    tick = await h.run(h.at(120))
    assert tick.evaluated == 1 and tick.deliveries == 1
    got = await h.get(m["id"])
    assert got["state"] == "alerting" and got["last_value"] == 5
    assert got["last_evaluated_at"] == _iso(h.at(120))
    # Run 3 at t=180, still 4 errors in [120, 180): still alerting, no second message.
    await h.ingest("web", errors(h, 130, 4))
    tick = await h.run(h.at(180))
    assert tick.deliveries == 0 and (await h.get(m["id"]))["state"] == "alerting"
    # Run 4 at t=240, 1 error: resolved, one message.
    await h.ingest("web", errors(h, 200, 1))
    tick = await h.run(h.at(240))
    assert tick.deliveries == 1 and (await h.get(m["id"]))["state"] == "ok"

    assert await h.deliver() == 2
    triggered, resolved = h.received()
    assert triggered["type"] == "monitor.triggered" and resolved["type"] == "monitor.resolved"
    data = triggered["data"]
    assert data["monitor_id"] == m["id"] and data["monitor_name"] == "API 5xx"
    assert data["state"] == "alerting" and data["value"] == 5 and data["threshold"] == 3
    assert data["operator"] == "above" and data["query"] == ERRORS_5XX
    assert data["description"] == "Too many server errors."
    assert data["start_time"] == _iso(h.at(60)) and data["end_time"] == _iso(h.at(120))
    assert data["link"] == f"http://testserver.local/ui/monitors/{m['id']}"
    assert data["summary"].startswith("API 5xx is alerting: the value 5 is above the threshold 3.")
    assert resolved["data"]["state"] == "ok" and resolved["data"]["value"] == 1
    assert data["monitor_event_id"].startswith("mev_")

    history = await h.history(m["id"])
    assert [e["kind"] for e in history] == ["resolved", "triggered"]  # newest first
    assert history[1]["value"] == 5 and history[1]["threshold"] == 3 and history[1]["group"] == {}
    assert history[1]["time"] == _iso(h.at(120)) and history[1]["object"] == "monitor_event"
    deliveries = await h.deliveries(m["id"])
    assert sorted(d["id"] for d in deliveries) == sorted(history[0]["deliveries"] + history[1]["deliveries"])
    assert {d["status"] for d in deliveries} == {"succeeded"}
    assert {d["monitor_event_id"] for d in deliveries} == {e["id"] for e in history}


async def test_state_change_adds_monitor_annotation_on_the_dataset(h):
    m = await h.monitor(name="API 5xx", apl=ERRORS_5XX, operator="above_or_equal", threshold=2)
    await h.ingest("web", errors(h, 10, 2))
    await h.run(h.at(60))
    await h.run(h.at(61 + 60))  # nothing in the next minute: resolved
    r = await h.client.get("/v1/annotations", headers=h.auth, params={"datasets": "web", "type": "monitor"})
    assert r.status_code == 200
    annotations = r.json()["data"]
    assert [a["title"] for a in annotations] == ["API 5xx: resolved", "API 5xx: alerting"]
    assert annotations[1]["datasets"] == ["web"] and annotations[1]["time"] == _iso(h.at(60))
    assert annotations[1]["url"] == f"http://testserver.local/ui/monitors/{m['id']}"
    assert "value 2" in annotations[1]["description"] and "at or above 2" in annotations[1]["description"]
    # A run that changes nothing adds nothing.
    await h.run(h.at(200))
    r = await h.client.get("/v1/annotations", headers=h.auth, params={"datasets": "web"})
    assert len(r.json()["data"]) == 2


async def test_below_and_time_bins_compare_the_bin_most_in_breach(h):
    # Fewer than 2 requests in any minute bin of the last 3 minutes: the quietest bin decides.
    m = await h.monitor(
        apl="['web'] | summarize n = count() by bin(_time, 1m)",
        operator="below",
        threshold=2,
        interval_seconds=60,
        range_seconds=180,
    )
    await h.ingest("web", errors(h, 5, 3) + errors(h, 65, 1) + errors(h, 125, 4))
    await h.run(h.at(180))
    got = await h.get(m["id"])
    assert got["state"] == "alerting" and got["last_value"] == 1


async def test_m_of_n(h):
    hook = await h.webhook()
    m = await h.monitor(
        apl=ERRORS_5XX,
        operator="above",
        threshold=0,
        interval_seconds=60,
        trigger_after={"m": 2, "n": 3},
        notifier_ids=[hook["id"]],
    )
    assert m["trigger_after"] == {"m": 2, "n": 3}
    states = []
    # breach, clear, breach: 2 of the last 3 -> alerting on the third run; it stays alerting while 2 of the
    # last 3 breached, and resolves when only 1 of the last 3 did.
    for minute, count in enumerate([1, 0, 1, 1, 0, 0], start=1):
        if count:
            await h.ingest("web", errors(h, minute * 60 - 30, count))
        await h.run(h.at(minute * 60))
        states.append((await h.get(m["id"]))["state"])
    assert states == ["ok", "ok", "alerting", "alerting", "alerting", "ok"]
    assert [e["kind"] for e in await h.history(m["id"])] == ["resolved", "triggered"]
    assert await h.deliver() == 2


async def test_not_resolvable_records_the_return_to_ok_without_a_message(h):
    hook = await h.webhook()
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=0, resolvable=False, notifier_ids=[hook["id"]])
    await h.ingest("web", errors(h, 10, 1))
    await h.run(h.at(60))
    await h.run(h.at(120))
    assert (await h.get(m["id"]))["state"] == "ok"
    resolved, triggered = await h.history(m["id"])
    assert resolved["kind"] == "resolved" and resolved["deliveries"] == []
    assert len(triggered["deliveries"]) == 1
    assert await h.deliver() == 1
    assert [b["type"] for b in h.received()] == ["monitor.triggered"]


async def test_no_data_with_alert_on_no_data(h):
    hook = await h.webhook()
    avg = "['web'] | summarize avg(duration_ms)"
    m = await h.monitor(apl=avg, operator="above", threshold=500, alert_on_no_data=True, notifier_ids=[hook["id"]])
    # The dataset does not exist yet: no data.
    await h.run(h.at(60))
    got = await h.get(m["id"])
    assert got["state"] == "no_data" and got["last_value"] is None
    await h.run(h.at(120))  # still no data: no second message
    await h.ingest("web", [{"_time": h.at(150), "duration_ms": 100}])
    await h.run(h.at(180))  # data again, under the threshold: resolved
    assert (await h.get(m["id"]))["state"] == "ok"
    assert [e["kind"] for e in await h.history(m["id"])] == ["resolved", "no_data"]
    assert await h.deliver() == 2
    no_data, resolved = h.received()
    assert no_data["data"]["kind"] == "no_data" and no_data["data"]["state"] == "no_data"
    assert "found no data" in no_data["data"]["summary"]
    assert resolved["data"]["kind"] == "resolved" and resolved["data"]["value"] == 100


async def test_no_data_without_alert_on_no_data_counts_as_not_breached(h):
    hook = await h.webhook()
    m = await h.monitor(
        apl="['web'] | summarize avg(duration_ms)", operator="above", threshold=500, notifier_ids=[hook["id"]]
    )
    await h.ingest("web", [{"_time": h.at(30), "duration_ms": 900}])
    await h.run(h.at(60))
    assert (await h.get(m["id"]))["state"] == "alerting"
    await h.run(h.at(120))  # nothing in [60, 120): not breached -> resolved; never no_data
    got = await h.get(m["id"])
    assert got["state"] == "ok" and got["last_value"] is None
    assert [e["kind"] for e in await h.history(m["id"])] == ["resolved", "triggered"]


async def test_failing_query_is_error_then_resolves(h):
    hook = await h.webhook()
    bad = "['web'] | where message matches regex '(' | summarize count()"
    m = await h.monitor(apl=bad, operator="above", threshold=0, notifier_ids=[hook["id"]])
    await h.ingest("web", [{"_time": h.at(30), "message": "boom"}])
    await h.run(h.at(60))
    got = await h.get(m["id"])
    assert got["state"] == "error"
    assert "regular expression" in got["last_error"]
    await h.run(h.at(120))  # still failing: no second message
    r = await h.client.patch(
        f"/v1/monitors/{m['id']}", headers=h.auth, json={"apl": "['web'] | where message == 'x' | summarize count()"}
    )
    assert r.status_code == 200, r.text
    await h.run(h.at(180))
    got = await h.get(m["id"])
    assert got["state"] == "ok" and got["last_error"] is None
    resolved, error = await h.history(m["id"])
    assert error["kind"] == "error" and "regular expression" in error["error"]
    assert resolved["kind"] == "resolved"
    assert await h.deliver() == 2
    error_msg, resolved_msg = h.received()
    assert error_msg["data"]["kind"] == "error" and "regular expression" in error_msg["data"]["error"]
    assert resolved_msg["type"] == "monitor.resolved"


async def test_error_keeps_an_alert_open_and_recovery_says_it_still_alerts(h, database_url):
    hook = await h.webhook()
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=0, notifier_ids=[hook["id"]])
    await h.ingest("web", errors(h, 30, 2) + errors(h, 150, 1))
    await h.run(h.at(60))
    # The next run's query waits for a lock past the statement timeout: error, and the alert is neither resolved
    # nor re-triggered by it.
    h.env = replace(h.env, settings=replace(h.env.settings, monitor_query_timeout_seconds=0.3))
    blocker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await blocker.execute("BEGIN; LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        await h.run(h.at(120))
    finally:
        await blocker.close()
    got = await h.get(m["id"])
    assert got["state"] == "error" and "0.3 s statement timeout" in got["last_error"]
    await h.run(h.at(180))
    assert (await h.get(m["id"]))["state"] == "alerting"
    assert [e["kind"] for e in await h.history(m["id"])] == ["triggered", "error", "triggered"]
    assert await h.deliver() == 3
    assert sorted(b["data"]["kind"] for b in h.received()) == ["error", "triggered", "triggered"]


async def test_missed_runs_are_not_replayed(h):
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=0, interval_seconds=60)
    await h.run(h.at(60))
    # The service was down for an hour: one evaluation at t=3660+, and the next one is on the old cadence.
    tick = await h.run(h.at(3600 + 75))
    assert tick.evaluated == 1
    got = await h.get(m["id"])
    assert got["next_evaluation_at"] == _iso(h.at(3600 + 120))
    tick = await evaluate_due(h.env, lanes=1, now=h.at(3600 + 119))
    assert tick.evaluated == 0  # not due again yet: nothing to replay


async def test_disabled_until_skips_evaluation(h):
    future = h.at(600)
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=0, disabled_until=_iso(future))
    assert m["disabled_until"] == _iso(future)
    assert m["next_evaluation_at"] >= m["disabled_until"]  # not even looked at before
    await h.ingest("web", errors(h, 30, 3))
    tick = await h.run(h.at(60))
    assert tick.evaluated == 0 and (await h.get(m["id"]))["last_evaluated_at"] is None
    # After disabled_until the monitor runs again (once, whatever it missed).
    await h.ingest("web", errors(h, 640, 3))
    tick = await h.run(h.at(660))
    assert tick.evaluated == 1 and (await h.get(m["id"]))["state"] == "alerting"
    # Disabling an alerting monitor keeps its state; re-enabling with null.
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"disabled_until": _iso(h.at(10_000))})
    assert r.status_code == 200 and r.json()["disabled_until"] == _iso(h.at(10_000))
    assert r.json()["next_evaluation_at"] == _iso(h.at(10_000))
    assert (await h.run(h.at(900))).evaluated == 0
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"disabled_until": None})
    assert r.json()["disabled_until"] is None
    assert (await h.run(h.at(960))).evaluated == 1


async def test_a_monitor_that_cannot_be_evaluated_holds_up_no_other(h):
    broken = await h.monitor(name="broken", apl=ERRORS_5XX, operator="above", threshold=0)
    healthy = await h.monitor(name="healthy", apl=ERRORS_5XX, operator="above", threshold=0)
    await h.ingest("web", errors(h, 30, 1))
    async with h.db() as s:  # a stored state that no longer decodes
        await s.execute(text("UPDATE monitors SET series = '{\"\": 5}' WHERE id = :id"), {"id": broken["id"]})
        await s.commit()
    with captured_logs("beacon.monitors") as logs:
        tick = await h.run(h.at(60))
    assert tick.evaluated == 1
    assert (await h.get(healthy["id"]))["state"] == "alerting"
    after = await h.get(broken["id"])
    assert after["last_evaluated_at"] is None and after["next_evaluation_at"] == _iso(h.at(120))  # postponed
    assert any(f"evaluating monitor {broken['id']} failed" in line for line in logs)
    assert (await evaluate_due(h.env, lanes=1, now=h.at(61))).evaluated == 0  # not claimed again at once
