"""Monitor create/update answers warn about what would make the monitor never fire (issue 18): fields its
dataset has never had (with the closest known one), and a dataset that does not exist yet."""

from __future__ import annotations

from sqlalchemy import text

THRESHOLD = {"type": "threshold", "operator": "above", "threshold": 0}


async def test_create_and_patch_name_unknown_fields_with_the_closest_known(h):
    await h.ingest("web", [{"_time": h.at(0), "status": 500, "service": "api"}])
    m = await h.monitor(apl="['web'] | where statuss >= 500 | summarize count() by servce", **THRESHOLD)
    assert [(w["code"], w["field"], w["suggestion"]) for w in m["warnings"]] == [
        ("unknown_field", "statuss", "status"),
        ("unknown_field", "servce", "service"),
    ]
    assert "did you mean `status`?" in m["warnings"][0]["message"]
    # The monitor is saved as asked: a warning refuses nothing.
    assert (await h.get(m["id"]))["apl"] == m["apl"]

    fixed = await h.client.patch(
        f"/v1/monitors/{m['id']}", headers=h.auth, json={"apl": "['web'] | where status >= 500 | summarize count()"}
    )
    assert fixed.status_code == 200 and fixed.json()["warnings"] == []
    # A patch that leaves the query alone is checked as a whole too: the answer tells of the query it keeps.
    again = await h.client.patch(
        f"/v1/monitors/{m['id']}", headers=h.auth, json={"apl": "['web'] | where Status >= 500 | summarize count()"}
    )
    renamed = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"name": "renamed"})
    for r in (again, renamed):
        assert r.status_code == 200
        assert [(w["field"], w["suggestion"]) for w in r.json()["warnings"]] == [("Status", "status")]


async def test_a_match_monitor_is_checked_too(h):
    await h.ingest("web", [{"_time": h.at(0), "level": "error"}])
    m = await h.monitor(type="match_event", apl="['web'] | where levle == 'error' | project msg")
    assert [(w["field"], w["suggestion"]) for w in m["warnings"]] == [("levle", "level"), ("msg", None)]


async def test_a_dataset_that_does_not_exist_yet(h, make_token):
    await h.ingest("web-logs", [{"_time": h.at(0), "status": 500}])
    m = await h.monitor(apl="['web-log'] | summarize count()", **THRESHOLD)
    assert m["warnings"] == [
        {
            "code": "unknown_dataset",
            "message": "There is no dataset 'web-log' yet: the query finds no events until some are ingested; "
            "did you mean 'web-logs'?",
            "field": "web-log",
            "suggestion": "web-logs",
            "param": None,
        }
    ]
    # A token limited to datasets is never told of one outside its list.
    limited = {"Authorization": f"Bearer {await make_token(['monitors:write'], datasets=['web-log'])}"}
    body = {"name": "n", "notifier_ids": [], "apl": "['web-log'] | summarize count()", **THRESHOLD}
    r = await h.client.post("/v1/monitors", headers=limited, json=body)
    assert r.status_code == 201, r.text
    assert r.json()["warnings"][0]["suggestion"] is None
    assert "web-logs" not in r.text


async def test_fields_that_exist_give_no_warning(h):
    await h.ingest("web", [{"_time": h.at(0), "status": 500, "http": {"path": "/a"}}])
    m = await h.monitor(
        apl="['web'] | where ['http.path'] == '/a' | extend s = status | summarize max(s) by bin(_time, 1m)",
        **THRESHOLD,
    )
    assert m["warnings"] == []


async def test_a_field_check_that_fails_leaves_no_monitor_nor_change(h):
    """The check runs before the commit (issue 32: on Citus it failed after it, and the client got a 500 for a
    monitor that existed). Here it fails for real: the table it reads is renamed away for the request."""
    await h.ingest("web", [{"_time": h.at(0), "status": 500}])
    kept = await h.monitor(apl="['web'] | where status >= 500 | summarize count()", **THRESHOLD)
    async with h.db() as s:
        await s.execute(text("ALTER TABLE dataset_fields RENAME TO dataset_fields_away"))
        await s.commit()
    try:
        body = {"name": "new", "apl": "['web'] | where status >= 400 | summarize count()", "notifier_ids": []}
        created = await h.client.post("/v1/monitors", headers=h.auth, json={**body, **THRESHOLD})
        changed = await h.client.patch(f"/v1/monitors/{kept['id']}", headers=h.auth, json={"name": "changed"})
    finally:
        async with h.db() as s:
            await s.execute(text("ALTER TABLE dataset_fields_away RENAME TO dataset_fields"))
            await s.commit()
    assert created.status_code == changed.status_code == 500
    listed = (await h.client.get("/v1/monitors", headers=h.auth)).json()["data"]
    assert [(m["id"], m["name"]) for m in listed] == [(kept["id"], kept["name"])]
