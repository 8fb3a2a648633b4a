"""Monitors feed routing: `labels` on monitors, one alert per monitor (or group), routed by the tree when the
monitor names no notifiers; a monitor's own notifiers keep today's messages, with silences applied."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from app.timefmt import iso_ms
from tests.helpers import assert_error
from tests.integration.monitors.test_groups_and_runs import BY_SERVICE
from tests.integration.monitors.test_threshold import ERRORS_5XX, errors


async def alerts(h, headers=None, **params):
    r = await h.client.get("/v1/alerts", headers=headers or h.auth, params={"limit": 100, **params})
    assert r.status_code == 200, r.text
    return r.json()["data"]


async def test_labels_are_checked_kept_and_changed(h):
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=3, labels={"team": "payments", "tier": "1"})
    assert m["labels"] == {"team": "payments", "tier": "1"}
    assert (await h.get(m["id"]))["labels"] == {"team": "payments", "tier": "1"}
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"labels": {"team": "web"}})
    assert r.status_code == 200 and r.json()["labels"] == {"team": "web"}
    for labels, param in [
        ({"bad-name": "x"}, "labels.bad-name"),
        ({"alertname": "x"}, "labels.alertname"),
        ({"a": "v" * 1025}, "labels.a"),
        ({f"l{i}": "v" for i in range(65)}, "labels"),
    ]:
        body = {
            "name": "x",
            "type": "threshold",
            "apl": ERRORS_5XX,
            "operator": "above",
            "threshold": 1,
            "notifier_ids": [],
            "labels": labels,
        }
        assert_error(await h.client.post("/v1/monitors", headers=h.auth, json=body), 400, "invalid_field", param=param)
        r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"labels": labels})
        assert_error(r, 400, "invalid_field", param=param)


async def test_a_monitor_without_notifiers_is_routed_by_the_tree(h):
    hook = await h.webhook()
    current = (await h.client.get("/v1/routing", headers=h.auth)).json()
    r = await h.client.put(
        "/v1/routing",
        headers={**h.auth, "If-Match": current["version"]},
        json={
            "route": {
                "notifier_ids": [],
                "group_by": ["alertname"],
                "group_wait_seconds": 0,
                "group_interval_seconds": 60,
                "routes": [{"matchers": ["team=payments"], "notifier_ids": [hook["id"]]}],
            }
        },
    )
    assert r.status_code == 200, r.text
    m = await h.monitor(
        name="API 5xx by service",
        apl=BY_SERVICE,
        operator="above",
        threshold=2,
        notify_by_group=True,
        labels={"team": "payments"},
        description="Server errors.",
    )
    renv = RoutingEnv(h.env)
    await h.ingest("web", errors(h, 10, 3, "api") + errors(h, 20, 5, "auth"))
    tick = await h.run(h.at(60))
    # No notifiers of its own: the tree's route (group_wait 0) is flushed by the router that the tick runs
    # right after its commit, not at the next routing tick (issue 26, item 5: the old expectation, 0, was that
    # tick's delay).
    assert tick.deliveries == 1
    found = {a["labels"]["service"]: a for a in await alerts(h)}
    assert set(found) == {"api", "auth"}
    api = found["api"]
    assert api["labels"] == {
        "alertname": "API 5xx by service",
        "monitor_id": m["id"],
        "dataset": "web",
        "team": "payments",
        "service": "api",
    }
    assert api["state"] == "firing" and api["source"] == {"type": "monitor", "monitor_id": m["id"]}
    assert api["annotations"]["summary"] == "API 5xx by service is alerting: the value 3 is above the threshold 2."
    assert api["annotations"]["value"] == "3" and api["annotations"]["threshold"] == "above 2"
    assert api["annotations"]["description"] == "Server errors."
    assert api["annotations"]["link"].endswith(f"/ui/monitors/{m['id']}")
    await run_routing(renv, h.at(61))
    await run_routing(renv, h.at(61))
    assert await h.deliver() == 1
    (message,) = h.received_raw()
    assert message["type"] == "alerts.firing" and message["data"]["reason"] == "first"
    assert sorted(a["labels"]["service"] for a in message["data"]["alerts"]) == ["api", "auth"]
    await h.ingest("web", errors(h, 70, 4, "auth"))
    await h.run(h.at(120))  # api recovers
    assert {a["labels"]["service"]: a["state"] for a in await alerts(h)} == {"api": "resolved", "auth": "firing"}
    await run_routing(renv, h.at(125))
    assert await h.deliver() == 1
    assert h.received_raw()[-1]["data"]["reason"] == "resolved"
    r = await h.client.delete(f"/v1/monitors/{m['id']}", headers=h.auth)
    assert r.status_code == 204
    assert {a["state"] for a in await alerts(h)} == {"resolved"}  # a deleted monitor's alerts resolve


async def test_own_notifiers_keep_todays_messages_and_silences_apply(h):
    hook = await h.webhook()
    m = await h.monitor(
        name="Checkout errors",
        apl=ERRORS_5XX,
        operator="above",
        threshold=3,
        notifier_ids=[hook["id"]],
        labels={"team": "payments"},
    )
    r = await h.client.post(
        "/v1/silences",
        headers=h.auth,
        json={"matchers": ["team=payments"], "ends_at": (h.at(0) + timedelta(days=1)).isoformat(), "comment": "deploy"},
    )
    sid = r.json()["id"]
    b = 600  # the harness's times start 5 minutes ago; the silence starts now: evaluate after it
    await h.ingest("web", errors(h, b + 10, 5))
    tick = await h.run(h.at(b + 60))
    assert tick.deliveries == 0  # silenced: the trigger is not sent
    (alert,) = await alerts(h)
    assert alert["state"] == "suppressed" and alert["silenced_by"] == [sid]
    assert (await h.get(m["id"]))["state"] == "alerting"
    assert (await h.history(m["id"]))[0]["deliveries"] == []
    await h.client.delete(f"/v1/silences/{sid}", headers=h.auth)
    await h.run(h.at(b + 120))  # resolved; its trigger was never sent, so neither is this
    assert await h.deliver() == 0
    await h.ingest("web", errors(h, b + 130, 5))
    assert (await h.run(h.at(b + 180))).deliveries == 1  # no silence now: today's message
    await h.run(h.at(b + 240))
    assert await h.deliver() == 2
    triggered, resolved = h.received()
    assert triggered["type"] == "monitor.triggered" and resolved["type"] == "monitor.resolved"


async def test_no_data_and_error_alerts_carry_beacon_state(h):
    m = await h.monitor(
        apl="['web'] | summarize avg(duration_ms)", operator="above", threshold=500, alert_on_no_data=True
    )
    await h.run(h.at(60))  # the dataset does not exist yet: no data
    (alert,) = await alerts(h)
    assert alert["labels"]["beacon_state"] == "no_data" and alert["labels"]["monitor_id"] == m["id"]
    assert alert["annotations"]["summary"].endswith("found no data for its query.")
    await h.ingest("web", [{"_time": h.at(90), "duration_ms": 900}])
    await h.run(h.at(120))
    states = {a["labels"].get("beacon_state", "-"): a["state"] for a in await alerts(h)}
    assert states == {"no_data": "resolved", "-": "firing"}


async def test_changed_labels_move_a_firing_alert_and_limited_tokens_see_their_datasets(h, make_token):
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=3, labels={"team": "a"})
    await h.ingest("web", errors(h, 10, 5))
    await h.run(h.at(60))
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"labels": {"team": "b"}})
    assert r.status_code == 200
    assert {(a["labels"]["team"], a["state"]) for a in await alerts(h)} == {("a", "resolved"), ("b", "firing")}
    web = {"Authorization": f"Bearer {await make_token(['alerts:read'], datasets=['web'])}"}
    other = {"Authorization": f"Bearer {await make_token(['alerts:read'], datasets=['other'])}"}
    assert len(await alerts(h, web)) == 2 and await alerts(h, other) == []


async def test_a_match_fires_its_alert_for_the_resolve_timeout(h):
    m = await h.monitor(name="Server errors", type="match_event", interval_seconds=10,
                        apl="['web'] | where status >= 500", operator=None, threshold=None)  # fmt: skip
    await h.ingest("web", [{"status": 503}, {"status": 502}])
    at = datetime.now(UTC)
    await h.run(at)
    (alert,) = await alerts(h)
    assert alert["labels"] == {"alertname": "Server errors", "monitor_id": m["id"], "dataset": "web"}
    assert alert["state"] == "firing" and alert["annotations"]["summary"] == "Server errors: new events matched (2)."
    assert alert["ends_at"] == iso_ms(at + timedelta(minutes=5))
