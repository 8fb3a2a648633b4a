"""A token limited to datasets sees and touches nothing of monitors over other datasets: not the monitor, its
last value, its history (the other dataset's events) nor its deliveries. One id outside is a 404 (as an unknown
id: nothing is inferred), lists leave it out."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text

from tests.helpers import assert_error

MATCH = "['{}'] | where status >= 500"


async def _setup(h, make_token):
    hook = await h.webhook()
    secret = await h.monitor(
        name="secret errors", type="match_event", apl=MATCH.format("secret"), notifier_ids=[hook["id"]]
    )
    pub = await h.monitor(name="pub errors", type="match_event", apl=MATCH.format("pub"), notifier_ids=[hook["id"]])
    await h.ingest("secret", [{"status": 503, "card": "4111-1111"}])
    await h.ingest("pub", [{"status": 500, "path": "/p"}])
    assert (await h.run(datetime.now(UTC))).deliveries == 2
    test = await h.client.post(f"/v1/notifiers/{hook['id']}/test", headers=h.auth)
    assert test.status_code == 201, test.text
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['pub'])}"}
    return hook, secret, pub, test.json(), limited


async def test_monitors_over_other_datasets_are_out_of_reach(h, make_token):
    _, secret, pub, _, limited = await _setup(h, make_token)
    listed = (await h.client.get("/v1/monitors", headers=limited)).json()["data"]
    assert [m["id"] for m in listed] == [pub["id"]]
    base = f"/v1/monitors/{secret['id']}"
    for method, path, body in (
        ("GET", base, None),
        ("GET", f"{base}/history", None),
        ("POST", f"{base}/evaluate", {"dry_run": True}),
        ("POST", f"{base}/evaluate", {}),
        ("PATCH", base, {"apl": MATCH.format("pub")}),
        ("PATCH", base, {"name": "renamed"}),
        ("DELETE", base, None),
    ):
        r = await h.client.request(method, path, headers=limited, json=body)
        assert_error(r, 404, "not_found")
        assert "4111" not in r.text
    after = await h.get(secret["id"])
    assert after["name"] == "secret errors" and after["dataset"] == "secret"
    assert len(await h.history(secret["id"])) == 1
    # Its own monitor cannot be re-pointed at another dataset either.
    r = await h.client.patch(f"/v1/monitors/{pub['id']}", headers=limited, json={"apl": MATCH.format("secret")})
    assert_error(r, 403, "insufficient_scope")
    assert (await h.get(pub["id"]))["dataset"] == "pub"
    assert (await h.client.get(f"/v1/monitors/{pub['id']}/history", headers=limited)).status_code == 200
    assert (await h.client.delete(f"/v1/monitors/{pub['id']}", headers=limited)).status_code == 204


async def test_deliveries_of_monitors_over_other_datasets_are_out_of_reach(h, make_token):
    hook, secret, pub, test, limited = await _setup(h, make_token)
    (hidden,) = await h.deliveries(secret["id"])
    (shown,) = await h.deliveries(pub["id"])

    async def ids(path, **params):
        r = await h.client.get(path, headers=limited, params={"limit": 100, **params})
        assert r.status_code == 200, r.text
        return {d["id"] for d in r.json()["data"]}

    # Test messages belong to no dataset: a token that may read notifiers sees them.
    assert await ids("/v1/deliveries") == {shown["id"], test["id"]}
    assert await ids(f"/v1/notifiers/{hook['id']}/deliveries") == {shown["id"], test["id"]}
    assert await ids("/v1/deliveries", monitor_id=secret["id"]) == set()
    assert_error(await h.client.get(f"/v1/deliveries/{hidden['id']}", headers=limited), 404, "not_found")
    assert_error(await h.client.post(f"/v1/deliveries/{hidden['id']}/retry", headers=limited), 404, "not_found")
    assert (await h.client.get(f"/v1/deliveries/{shown['id']}", headers=limited)).status_code == 200
    assert (await h.client.get(f"/v1/deliveries/{test['id']}", headers=limited)).status_code == 200

    # Once its monitor is gone, nothing tells which dataset a delivery was about: only unlimited tokens see it.
    assert (await h.client.delete(f"/v1/monitors/{pub['id']}", headers=h.auth)).status_code == 204
    assert await ids("/v1/deliveries") == {test["id"]}
    assert_error(await h.client.get(f"/v1/deliveries/{shown['id']}", headers=limited), 404, "not_found")
    assert (await h.client.get(f"/v1/deliveries/{shown['id']}", headers=h.auth)).status_code == 200
    async with h.db() as s:
        assert (await s.execute(text("SELECT count(*) FROM deliveries"))).scalar_one() == 3
