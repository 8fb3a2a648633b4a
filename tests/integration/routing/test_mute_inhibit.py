"""Mute and active time intervals on routes (IANA zones, across a DST change), and inhibition with `equal`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.integration.routing.conftest import summary

NIGHTS = {
    "name": "nights",
    "intervals": [{"times": [{"start_time": "22:00", "end_time": "07:00"}], "location": "Europe/Berlin"}],
}
OFFICE = {
    "name": "office",
    "intervals": [
        {
            "times": [{"start_time": "09:00", "end_time": "17:00"}],
            "weekdays": ["monday:friday"],
            "location": "America/New_York",
        }
    ],
}


async def test_nights_mute_a_route_in_berlin_across_the_dst_change(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [],
            "group_wait_seconds": 60,
            "group_interval_seconds": 60,
            "routes": [{"matchers": ["team=payments"], "notifier_ids": [hook], "mute_time_intervals": ["nights"]}],
        },
        time_intervals=[NIGHTS],
    )
    # Saturday 2026-03-28 23:30 CET. Clocks go forward in Berlin at 02:00 that night (CET -> CEST).
    h.clock.now = datetime(2026, 3, 28, 22, 30, tzinfo=UTC)
    await h.post(
        {"labels": {"alertname": "Down", "team": "payments"}, "ends_at": (h.clock.now + timedelta(days=1)).isoformat()}
    )
    assert await h.step() == []
    assert await h.step(60) == []  # muted: nothing sent, nothing forgotten
    (alert,) = await h.alerts()
    assert alert["state"] == "suppressed" and alert["muted_by"] == ["nights"] and alert["silenced_by"] == []
    r = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": {"team": "payments"}})
    assert r.json()["muted"] is True and r.json()["routes"][0]["muted_by"] == ["nights"]
    h.clock.now = datetime(2026, 3, 29, 4, 59, 30, tzinfo=UTC)  # 06:59:30 CEST: still night
    assert await h.step() == []
    # 05:00:30 UTC is 07:00:30 CEST: morning in Berlin (it would still be 06:00:30 without the change).
    (first,) = await h.step(60)
    assert summary(first)[:2] == ("first", "firing")
    (alert,) = await h.alerts()
    assert alert["state"] == "firing" and alert["muted_by"] == []


async def test_active_intervals_mute_outside_office_hours_in_new_york(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [],
            "group_wait_seconds": 0,
            "group_interval_seconds": 3600,
            "routes": [{"matchers": ["team=web"], "notifier_ids": [hook], "active_time_intervals": ["office"]}],
        },
        time_intervals=[OFFICE],
    )
    h.clock.now = datetime(2026, 7, 10, 12, 0, tzinfo=UTC)  # Friday 08:00 EDT
    await h.post(
        {"labels": {"alertname": "Slow", "team": "web"}, "ends_at": (h.clock.now + timedelta(days=5)).isoformat()}
    )
    assert await h.step() == []
    (alert,) = await h.alerts()
    assert alert["muted_by"] == ["office"] and alert["state"] == "suppressed"
    (first,) = await h.step(3600)  # 09:00 EDT
    assert summary(first)[0] == "first"
    h.clock.now = datetime(2026, 7, 10, 21, 0, tzinfo=UTC)  # 17:00 EDT: closed
    await h.post(
        {
            "labels": {"alertname": "Slow", "team": "web", "instance": "2"},
            "ends_at": (h.clock.now + timedelta(days=5)).isoformat(),
        }
    )
    assert await h.step() == []
    h.clock.now = datetime(2026, 7, 13, 12, 30, tzinfo=UTC)  # Monday 08:30 EDT: still closed
    assert await h.step() == []
    (update,) = await h.step(3600)  # Monday 09:30 EDT
    assert summary(update)[0] == "new_alerts"


async def test_inhibition_with_equal(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [hook],
            "group_by": ["alertname", "cluster"],
            "group_wait_seconds": 0,
            "group_interval_seconds": 60,
        },
        inhibit_rules=[
            {"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"], "equal": ["cluster"]}
        ],
    )
    day = (h.clock.now + timedelta(days=1)).isoformat()
    crit, warn_eu, warn_us = await h.post(
        {"labels": {"alertname": "DatabaseDown", "severity": "critical", "cluster": "eu"}, "ends_at": day},
        {"labels": {"alertname": "LatencyHigh", "severity": "warning", "cluster": "eu"}, "ends_at": day},
        {"labels": {"alertname": "LatencyHigh", "severity": "warning", "cluster": "us"}, "ends_at": day},
    )
    states = {a["fingerprint"]: (a["state"], a["inhibited_by"]) for a in await h.alerts()}
    assert states == {crit: ("firing", []), warn_eu: ("suppressed", [crit]), warn_us: ("firing", [])}
    await h.route()
    sent = await h.step()
    assert sorted((m["data"]["group_labels"]["alertname"], m["data"]["group_labels"]["cluster"]) for m in sent) == [
        ("DatabaseDown", "eu"),
        ("LatencyHigh", "us"),
    ]
    r = await h.client.post(
        "/v1/routing/test", headers=h.auth, json={"labels": {"alertname": "X", "severity": "warning", "cluster": "eu"}}
    )
    assert r.json()["inhibited"] is True and r.json()["inhibited_by"] == [crit]
    await h.post(
        {
            "labels": {"alertname": "DatabaseDown", "severity": "critical", "cluster": "eu"},
            "ends_at": h.clock.now.isoformat(),
        }
    )
    sent = await h.step(60)  # the source resolved: its group says so, and the warning is no longer held back
    assert sorted((*summary(m)[:2], m["data"]["group_labels"]["alertname"]) for m in sent) == [
        ("first", "firing", "LatencyHigh"),
        ("resolved", "resolved", "DatabaseDown"),
    ]


async def test_a_dataset_limited_token_learns_of_no_alert_it_may_not_see(h, make_token):
    """The routing test and the status answer a limited token from the alerts it may see: an external alert
    (of no dataset) that inhibits the labels it tries is not named, not counted, and not betrayed."""
    hook = await h.notifier()
    await h.routing(
        {"notifier_ids": [hook], "group_by": ["alertname"]},
        inhibit_rules=[
            {"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"], "equal": ["cluster"]}
        ],
    )
    day = (h.clock.now + timedelta(days=1)).isoformat()
    (crit,) = await h.post({"labels": {"alertname": "Down", "severity": "critical", "cluster": "eu"}, "ends_at": day})
    await h.route()
    probe = {"labels": {"alertname": "X", "severity": "warning", "cluster": "eu"}}
    admin = (await h.client.post("/v1/routing/test", headers=h.auth, json=probe)).json()
    assert admin["inhibited"] is True and admin["inhibited_by"] == [crit]
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    seen = (await h.client.post("/v1/routing/test", headers=limited, json=probe)).json()
    assert seen["inhibited"] is False and seen["inhibited_by"] == []
    status = (await h.client.get("/v1/routing/status", headers=limited)).json()
    assert (status["alerts_firing"], status["groups"], status["counters"]) == (0, 0, {})
    full = (await h.client.get("/v1/routing/status", headers=h.auth)).json()
    assert (full["alerts_firing"], full["groups"]) == (1, 1) and full["counters"]["alerts_received"] == {"external": 1}
