"""POST/GET /v1/alerts: validation, Alertmanager's merge rules, filters and states, pages, scopes, visibility."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers import assert_error


def z(t):
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def test_post_validates_and_stores_nothing_on_error(h):
    cases = [
        ([{"labels": {}}], "[0].labels"),
        ([{"labels": {"a": "1"}}, {"labels": {"bad-name": "x"}}], "[1].labels.bad-name"),
        ([{"labels": {"a": "x" * 1025}}], "[0].labels.a"),
        ([{"labels": {f"l{i}": "v" for i in range(65)}}], "[0].labels"),
        ([{"labels": {"a": "1"}, "annotations": {"9x": "y"}}], "[0].annotations.9x"),
        (
            [{"labels": {"a": "1"}, "starts_at": "2026-01-02T00:00:00Z", "ends_at": "2026-01-01T00:00:00Z"}],
            "[0].ends_at",
        ),
    ]
    for body, param in cases:
        assert_error(await h.client.post("/v1/alerts", headers=h.auth, json=body), 400, "invalid_field", param=param)
    r = await h.client.post("/v1/alerts", headers=h.auth, json=[{"labels": {"a": "1"}, "ends_at": "2026-01-01T00:00"}])
    assert r.status_code == 400  # a datetime without an offset
    r = await h.client.post("/v1/alerts", headers=h.auth, json=[{"labels": {"a": "1"}, "nope": 1}])
    assert_error(r, 400, "invalid_field")
    assert await h.alerts() == []


async def test_merge_rules_and_the_representation(h):
    t0 = h.clock.now
    (fp,) = await h.post(
        {
            "labels": {"alertname": "Down", "instance": "a"},
            "annotations": {"summary": "a is down"},
            "generator_url": "https://prom.example.com/g",
        }
    )
    assert len(fp) == 16
    h.clock.advance(60)
    assert await h.post({"labels": {"instance": "a", "alertname": "Down"}}) == [fp]  # same labels, same alert
    r = await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)
    alert = r.json()
    assert alert == {
        "object": "alert",
        "fingerprint": fp,
        "labels": {"alertname": "Down", "instance": "a"},
        "annotations": {},
        "state": "firing",
        "starts_at": z(t0),
        "ends_at": z(h.clock.now + timedelta(minutes=5)),
        "updated_at": z(h.clock.now),
        "source": {"type": "external"},
        "silenced_by": [],
        "inhibited_by": [],
        "muted_by": [],
        "generator_url": None,
        "changes": [],
        "more_changes": 0,
    }  # starts_at kept while it fires; annotations and the rest are the latest post's
    h.clock.advance(600)  # resolved by the timeout meanwhile; a post now starts a new firing
    assert (await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)).json()["state"] == "resolved"
    await h.post({"labels": {"alertname": "Down", "instance": "a"}})
    assert (await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)).json()["starts_at"] == z(h.clock.now)
    assert_error(await h.client.get("/v1/alerts/0123456789abcdef", headers=h.auth), 404, "not_found")


async def test_filters_states_and_pages(h):
    day = (h.clock.now + timedelta(days=1)).isoformat()
    for i in range(30):
        h.clock.advance(1)
        await h.post(
            {
                "labels": {
                    "alertname": "Load",
                    "team": "web" if i % 3 else "payments",
                    "severity": "critical" if i % 2 else "warning",
                    "n": str(i),
                },
                "ends_at": day,
            }
        )
    h.clock.advance(1)
    await h.post({"labels": {"alertname": "Old", "team": "web"}, "ends_at": h.clock.now.isoformat()})
    assert len(await h.alerts()) == 31
    assert {a["labels"]["n"] for a in await h.alerts(filter="team=payments")} == {str(i) for i in range(0, 30, 3)}
    both = await h.alerts(filter=["team=payments", 'severity=~"crit.*"'])
    assert {a["labels"]["n"] for a in both} == {"3", "9", "15", "21", "27"}
    assert [a["labels"]["alertname"] for a in await h.alerts(state="resolved")] == ["Old"]
    assert len(await h.alerts(state="firing")) == 30
    r = await h.client.get("/v1/alerts", headers=h.auth, params={"filter": 'team=~"("'})
    assert_error(r, 400, "invalid_parameter", param="filter")
    assert_error(await h.client.get("/v1/alerts?state=burning", headers=h.auth), 400, "invalid_parameter")
    seen, cursor = [], None
    while True:
        params = {"limit": 4, "filter": "team=web", **({"cursor": cursor} if cursor else {})}
        page = (await h.client.get("/v1/alerts", headers=h.auth, params=params)).json()
        seen += [a["labels"].get("n", "old") for a in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == ["old"] + [str(i) for i in reversed(range(30)) if i % 3]  # newest first, every one once
    r = await h.client.get("/v1/alerts", headers=h.auth, params={"limit": 4, "cursor": cursor or "x"})
    assert_error(r, 400, "invalid_cursor")


async def test_groups_view(h):
    hook = await h.notifier()
    await h.routing({"notifier_ids": [hook], "group_by": ["cluster"]})
    await h.post(
        {"labels": {"alertname": "A", "cluster": "eu"}},
        {"labels": {"alertname": "B", "cluster": "eu"}},
        {"labels": {"alertname": "C", "cluster": "us"}},
    )
    r = await h.client.get("/v1/alerts/groups", headers=h.auth)
    groups = r.json()["data"]
    assert [(g["group_key"], sorted(a["labels"]["alertname"] for a in g["alerts"])) for g in groups] == [
        ('{}:{cluster="eu"}', ["A", "B"]),
        ('{}:{cluster="us"}', ["C"]),
    ]
    assert groups[0]["notifier_ids"] == [hook] and groups[0]["route"] == "route"


async def test_scopes_and_dataset_limited_tokens(h, make_token):
    await h.post({"labels": {"alertname": "External"}})
    reader = {"Authorization": f"Bearer {await make_token(['alerts:read'])}"}
    assert len((await h.client.get("/v1/alerts", headers=reader)).json()["data"]) == 1
    r = await h.client.post("/v1/alerts", headers=reader, json=[{"labels": {"a": "b"}}])
    assert_error(r, 403, "insufficient_scope")
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    assert (await h.client.get("/v1/alerts", headers=limited)).json()["data"] == []  # external: no dataset
    r = await h.client.post("/v1/alerts", headers=limited, json=[{"labels": {"a": "b"}}])
    assert_error(r, 403, "insufficient_scope")
    fp = (await h.alerts())[0]["fingerprint"]
    assert_error(await h.client.get(f"/v1/alerts/{fp}", headers=limited), 404, "not_found")
    status = (await h.client.get("/v1/routing/status", headers=h.auth)).json()
    assert status["alerts_firing"] == 1 and status["counters"]["alerts_received"] == {"external": 1}


async def test_resolved_alerts_are_forgotten_after_a_day(h):
    later = (h.clock.now + timedelta(days=3)).isoformat()
    await h.post({"labels": {"alertname": "Gone"}, "ends_at": h.clock.now.isoformat()},
                 {"labels": {"alertname": "Firing"}, "ends_at": later})  # fmt: skip
    await h.route(3600)
    assert {a["labels"]["alertname"] for a in await h.alerts()} == {"Gone", "Firing"}
    h.renv.last_gc = None  # the job forgets old alerts every 10 minutes; run it now
    await h.route(23 * 3600 + 60)
    assert {a["labels"]["alertname"] for a in await h.alerts()} == {"Firing"}
