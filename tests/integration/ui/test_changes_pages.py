"""What changed, in the console: each group's "Recent changes" on the alerts page, the routing test's, and a
monitor's page (its dataset's annotations on its value chart, its changes listed), as the token may see them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.integration.ui.conftest import sign_in

NOW = datetime.now(UTC).replace(microsecond=0)


async def _annotate(client, auth, title, datasets, minutes, **fields):
    body = {
        "type": "deploy",
        "title": title,
        "datasets": datasets,
        "time": (NOW + timedelta(minutes=minutes)).isoformat(),
    }
    r = await client.post("/v1/annotations", headers=auth, json={**body, **fields})
    assert r.status_code == 201, r.text


async def test_alerts_routing_and_monitor_pages_say_what_changed(client, auth, admin_token, make_token):
    await _annotate(
        client, auth, "checkout 1.4.2", ["*"], -3, labels={"service": "checkout"}, url="https://ci.example/9"
    )
    await _annotate(client, auth, "web pool size", ["web"], -7)
    await _annotate(client, auth, "secret rotation", ["secret"], -2, labels={"service": "checkout"})
    await _annotate(client, auth, "cart 9.9", ["*"], -1, labels={"service": "cart"})
    r = await client.post("/v1/ingest/web", headers=auth, json=[{"status": 500}])
    assert r.status_code == 200, r.text
    labels = {"alertname": "HighErrors", "service": "checkout", "dataset": "web"}
    assert (await client.post("/v1/alerts", headers=auth, json=[{"labels": labels}])).status_code == 200
    r = await client.post(
        "/v1/monitors",
        headers=auth,
        json={
            "name": "web errors",
            "type": "threshold",
            "apl": "['web'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": 100,
            "notifier_ids": [],
            "labels": {"service": "checkout"},
        },
    )
    assert r.status_code == 201, r.text
    monitor = r.json()["id"]

    await sign_in(client, admin_token)
    alerts = (await client.get("/ui/alerts")).text
    assert "Recent changes" in alerts
    for title in ("checkout 1.4.2", "web pool size", "secret rotation"):
        assert title in alerts
    assert "cart 9.9" not in alerts and "matched <code>service=checkout</code>" in alerts

    routing = (await client.get("/ui/routing", params={"labels": "service=checkout\ndataset=web"})).text
    assert 'id="test-changes"' in routing and "checkout 1.4.2" in routing and "cart 9.9" not in routing
    assert "changes</span> 1h" in routing  # the root's window

    page = (await client.get(f"/ui/monitors/{monitor}", params={"range": "1h"})).text
    assert 'aria-label="Recent changes"' in page and "web pool size" in page
    assert 'data-title="web pool size"' in page  # drawn on the value chart too

    # A token limited to web sees web's and the environment-wide changes, not the secret dataset's.
    await sign_in(client, await make_token(["*"], datasets=["web"]))
    page = (await client.get(f"/ui/monitors/{monitor}", params={"range": "1h"})).text
    assert "checkout 1.4.2" in page and "web pool size" in page and "secret rotation" not in page
