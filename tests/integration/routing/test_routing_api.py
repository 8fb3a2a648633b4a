"""GET/PUT /v1/routing (validated as a whole, versioned with If-Match), POST /v1/routing/test, notifiers the tree
names cannot be deleted, scopes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import asyncpg

from app.routing import config
from app.settings import asyncpg_dsn
from tests.helpers import assert_error


async def put(h, body, version, headers=None):
    return await h.client.put("/v1/routing", headers={**(headers or h.auth), "If-Match": version}, json=body)


async def test_default_document_and_versioning(h):
    r = await h.client.get("/v1/routing", headers=h.auth)
    assert r.status_code == 200 and r.headers["etag"] == '"1"'
    doc = r.json()
    assert doc["object"] == "routing" and doc["version"] == "1"
    assert doc["inhibit_rules"] == [] and doc["time_intervals"] == []
    assert doc["route"] == {
        "notifier_ids": [],
        "group_by": ["alertname"],
        "group_wait_seconds": 30,
        "group_interval_seconds": 300,
        "repeat_interval_seconds": 14400,
    }
    hook = await h.notifier()
    doc["route"]["notifier_ids"] = [hook]
    r = await h.client.put("/v1/routing", headers=h.auth, json=doc)
    assert_error(r, 428, "precondition_required")
    assert_error(await put(h, doc, '"7"'), 412, "version_conflict")
    r = await put(h, doc, '"1"')  # a GET's whole document goes back as it came (object and version included)
    assert r.status_code == 200, r.text
    assert r.json()["version"] == "2" and r.headers["etag"] == '"2"'
    assert_error(await put(h, doc, "1"), 412, "version_conflict")  # someone else's write came first
    assert (await h.client.get("/v1/routing", headers=h.auth)).json()["route"]["notifier_ids"] == [hook]


async def test_errors_name_the_place_and_store_nothing(h):
    hook = await h.notifier()
    good = {"notifier_ids": [hook], "routes": [{"matchers": ["team=a"]}, {"matchers": ["team=b"]}]}
    cases = [
        ({"route": {**good, "routes": [{}, {"notifier_ids": ["ntf_gone"]}]}}, "route.routes[1].notifier_ids[0]"),
        ({"route": {**good, "matchers": ["a=b"]}}, "route.matchers"),
        (
            {"route": {**good, "routes": [{"mute_time_intervals": ["nights"]}]}},
            "route.routes[0].mute_time_intervals[0]",
        ),
        ({"route": {**good, "routes": [{"matchers": [1]}]}}, "route.routes[0].matchers[0]"),
        ({"route": {**good, "routes": [{"matchers": ["a=~("]}]}}, "route.routes[0].matchers[0]"),
        ({"route": {**good, "routes": [{"nope": 1}]}}, "route.routes[0].nope"),
        ({"route": {**good, "group_wait_seconds": -1}}, "route.group_wait_seconds"),
        (
            {"route": good, "time_intervals": [{"name": "x", "intervals": [{"location": "Nowhere/City"}]}]},
            "time_intervals[0].intervals[0].location",
        ),
        (
            {"route": good, "inhibit_rules": [{"source_matchers": ["a="], "target_matchers": ["b!"]}]},
            "inhibit_rules[0].target_matchers[0]",
        ),
    ]
    for body, param in cases:
        assert_error(await put(h, body, "1"), 400, "invalid_field", param=param)
    assert (await h.client.get("/v1/routing", headers=h.auth)).json()["version"] == "1"


async def test_a_notifier_the_tree_names_cannot_be_deleted(h):
    hook, other = await h.notifier(), await h.notifier(name="other")
    await h.routing({"notifier_ids": [other], "routes": [{"matchers": ["team=a"]}, {"notifier_ids": [hook]}]})
    r = await h.client.delete(f"/v1/notifiers/{hook}", headers=h.auth)
    err = assert_error(r, 409, "conflict")
    assert "route.routes[1].notifier_ids[0]" in err["message"]
    await h.routing({"notifier_ids": [other]})
    assert (await h.client.delete(f"/v1/notifiers/{hook}", headers=h.auth)).status_code == 204


async def test_routing_test_says_what_would_happen(h):
    pager, chat = await h.notifier(name="pager"), await h.notifier(name="chat")
    await h.routing(
        {
            "notifier_ids": [chat],
            "group_by": ["alertname"],
            "routes": [
                {"matchers": ["team=payments"], "notifier_ids": [pager], "continue": True, "group_wait_seconds": 5},
                {"matchers": ["team=payments"], "group_by": ["alertname", "cluster"]},
            ],
        },
    )
    labels = {"alertname": "Down", "team": "payments", "cluster": "eu"}
    await h.client.post(
        "/v1/silences",
        headers=h.auth,
        json={"matchers": ["cluster=eu"], "ends_at": (h.clock.now + timedelta(hours=1)).isoformat(), "comment": "x"},
    )
    r = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": labels})
    assert r.status_code == 200, r.text
    out = r.json()
    assert [(m["route"], m["notifier_ids"], m["group_key"], m["group_wait_seconds"]) for m in out["routes"]] == [
        ("route.routes[0]", [pager], '{}/{team="payments"}:{alertname="Down"}', 5),
        ("route.routes[1]", [chat], '{}/{team="payments"}#2:{alertname="Down", cluster="eu"}', 30),
    ]
    assert out["notifier_ids"] == [pager, chat] and out["silenced"] is True and len(out["silenced_by"]) == 1
    assert out["inhibited"] is False and out["muted"] is False
    r = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": {"bad-name": "x"}})
    assert_error(r, 400, "invalid_field", param="labels.bad-name")
    assert (await h.client.get("/v1/alerts", headers=h.auth)).json()["data"] == []  # nothing was stored


async def test_scopes_and_limited_tokens(h, make_token):
    reader = {"Authorization": f"Bearer {await make_token(['routing:read'])}"}
    assert (await h.client.get("/v1/routing", headers=reader)).status_code == 200
    assert (await h.client.post("/v1/routing/test", headers=reader, json={"labels": {"a": "b"}})).status_code == 200
    assert_error(await put(h, {"route": {}}, "1", reader), 403, "insufficient_scope")
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    assert_error(await put(h, {"route": {}}, "1", limited), 403, "insufficient_scope")
    status = (await h.client.get("/v1/routing/status", headers=reader)).json()
    assert status["object"] == "routing_status" and status["version"] == "1"
    paths = (await h.client.get("/schema/openapi.json")).json()["paths"]
    for path in (
        "/v1/routing",
        "/v1/routing/test",
        "/v1/alerts",
        "/v1/alerts/{fingerprint}",
        "/v1/silences",
        "/v1/silences/{silence_id}",
        "/v1/alerts/groups",
    ):
        assert path in paths


async def test_the_document_is_read_whole_only_when_its_row_was_written(database_url):
    """The routing job reads the document twice per batch: an unchanged row is recognised by its identity (version,
    time, writing transaction) and its compiled tree reused; any write of the row is seen at the next read, even one
    by hand that keeps the version and the time."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        sent: list[str] = []
        conn.add_query_logger(lambda q: sent.append(q.query))  # called soon after each query, not in it
        first = await config.current(conn)
        await asyncio.sleep(0.05)
        sent.clear()
        again = await config.current(conn)
        await asyncio.sleep(0.05)
        assert again.tree is first.tree and again.version == first.version
        assert len(sent) == 1, sent
        assert not [q for q in sent if "document" in q], sent  # the document itself was not fetched
        await conn.execute(
            """UPDATE routing_config SET document = jsonb_set(document, '{route,group_by}', '["cluster"]')"""
        )
        changed = await config.current(conn)
        assert (changed.version, changed.updated_at) == (first.version, first.updated_at)
        assert changed.tree.document.route.group_by == ["cluster"] != first.tree.document.route.group_by
    finally:
        await conn.close()
