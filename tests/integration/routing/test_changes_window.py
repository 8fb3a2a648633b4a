"""`changes_window_seconds` in the routing document: stored and shown as written, checked with the place named,
inherited, used by the routing test; not in the Alertmanager configuration /api/v2/status shows."""

from __future__ import annotations

from tests.helpers import assert_error


async def test_the_window_is_part_of_the_document(h):
    doc = await h.routing(
        {
            "notifier_ids": [],
            "changes_window_seconds": 1800,
            "routes": [{"matchers": ["team=web"], "changes_window_seconds": 0}, {"matchers": ["team=db"]}],
        }
    )
    assert doc["route"]["changes_window_seconds"] == 1800
    assert doc["route"]["routes"][0]["changes_window_seconds"] == 0
    assert "changes_window_seconds" not in doc["route"]["routes"][1]  # inherited: not written

    async def window(labels):
        r = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": labels})
        assert r.status_code == 200, r.text
        return [route["changes_window_seconds"] for route in r.json()["routes"]]

    assert await window({"team": "web"}) == [0]
    assert await window({"team": "db"}) == [1800]

    current = await h.client.get("/v1/routing", headers=h.auth)
    bad = {"route": {"routes": [{"matchers": ["team=web"], "changes_window_seconds": -5}]}}
    r = await h.client.put("/v1/routing", headers={**h.auth, "If-Match": current.json()["version"]}, json=bad)
    assert_error(r, 400, "invalid_field", param="route.routes[0].changes_window_seconds")
    status = await h.client.get("/api/v2/status", headers=h.auth)
    assert status.status_code == 200 and "changes_window" not in status.json()["config"]["original"]


async def test_an_alert_that_starts_in_the_future_is_shown(h):
    """Its window of changes ends, empty, now: schemathesis found GET /v1/alerts/{fingerprint} a 500 (a time range
    whose lower bound lay after its upper one) for an alert posted with `startsAt` in 2199."""
    await h.routing({"notifier_ids": [], "changes_window_seconds": 1800})
    posted = await h.client.post(
        "/v1/alerts", headers=h.auth, json=[{"labels": {"team": "web"}, "starts_at": "2199-01-01T00:00:00Z"}]
    )
    assert posted.status_code == 200, posted.text
    (fingerprint,) = posted.json()["fingerprints"]
    r = await h.client.get(f"/v1/alerts/{fingerprint}", headers=h.auth)
    assert r.status_code == 200, r.text
    assert r.json()["changes"] == []
