"""Silences through the API: create, list by state, get, change, expire; pending -> active -> expired on the
test's clock; a silenced alert notifies nothing, and its group notifies once the silence is over."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers import assert_error
from tests.integration.routing.conftest import summary


def iso(t):
    return t.isoformat()


async def test_lifecycle_and_states(h):
    now = h.clock.now
    r = await h.client.post(
        "/v1/silences",
        headers=h.auth,
        json={
            "matchers": ['team="payments"', "severity=~warn.*"],
            "starts_at": iso(now + timedelta(minutes=10)),
            "ends_at": iso(now + timedelta(hours=1)),
            "comment": "maintenance",
            "created_by": "ana",
        },
    )
    assert r.status_code == 201, r.text
    silence = r.json()
    assert silence["id"].startswith("sil_") and silence["state"] == "pending" and silence["object"] == "silence"
    assert silence["matchers"] == ['team="payments"', 'severity=~"warn.*"']
    sid = silence["id"]

    async def state() -> str:
        r = await h.client.get(f"/v1/silences/{sid}", headers=h.auth)
        return str(r.json()["state"])

    async def listed(state: str) -> list[str]:
        r = await h.client.get("/v1/silences", headers=h.auth, params={"state": state})
        return [s["id"] for s in r.json()["data"]]

    assert await listed("pending") == [sid] and await listed("active") == []
    h.clock.advance(600)
    assert await state() == "active" and await listed("active") == [sid]
    r = await h.client.patch(f"/v1/silences/{sid}", headers=h.auth, json={"ends_at": iso(now + timedelta(hours=2))})
    assert r.status_code == 200 and r.json()["ends_at"].startswith(iso(now + timedelta(hours=2))[:19])
    r = await h.client.patch(f"/v1/silences/{sid}", headers=h.auth, json={"starts_at": iso(now)})
    assert_error(r, 400, "invalid_field", param="starts_at")  # an active silence's start does not move
    r = await h.client.delete(f"/v1/silences/{sid}", headers=h.auth)
    assert r.status_code == 200 and r.json()["state"] == "expired"
    assert await listed("expired") == [sid] and await listed("active") == []
    r = await h.client.patch(f"/v1/silences/{sid}", headers=h.auth, json={"comment": "again"})
    assert_error(r, 409, "conflict")
    assert (await h.client.delete(f"/v1/silences/{sid}", headers=h.auth)).json()["state"] == "expired"


async def test_validation(h, make_token):
    base = {"ends_at": iso(h.clock.now + timedelta(hours=1)), "comment": "x"}
    cases = [
        ({"matchers": []}, "matchers"),
        ({"matchers": ["team=a", 'sev=~"("']}, "matchers[1]"),
        ({"matchers": ['team=~".*"']}, "matchers"),  # would match every alert
        ({"matchers": ["team=a"], "ends_at": iso(h.clock.now - timedelta(minutes=1))}, "ends_at"),
        ({"matchers": ["team=a"], "starts_at": iso(h.clock.now + timedelta(hours=2))}, "ends_at"),
    ]
    for body, param in cases:
        r = await h.client.post("/v1/silences", headers=h.auth, json={**base, **body})
        assert_error(r, 400, "invalid_field", param=param)
    assert_error(await h.client.get("/v1/silences/sil_nope", headers=h.auth), 404, "not_found")
    assert_error(await h.client.get("/v1/silences?state=gone", headers=h.auth), 400, "invalid_parameter")
    reader = {"Authorization": f"Bearer {await make_token(['silences:read'])}"}
    r = await h.client.post("/v1/silences", headers=reader, json={**base, "matchers": ["team=a"]})
    assert_error(r, 403, "insufficient_scope")
    assert (await h.client.get("/v1/silences", headers=reader)).status_code == 200
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    r = await h.client.post("/v1/silences", headers=limited, json={**base, "matchers": ["team=a"]})
    assert_error(r, 403, "insufficient_scope")


async def test_silenced_alerts_notify_after_the_silence_ends(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [hook],
            "group_by": ["alertname"],
            "group_wait_seconds": 10,
            "group_interval_seconds": 60,
            "repeat_interval_seconds": 3600,
        }
    )
    now = h.clock.now
    r = await h.client.post(
        "/v1/silences",
        headers=h.auth,
        json={"matchers": ["instance=b"], "ends_at": iso(now + timedelta(minutes=3)), "comment": "rebooting b"},
    )
    sid = r.json()["id"]
    day = iso(now + timedelta(days=1))
    fa, fb = await h.post(
        {"labels": {"alertname": "Down", "instance": "a"}, "ends_at": day},
        {"labels": {"alertname": "Down", "instance": "b"}, "ends_at": day},
    )
    alerts = {a["fingerprint"]: a for a in await h.alerts()}
    assert alerts[fb]["state"] == "suppressed" and alerts[fb]["silenced_by"] == [sid]
    assert alerts[fa]["state"] == "firing" and alerts[fa]["silenced_by"] == []
    assert [a["fingerprint"] for a in await h.alerts(state="suppressed")] == [fb]
    await h.step()
    (first,) = await h.step(10)
    assert summary(first) == ("first", "firing", [("firing", "a")])  # b is silenced
    assert await h.step(60) == [] and await h.step(60) == []
    (after,) = await h.step(60)  # the silence ended at 3 min: b arrives at the next flush
    assert summary(after) == ("new_alerts", "firing", [("firing", "a"), ("firing", "b")])
    r = await h.client.get(f"/v1/silences/{sid}", headers=h.auth)
    assert r.json()["state"] == "expired"


async def test_a_group_whose_every_alert_is_silenced_sends_nothing(h):
    hook = await h.notifier()
    await h.routing({"notifier_ids": [hook], "group_wait_seconds": 0, "group_interval_seconds": 60})
    await h.client.post(
        "/v1/silences",
        headers=h.auth,
        json={"matchers": ["alertname=Noise"], "ends_at": iso(h.clock.now + timedelta(hours=1)), "comment": "known"},
    )
    await h.post({"labels": {"alertname": "Noise"}})
    assert await h.step() == [] and await h.step(60) == []


async def test_a_dataset_limited_token_sees_only_silences_that_could_apply_to_its_alerts(h, client, make_token):
    """A silence aimed only at other datasets names them (and its comment may say more): a token limited to `web`
    does not see it through /v1, /api/v2 or the console. Silences that could silence a `web` alert it does see,
    including those with no `dataset` matcher, so it can tell why its alert is quiet."""
    ends = iso(h.clock.now + timedelta(hours=1))
    made = {}
    for name, matchers in {
        "web": ['dataset="web"', "severity=page"],
        "payments": ['dataset="payments"'],
        "any": ["severity=page"],
        "regex_web": ["dataset=~we.*"],
        "regex_other": ["dataset=~pay.*", "team=a"],
        "not_payments": ['dataset!="payments"', "team=a"],
        "not_web": ['dataset!="web"', "team=a"],
        "both_rules": ["dataset=~w.*", 'dataset!="web"'],  # only datasets like `www`: not this token's
    }.items():
        r = await h.client.post(
            "/v1/silences", headers=h.auth, json={"matchers": matchers, "ends_at": ends, "comment": f"for {name}"}
        )
        assert r.status_code == 201, r.text
        made[name] = r.json()["id"]
    visible = {made[n] for n in ("web", "any", "regex_web", "not_payments")}
    token = await make_token(["*"], datasets=["web"])
    limited = {"Authorization": f"Bearer {token}"}

    listed = (await h.client.get("/v1/silences", headers=limited, params={"limit": 100})).json()["data"]
    assert {s["id"] for s in listed} == visible
    paged, cursor = [], None
    while True:  # the pages of the filtered list hold every visible silence once
        page = (await h.client.get("/v1/silences", headers=limited, params={"limit": 1, "cursor": cursor})).json()
        paged += [s["id"] for s in page["data"]]
        if not (cursor := page["next_cursor"]):
            break
    assert sorted(paged) == sorted(visible)
    for name, sid in made.items():
        r = await h.client.get(f"/v1/silences/{sid}", headers=limited)
        if sid in visible:
            assert r.status_code == 200, name
        else:
            assert_error(r, 404, "not_found")  # as for an unknown id
            am = await h.client.get(f"/api/v2/silence/{sid}", headers=limited)
            assert am.status_code == 404, name
    am_listed = (await h.client.get("/api/v2/silences", headers=limited)).json()
    assert {s["id"] for s in am_listed} == visible
    assert len((await h.client.get("/v1/silences", headers=h.auth, params={"limit": 100})).json()["data"]) == 8

    # Nor through the routing test (labels it typed itself) or the status counts.
    tested = await h.client.post("/v1/routing/test", headers=limited, json={"labels": {"dataset": "payments"}})
    assert tested.status_code == 200, tested.text
    assert made["payments"] not in tested.json()["silenced_by"]
    assert made["not_payments"] not in tested.json()["silenced_by"]  # it does not match these labels
    admin_test = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": {"dataset": "payments"}})
    assert made["payments"] in admin_test.json()["silenced_by"]
    assert (await h.client.get("/v1/routing/status", headers=limited)).json()["silences_active"] == len(visible)
    assert (await h.client.get("/v1/routing/status", headers=h.auth)).json()["silences_active"] == 8

    await client.post("/ui/login", data={"token": token}, follow_redirects=False)
    page = (await client.get("/ui/silences", params={"state": "active"})).text
    assert all(f"for {name}<" in page for name in ("web", "any", "regex_web", "not_payments"))
    assert not any(f"for {name}<" in page for name in ("payments", "regex_other", "not_web", "both_rules"))
