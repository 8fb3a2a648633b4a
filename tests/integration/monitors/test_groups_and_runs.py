"""notify_by_group (a state per group), on-demand evaluation (with and without dry_run), history paging."""

from __future__ import annotations

from tests.integration.monitors.test_threshold import errors

BY_SERVICE = "['web'] | where status >= 500 | summarize count() by service, bin(_time, 1m)"


async def test_each_group_has_its_own_state(h):
    hook = await h.webhook()
    m = await h.monitor(apl=BY_SERVICE, operator="above", threshold=2, notify_by_group=True, notifier_ids=[hook["id"]])
    # Run 1: api breaches, auth does not.
    await h.ingest("web", errors(h, 10, 3, "api") + errors(h, 20, 1, "auth"))
    tick = await h.run(h.at(60))
    assert tick.deliveries == 1
    # Run 2: both breach: one new message, for auth only.
    await h.ingest("web", errors(h, 70, 3, "api") + errors(h, 80, 4, "auth"))
    assert (await h.run(h.at(120))).deliveries == 1
    # Run 3: api recovers, auth still breaches: api resolved, the monitor stays alerting.
    await h.ingest("web", errors(h, 130, 5, "auth"))
    assert (await h.run(h.at(180))).deliveries == 1
    got = await h.get(m["id"])
    assert got["state"] == "alerting" and got["last_value"] == 5
    assert got["alerting_groups"] == [{"service": "auth"}]
    history = await h.history(m["id"])
    assert [(e["kind"], e["group"]) for e in history] == [
        ("resolved", {"service": "api"}),
        ("triggered", {"service": "auth"}),
        ("triggered", {"service": "api"}),
    ]
    assert history[1]["value"] == 4 and history[2]["value"] == 3
    # Run 4: nothing at all: auth resolves too.
    assert (await h.run(h.at(240))).deliveries == 1
    assert (await h.get(m["id"]))["state"] == "ok"
    assert await h.deliver() == 4
    bodies = h.received()
    assert [(b["type"], b["data"]["group"]) for b in bodies] == [
        ("monitor.triggered", {"service": "api"}),
        ("monitor.triggered", {"service": "auth"}),
        ("monitor.resolved", {"service": "api"}),
        ("monitor.resolved", {"service": "auth"}),
    ]


async def test_without_notify_by_group_the_worst_group_decides(h):
    hook = await h.webhook()
    m = await h.monitor(apl=BY_SERVICE, operator="above", threshold=2, notifier_ids=[hook["id"]])
    await h.ingest("web", errors(h, 10, 3, "api") + errors(h, 20, 7, "auth"))
    assert (await h.run(h.at(60))).deliveries == 1
    await h.ingest("web", errors(h, 70, 3, "api"))
    assert (await h.run(h.at(120))).deliveries == 0  # still alerting (api), no second message
    got = await h.get(m["id"])
    assert got["state"] == "alerting" and got["last_value"] == 3
    assert [(e["kind"], e["group"], e["value"]) for e in await h.history(m["id"])] == [("triggered", {}, 7)]


async def test_dry_run_reports_without_changing_anything(h):
    hook = await h.webhook()
    m = await h.monitor(
        apl=BY_SERVICE,
        operator="above",
        threshold=2,
        notify_by_group=True,
        notifier_ids=[hook["id"]],
        range_seconds=600,
    )
    await h.ingest("web", [{**e, "_time": None} for e in errors(h, 0, 3, "api")])  # arrival time: now
    r = await h.client.post(f"/v1/monitors/{m['id']}/evaluate", headers=h.auth, json={"dry_run": True})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["object"] == "monitor_evaluation" and out["dry_run"] is True and out["monitor_id"] == m["id"]
    assert out["previous_state"] == "ok" and out["state"] == "alerting" and out["value"] == 3
    assert out["groups"] == [{"group": {"service": "api"}, "state": "alerting", "value": 3}]
    assert out["notifier_ids"] == [hook["id"]] and out["error"] is None
    (event,) = out["events"]
    assert event["id"] is None and event["kind"] == "triggered" and event["deliveries"] == []
    assert event["group"] == {"service": "api"}
    # Nothing changed, nobody notified.
    got = await h.get(m["id"])
    assert got["state"] == "ok" and got["last_evaluated_at"] is None
    assert await h.history(m["id"]) == [] and await h.deliveries(m["id"]) == []
    r = await h.client.get("/v1/annotations", headers=h.auth, params={"datasets": "web"})
    assert r.json()["data"] == []

    # The same without dry_run records and notifies, like a run of the loop (body optional).
    r = await h.client.post(f"/v1/monitors/{m['id']}/evaluate", headers=h.auth)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["dry_run"] is False and out["state"] == "alerting"
    (event,) = out["events"]
    assert event["id"].startswith("mev_") and len(event["deliveries"]) == 1
    got = await h.get(m["id"])
    assert got["state"] == "alerting" and got["last_evaluated_at"] == out["time"]
    assert got["next_evaluation_at"] == m["next_evaluation_at"]  # the schedule is the loop's
    assert [e["id"] for e in await h.history(m["id"])] == [event["id"]]
    assert [d["id"] for d in await h.deliveries(m["id"])] == event["deliveries"]
    assert await h.deliver() == 1


async def test_dry_run_of_an_empty_body_and_bad_bodies(h):
    from tests.helpers import assert_error

    m = await h.monitor(apl=BY_SERVICE, operator="above", threshold=2)
    r = await h.client.post(f"/v1/monitors/{m['id']}/evaluate", headers=h.auth, json={"dry_run": "yes"})
    assert_error(r, 400, "invalid_field", param="dry_run")
    r = await h.client.post(f"/v1/monitors/{m['id']}/evaluate", headers=h.auth, json={"dryrun": True})
    assert_error(r, 400, "invalid_field", param="dryrun")


async def test_history_pages(h):
    m = await h.monitor(apl="['web'] | summarize count()", operator="above", threshold=0)
    for minute in range(1, 7):
        if minute % 2:
            await h.ingest("web", errors(h, minute * 60 - 30, 1))
        await h.run(h.at(minute * 60))
    kinds, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await h.client.get(f"/v1/monitors/{m['id']}/history", headers=h.auth, params=params)).json()
        kinds += [(e["kind"], e["time"]) for e in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert [k for k, _ in kinds] == ["resolved", "triggered"] * 3
    assert [t for _, t in kinds] == sorted((t for _, t in kinds), reverse=True)
