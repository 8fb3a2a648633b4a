"""The monitor resource: create, get, list, patch, delete, the checks at creation, scopes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers import assert_error

COUNT = "['web'] | where status >= 500 | summarize count()"


def body(**fields):
    return {"name": "API errors", "type": "threshold", "apl": COUNT, "operator": "above", "threshold": 10,
            "notifier_ids": [], **fields}  # fmt: skip


async def test_create_get_defaults_and_representation(h):
    hook = await h.webhook()
    r = await h.client.post("/v1/monitors", headers=h.auth, json=body(notifier_ids=[hook["id"], hook["id"]]))
    assert r.status_code == 201, r.text
    m = r.json()
    assert m["id"].startswith("mon_") and m["object"] == "monitor"
    expected = {
        "name": "API errors",
        "description": None,
        "type": "threshold",
        "apl": COUNT,
        "dataset": "web",
        "operator": "above",
        "threshold": 10,
        "interval_seconds": 60,
        "range_seconds": 60,  # defaults to the interval
        "delay_seconds": 0,
        "notifier_ids": [hook["id"]],  # duplicates dropped
        "alert_on_no_data": False,
        "notify_by_group": False,
        "resolvable": True,
        "trigger_after": {"m": 1, "n": 1},
        "disabled_until": None,
        "state": "ok",
        "alerting_groups": [],
        "last_value": None,
        "last_error": None,
        "last_evaluated_at": None,
    }
    assert {k: m[k] for k in expected} == expected
    created = datetime.fromisoformat(m["created_at"])
    first_run = datetime.fromisoformat(m["next_evaluation_at"])
    assert created <= first_run <= created + timedelta(seconds=60)  # spread over the first interval
    assert m["updated_at"] == m["created_at"] and m["created_at"].endswith("Z")
    # The create answer adds `warnings` (here: nothing was ingested into 'web' yet); the monitor is the same.
    assert [w["code"] for w in m.pop("warnings")] == ["unknown_dataset"]
    got = await h.client.get(f"/v1/monitors/{m['id']}", headers=h.auth)
    assert got.status_code == 200 and got.json() == m


async def test_list_paginates_newest_first_and_filters_by_state(h):
    ids = [(await h.monitor(apl=COUNT, operator="above", threshold=i))["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = await h.client.get("/v1/monitors", headers=h.auth, params=params)
        assert r.status_code == 200
        page = r.json()
        assert page["object"] == "list"
        seen += [m["id"] for m in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            assert cursor is None
            break
    assert seen == list(reversed(ids))
    r = await h.client.get("/v1/monitors", headers=h.auth, params={"state": "alerting"})
    assert r.json()["data"] == []
    assert_error(
        await h.client.get("/v1/monitors", headers=h.auth, params={"state": "bad"}), 400, "invalid_parameter",
        param="state",
    )  # fmt: skip


async def test_match_event_monitor_create(h):
    m = await h.monitor(
        type="match_event", apl="['web'] | where status >= 500 | extend slow = duration > 1000 | project status, slow"
    )
    assert m["type"] == "match_event" and m["operator"] is None and m["threshold"] is None


@pytest.mark.parametrize(
    ("fields", "code", "param", "words"),
    [
        ({"apl": "['web'] | where status >= 500"}, "invalid_query", "apl", "must end in 'summarize'"),
        ({"apl": "['web'] | summarize count() | take 5"}, "invalid_query", "apl", "must end in 'summarize'"),
        ({"apl": "['web'] | summarize count() by"}, "invalid_query", "apl", "Line 1"),
        ({"apl": "['web'] | summarize make_set(service)"}, "invalid_query", "apl", "needs a number"),
        (
            {"apl": "['web'] | summarize x = count() | where nope > 1 | summarize count()"},
            "invalid_query",
            "apl",
            "unknown column",
        ),
        (
            {"type": "match_event", "operator": None, "threshold": None, "apl": COUNT},
            "invalid_query",
            "apl",
            "not 'summarize'",
        ),
        (
            {"type": "match_event", "operator": None, "threshold": None, "apl": "['web'] | take 5"},
            "invalid_query",
            "apl",
            "not 'take'",
        ),
        ({"type": "match_event", "apl": "['web']"}, "invalid_field", "operator", "threshold monitors only"),
        (
            {"type": "match_event", "operator": None, "threshold": None, "apl": "['web']", "notify_by_group": True},
            "invalid_field",
            "notify_by_group",
            "threshold monitors only",
        ),
        ({"operator": None}, "missing_field", "operator", "needs"),
        ({"threshold": None}, "missing_field", "threshold", "needs"),
        ({"operator": "over"}, "invalid_field", "operator", ""),
        ({"interval_seconds": 9}, "invalid_field", "interval_seconds", ""),
        ({"range_seconds": 0}, "invalid_field", "range_seconds", ""),
        ({"delay_seconds": -1}, "invalid_field", "delay_seconds", ""),
        ({"trigger_after": {"m": 3, "n": 2}}, "invalid_field", "trigger_after.m", "greater"),
        ({"trigger_after": {"m": 1, "n": 101}}, "invalid_field", "trigger_after.n", ""),
        ({"trigger_after": {"m": 1, "x": 1}}, "invalid_field", "trigger_after.x", ""),
        ({"notifier_ids": ["ntf_nope"]}, "invalid_field", "notifier_ids", "ntf_nope"),
        ({"notify_by_group": True}, "invalid_field", "notify_by_group", "by"),
        ({"disabled_until": "2026-11-21T10:00:00"}, "invalid_field", "disabled_until", ""),
        ({"type": "cron"}, "invalid_field", "type", ""),
        ({"colour": "red"}, "invalid_field", "colour", ""),
        ({"name": ""}, "invalid_field", "name", ""),
        ({"apl": "['bad name!'] | summarize count()"}, "invalid_query", "apl", ""),
    ],
)
async def test_create_refuses_bad_input(h, fields, code, param, words):
    r = await h.client.post("/v1/monitors", headers=h.auth, json={k: v for k, v in body(**fields).items()})
    err = assert_error(r, 400, code, param=param)
    assert words in err["message"]
    listed = await h.client.get("/v1/monitors", headers=h.auth)
    assert listed.json()["data"] == []  # nothing stored


async def test_missing_required_fields(h):
    for name in ("name", "type", "apl", "notifier_ids"):
        fields = body()
        del fields[name]
        assert_error(await h.client.post("/v1/monitors", headers=h.auth, json=fields), 400, "missing_field", param=name)


async def test_query_errors_name_line_and_column(h):
    apl = "['web']\n| where status >=\n| summarize count()"
    err = assert_error(await h.client.post("/v1/monitors", headers=h.auth, json=body(apl=apl)), 400, "invalid_query")
    assert err["message"].startswith("Line 3, column 1:")


async def test_patch_is_partial_and_checked_as_a_whole(h):
    hook = await h.webhook()
    m = await h.monitor(apl=COUNT, operator="above", threshold=10)
    r = await h.client.patch(
        f"/v1/monitors/{m['id']}",
        headers=h.auth,
        json={"threshold": 20, "notifier_ids": [hook["id"]], "description": "why", "trigger_after": {"m": 2, "n": 5}},
    )
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["threshold"] == 20 and got["notifier_ids"] == [hook["id"]] and got["description"] == "why"
    assert got["trigger_after"] == {"m": 2, "n": 5} and got["name"] == "API errors" and got["apl"] == COUNT
    assert got["updated_at"] >= m["updated_at"]
    # A bad combination is refused and nothing changes.
    bad = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"apl": "['web'] | take 1"})
    assert_error(bad, 400, "invalid_query", param="apl")
    bad = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"type": "match_event"})
    assert_error(bad, 400, "invalid_field", param="type")
    bad = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"notifier_ids": ["ntf_x"]})
    assert_error(bad, 400, "invalid_field", param="notifier_ids")
    bad = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"trigger_after": {"m": 6, "n": 5}})
    assert_error(bad, 400, "invalid_field", param="trigger_after.m")
    assert [w["code"] for w in got.pop("warnings")] == ["unknown_dataset"]  # only the patch answer has them
    assert (await h.get(m["id"])) == got
    # A shorter interval applies at once.
    r = await h.client.patch(
        f"/v1/monitors/{m['id']}", headers=h.auth, json={"interval_seconds": 10, "description": None}
    )
    after = r.json()
    assert after["description"] is None
    assert datetime.fromisoformat(after["next_evaluation_at"]) <= datetime.now(UTC) + timedelta(seconds=11)


async def test_delete_and_not_found(h):
    m = await h.monitor(apl=COUNT, operator="above", threshold=10)
    assert (await h.client.delete(f"/v1/monitors/{m['id']}", headers=h.auth)).status_code == 204
    for method, path in [
        ("GET", f"/v1/monitors/{m['id']}"),
        ("PATCH", f"/v1/monitors/{m['id']}"),
        ("DELETE", f"/v1/monitors/{m['id']}"),
        ("GET", f"/v1/monitors/{m['id']}/history"),
        ("POST", f"/v1/monitors/{m['id']}/evaluate"),
    ]:
        r = await h.client.request(method, path, headers=h.auth, json={} if method in ("PATCH", "POST") else None)
        assert_error(r, 404, "not_found")


async def test_deleting_a_notifier_stops_routing_to_it(h):
    hook = await h.webhook()
    other = await h.webhook("/other")
    m = await h.monitor(apl=COUNT, operator="above", threshold=10, notifier_ids=[hook["id"], other["id"]])
    assert (await h.client.delete(f"/v1/notifiers/{hook['id']}", headers=h.auth)).status_code == 204
    assert (await h.get(m["id"]))["notifier_ids"] == [other["id"]]


async def test_scopes(h, make_token):
    reader = {"Authorization": f"Bearer {await make_token(['monitors:read'])}"}
    writer = {"Authorization": f"Bearer {await make_token(['monitors:write'])}"}
    assert_error(await h.client.post("/v1/monitors", headers=reader, json=body()), 403, "insufficient_scope")
    r = await h.client.post("/v1/monitors", headers=writer, json=body())
    assert r.status_code == 201
    mid = r.json()["id"]
    assert_error(await h.client.get("/v1/monitors", headers=writer), 403, "insufficient_scope")
    assert (await h.client.get("/v1/monitors", headers=reader)).status_code == 200
    assert (await h.client.get(f"/v1/monitors/{mid}/history", headers=reader)).status_code == 200
    # A dry run only reads; a real evaluation writes.
    dry = await h.client.post(f"/v1/monitors/{mid}/evaluate", headers=reader, json={"dry_run": True})
    assert dry.status_code == 200, dry.text
    wet = await h.client.post(f"/v1/monitors/{mid}/evaluate", headers=reader, json={})
    assert_error(wet, 403, "insufficient_scope")
    assert_error(await h.client.delete(f"/v1/monitors/{mid}", headers=reader), 403, "insufficient_scope")
    # A dataset-limited token cannot watch another dataset (403: the query names it), nor evaluate a monitor over
    # one (404: an id outside the token's datasets is as unknown; tests/integration/monitors/test_dataset_limits.py).
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['app'])}"}
    assert_error(await h.client.post("/v1/monitors", headers=limited, json=body()), 403, "insufficient_scope")
    r = await h.client.post("/v1/monitors", headers=limited, json=body(apl="['app'] | summarize count()"))
    assert r.status_code == 201
    assert_error(
        await h.client.post(f"/v1/monitors/{mid}/evaluate", headers=limited, json={"dry_run": True}),
        404,
        "not_found",
    )


async def test_openapi_describes_the_monitor_routes(h):
    paths = (await h.client.get("/schema/openapi.json")).json()["paths"]
    for path in ("/v1/monitors", "/v1/monitors/{monitor_id}", "/v1/monitors/{monitor_id}/evaluate",
                 "/v1/monitors/{monitor_id}/history"):  # fmt: skip
        assert path in paths
