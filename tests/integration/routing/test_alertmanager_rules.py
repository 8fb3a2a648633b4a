"""Where Beacon was seen to differ from Alertmanager 0.25 (issue 26), each on a clock the test moves: the rule
Alertmanager follows, and Beacon now with it."""

from __future__ import annotations

from datetime import timedelta

import yaml

from tests.integration.routing.conftest import summary

FAST = {"group_wait_seconds": 1, "group_interval_seconds": 1, "repeat_interval_seconds": 1}
SECONDS = {"group_wait_seconds": 1, "group_interval_seconds": 1, "repeat_interval_seconds": 3600}


def at(h, seconds: float) -> str:
    return (h.clock.now + timedelta(seconds=seconds)).isoformat()


async def test_group_by_empty_on_a_child_inherits_and_is_exported_as_inheriting(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [hook],
            "group_by": ["alertname"],
            "group_wait_seconds": 0,
            "routes": [{"matchers": ["team=db"], "group_by": []}],
        }
    )
    day = at(h, 86_400)
    await h.post(*({"labels": {"alertname": n, "team": "db"}, "ends_at": day} for n in ("DiskFull", "Lag")))
    got = sorted(m["data"]["alerts"][0]["labels"]["alertname"] for m in await h.step())
    assert got == ["DiskFull", "Lag"]  # two groups, by alertname as the parent says (one group before)
    r = await h.client.get("/api/v2/status", headers=h.auth)
    config = yaml.safe_load(r.json()["config"]["original"])
    assert config["route"]["group_by"] == ["alertname"] and "group_by" not in config["route"]["routes"][0]
    assert config["global"] == {"resolve_timeout": "5m"}


async def test_an_alert_past_its_group_wait_is_flushed_at_once(h):
    hook = await h.notifier()
    await h.routing({"notifier_ids": [hook], "group_by": ["alertname"], "group_wait_seconds": 30})
    await h.post({"labels": {"alertname": "Old", "i": "a"}, "starts_at": at(h, -60)})
    (first,) = await h.step()  # started a minute ago: group_wait is over (Beacon waited 30 s from arrival)
    assert summary(first)[0] == "first"
    await h.post({"labels": {"alertname": "New", "i": "a"}})
    assert await h.step() == []  # a fresh alert waits as before
    assert len(await h.step(30)) == 1


async def test_reposted_alerts_merge_as_in_alertmanager(h):
    """Alertmanager's TestMergeAlerts, on the API: the earliest start, the latest explicit resolve, and a new
    firing after the resolve starts anew."""
    (fp,) = await h.post({"labels": {"alertname": "test"}, "starts_at": at(h, 0.1)})

    async def state() -> tuple[str, str | None]:
        r = await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)
        return r.json()["starts_at"], r.json()["ends_at"]

    t0 = h.clock.now
    h.clock.advance(0.2)
    await h.post({"labels": {"alertname": "test"}, "starts_at": t0.isoformat()})  # later, but started earlier
    assert (await state())[0] == t0.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    h.clock.advance(3.4)  # 3.6
    await h.post({"labels": {"alertname": "test"}, "starts_at": at(h, -1.6), "ends_at": at(h, -0.1)})  # 2 - 3.5
    h.clock.advance(0.2)  # 3.8: resolved twice, the later end wins
    await h.post({"labels": {"alertname": "test"}, "starts_at": at(h, -1.9), "ends_at": at(h, 0)})  # 1.9 - 3.8
    await h.post({"labels": {"alertname": "test"}, "starts_at": at(h, -1.9), "ends_at": at(h, -0.7)})  # - 3.1
    starts, ends = await state()
    iso = lambda t: t.isoformat(timespec="milliseconds").replace("+00:00", "Z")  # noqa: E731
    assert (starts, ends) == (iso(t0), iso(h.clock.now))  # Beacon took the last post (3.1) and its start (1.9)
    h.clock.advance(0.5)  # after the resolve: no overlap, a new firing
    await h.post({"labels": {"alertname": "test"}})
    assert (await state())[0] == iso(h.clock.now)


async def test_an_empty_label_value_is_no_label(h):
    first = await h.post({"labels": {"alertname": "X", "env": ""}})
    second = await h.post({"labels": {"alertname": "X"}})
    assert first == second
    (alert,) = await h.alerts()
    assert alert["labels"] == {"alertname": "X"}
    r = await h.client.post("/v1/alerts", headers=h.auth, json=[{"labels": {"env": ""}}])
    assert r.status_code == 400 and r.json()["error"]["param"] == "[0].labels"


async def test_every_resolved_alert_is_listed_also_one_never_seen_firing(h):
    """Alertmanager's TestAlwaysInhibiting: the inhibited alert resolves with its inhibitor; the last message
    lists both."""
    hook = await h.notifier()
    rule = {"source_matchers": ["alertname=JobDown"], "target_matchers": ["alertname=InstanceDown"]}
    await h.routing({"notifier_ids": [hook], "group_by": [], **SECONDS}, inhibit_rules=[{**rule, "equal": ["job"]}])
    down = [{"labels": {"alertname": n, "job": "j"}} for n in ("InstanceDown", "JobDown")]
    await h.post(*down)
    (first,) = await h.step(1)
    assert summary(first)[2] == [("firing", "")] and first["data"]["alerts"][0]["labels"]["alertname"] == "JobDown"
    await h.post(*({**a, "ends_at": h.clock.now.isoformat()} for a in down))
    (last,) = await h.step(1)
    assert last["data"]["status"] == "resolved"
    assert sorted(a["labels"]["alertname"] for a in last["data"]["alerts"]) == ["InstanceDown", "JobDown"]


async def test_a_silenced_alerts_resolve_is_not_sent(h):
    hook = await h.notifier()
    await h.routing({"notifier_ids": [hook], "group_by": ["alertname"], **SECONDS})
    await h.post({"labels": {"alertname": "A", "instance": "1"}}, {"labels": {"alertname": "A", "instance": "2"}})
    (first,) = await h.step(1)
    assert len(first["data"]["alerts"]) == 2
    r = await h.client.post(
        "/v1/silences", headers=h.auth, json={"matchers": ["instance=1"], "ends_at": at(h, 3600), "comment": "deploy"}
    )
    assert r.status_code == 201, r.text
    await h.post({"labels": {"alertname": "A", "instance": "1"}, "ends_at": h.clock.now.isoformat()})
    assert await h.step(1) == []  # instance 1's resolve is silenced: nobody is told (Beacon told it)
    r = await h.client.delete(f"/v1/silences/{r.json()['id']}", headers=h.auth)
    assert await h.step(1) == []  # nor later: it left the group when it was flushed


async def test_send_resolved_per_notifier_with_alertmanagers_defaults(h):
    hook = await h.notifier()
    quiet = await h.client.post(
        "/v1/notifiers",
        headers=h.auth,
        json={"name": "q", "type": "webhook", "config": {"url": h.httpserver.url_for("/chat")}, "send_resolved": False},
    )
    assert quiet.status_code == 201 and quiet.json()["send_resolved"] is False
    assert (await h.client.get(f"/v1/notifiers/{hook}", headers=h.auth)).json()["send_resolved"] is True
    chat_a = {"name": "s", "type": "chat_a", "config": {"url": h.httpserver.url_for("/slack")}}
    slack = await h.client.post("/v1/notifiers", headers=h.auth, json=chat_a)
    assert slack.json()["send_resolved"] is False
    r = await h.client.patch(f"/v1/notifiers/{slack.json()['id']}", headers=h.auth, json={"send_resolved": True})
    assert r.json()["send_resolved"] is True
    await h.routing({"notifier_ids": [hook, quiet.json()["id"]], "group_by": ["alertname"], **FAST})
    await h.post({"labels": {"alertname": "A", "i": "1"}}, {"labels": {"alertname": "A", "i": "2"}})
    assert len(await h.step(1)) == 2
    await h.post({"labels": {"alertname": "A", "i": "1"}, "ends_at": h.clock.now.isoformat()})
    before = len(h.httpserver.log)
    await h.step(1)
    paths = sorted(req.path for req, _ in h.httpserver.log[before:])
    assert paths == ["/chat", "/hook"]  # the quiet one hears the repeat only, without the resolved alert
    chat = next(req for req, _ in h.httpserver.log[before:] if req.path == "/chat")
    assert [a["status"] for a in chat.get_json()["data"]["alerts"]] == ["firing"]
    await h.post({"labels": {"alertname": "A", "i": "2"}, "ends_at": h.clock.now.isoformat()})
    before = len(h.httpserver.log)
    await h.step(1)
    assert [req.path for req, _ in h.httpserver.log[before:]] == ["/hook"]  # all resolved: the quiet one hears nothing


async def test_resolve_timeout_is_a_setting_and_timers_go_down_to_a_second(h):
    hook = await h.notifier()
    doc = await h.routing({"notifier_ids": [hook], "group_by": ["alertname"], **FAST}, resolve_timeout_seconds=60)
    assert doc["resolve_timeout_seconds"] == 60 and doc["route"]["repeat_interval_seconds"] == 1
    (fp,) = await h.post({"labels": {"alertname": "T"}})
    r = await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)
    assert r.json()["ends_at"] == (h.clock.now + timedelta(seconds=60)).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )
    current = await h.client.get("/v1/routing", headers=h.auth)
    for field, value in (("repeat_interval_seconds", 0), ("group_interval_seconds", 0)):
        r = await h.client.put(
            "/v1/routing",
            headers={**h.auth, "If-Match": current.json()["version"]},
            json={"route": {"notifier_ids": [hook], field: value}},
        )
        assert r.status_code == 400 and r.json()["error"]["param"] == f"route.{field}"


async def test_an_inhibited_alerts_resolve_is_not_sent(h):
    hook = await h.notifier()
    rule = {"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"], "equal": ["job"]}
    await h.routing({"notifier_ids": [hook], "group_by": ["job"], **SECONDS}, inhibit_rules=[rule])
    warn = {"labels": {"alertname": "Slow", "severity": "warning", "job": "api", "instance": "w"}}
    await h.post(warn)
    (first,) = await h.step(1)
    assert summary(first)[2] == [("firing", "w")]
    # The critical alert fires as the warning resolves: the warning's resolve is inhibited (Beacon listed it).
    await h.post({"labels": {"alertname": "Down", "severity": "critical", "job": "api", "instance": "c"}})
    await h.post({**warn, "ends_at": h.clock.now.isoformat()})
    (new,) = await h.step(1)
    assert summary(new) == ("new_alerts", "firing", [("firing", "c")])
