"""`repeat_interval_seconds`: an alert that keeps firing is sent again to the monitor's own notifiers (history kind
`repeat`, a `monitor.triggered` message), so a lost or ignored message is corrected; without it, it is sent once."""

from __future__ import annotations

from app.timefmt import iso_ms

ERRORS_5XX = "['web'] | where status >= 500 | summarize count()"
BY_SERVICE = "['web'] | where status >= 500 | summarize count() by service"


def errors(h, at_seconds: float, count: int, service: str = "api") -> list[dict]:
    return [{"_time": h.at(at_seconds), "status": 500, "service": service} for _ in range(count)]


async def test_a_firing_alert_is_sent_again_every_repeat_interval_until_it_resolves(h):
    hook = await h.webhook()
    repeating = await h.monitor(
        name="repeats", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[hook["id"]],
        repeat_interval_seconds=120,
    )  # fmt: skip
    once = await h.monitor(
        name="once", apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, notifier_ids=[hook["id"]]
    )
    assert repeating["repeat_interval_seconds"] == 120 and once["repeat_interval_seconds"] is None
    for start in (0, 60, 120, 180, 240):
        await h.ingest("web", errors(h, start + 10, 5))
    await h.ingest("web", errors(h, 310, 1))
    sent = []
    for t in (60, 120, 180, 240, 300, 360):
        tick = await h.run(h.at(t))
        sent.append(tick.deliveries)
        assert await h.deliver() == tick.deliveries
    # t=60 both trigger; t=180 (120 s later) and t=300 the repeating one again; t=360 both resolve.
    assert sent == [2, 0, 1, 0, 1, 2]
    by_monitor: dict[str, list[tuple[str, str]]] = {}
    for body in h.received():
        by_monitor.setdefault(body["data"]["monitor_name"], []).append((body["type"], body["data"]["time"]))
    assert by_monitor["once"] == [("monitor.triggered", iso_ms(h.at(60))), ("monitor.resolved", iso_ms(h.at(360)))]
    assert by_monitor["repeats"] == [
        ("monitor.triggered", iso_ms(h.at(60))),
        ("monitor.triggered", iso_ms(h.at(180))),
        ("monitor.triggered", iso_ms(h.at(300))),
        ("monitor.resolved", iso_ms(h.at(360))),
    ]
    repeat = [b for b in h.received() if b["data"]["monitor_name"] == "repeats"][1]["data"]
    assert repeat["state"] == "alerting" and repeat["value"] == 5 and repeat["kind"] == "triggered"
    history = await h.history(repeating["id"])
    assert [e["kind"] for e in history] == ["resolved", "repeat", "repeat", "triggered"]  # newest first
    assert repeat["monitor_event_id"] == history[2]["id"] and history[2]["state"] == "alerting"
    assert [e["kind"] for e in await h.history(once["id"])] == ["resolved", "triggered"]
    # A repeat is no state change: the dataset's monitor annotations are the trigger and the resolve.
    r = await h.client.get("/v1/annotations", headers=h.auth, params={"datasets": "web", "limit": 100})
    titles = sorted(a["title"] for a in r.json()["data"] if a["title"].startswith("repeats"))
    assert titles == ["repeats: alerting", "repeats: resolved"]


async def test_each_group_repeats_on_its_own_clock(h):
    hook = await h.webhook()
    m = await h.monitor(
        apl=BY_SERVICE, operator="above", threshold=1, interval_seconds=60, notify_by_group=True,
        notifier_ids=[hook["id"]], repeat_interval_seconds=120,
    )  # fmt: skip
    for start in (0, 60, 120, 180):
        await h.ingest("web", errors(h, start + 10, 3, "api"))
    for start in (60, 120, 180):
        await h.ingest("web", errors(h, start + 10, 3, "db"))
    for t in (60, 120, 180, 240):
        await h.run(h.at(t))
    await h.deliver()
    got = [(b["data"]["group"]["service"], b["data"]["time"]) for b in h.received()]
    # api triggers at 60 and repeats at 180; db triggers at 120 and repeats at 240.
    assert sorted(got) == [
        ("api", iso_ms(h.at(60))),
        ("api", iso_ms(h.at(180))),
        ("db", iso_ms(h.at(120))),
        ("db", iso_ms(h.at(240))),
    ]
    assert (await h.get(m["id"]))["state"] == "alerting"


async def test_a_routed_monitor_leaves_repeats_to_its_route(h):
    # No notifiers of its own: the routing tree sends its alert, and repeats it on the route's repeat_interval.
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=3, interval_seconds=60, repeat_interval_seconds=60)
    for start in (0, 60, 120):
        await h.ingest("web", errors(h, start + 10, 5))
    for t in (60, 120, 180):
        await h.run(h.at(t))
    assert [e["kind"] for e in await h.history(m["id"])] == ["triggered"]


async def test_repeat_interval_is_checked_and_can_be_changed(h):
    bad = [
        ({"repeat_interval_seconds": 5}, "repeat_interval_seconds"),
        ({"repeat_interval_seconds": 31 * 86_400}, "repeat_interval_seconds"),
        ({"repeat_interval_seconds": 0}, "repeat_interval_seconds"),
    ]
    for fields, param in bad:
        body = {"name": "x", "type": "threshold", "apl": ERRORS_5XX, "operator": "above", "threshold": 1}
        r = await h.client.post("/v1/monitors", headers=h.auth, json={**body, "notifier_ids": [], **fields})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["param"] == param
    r = await h.client.post(
        "/v1/monitors",
        headers=h.auth,
        json={"name": "m", "type": "match_event", "apl": "['web'] | where status >= 500", "notifier_ids": [],
              "repeat_interval_seconds": 60},
    )  # fmt: skip
    assert r.status_code == 400 and r.json()["error"]["param"] == "repeat_interval_seconds"
    m = await h.monitor(apl=ERRORS_5XX, operator="above", threshold=3)
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"repeat_interval_seconds": 3600})
    assert r.status_code == 200 and r.json()["repeat_interval_seconds"] == 3600
    assert (await h.get(m["id"]))["repeat_interval_seconds"] == 3600
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"repeat_interval_seconds": None})
    assert r.status_code == 200 and r.json()["repeat_interval_seconds"] is None
