"""`GET /metrics`: Prometheus' text format without a token, parsed with prometheus_client's own parser, counting
what a user did — and no tenant data (dataset names, tokens, paths that were asked) in any label."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import assert_error


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def scrape(client) -> tuple[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    r = await client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return r.text, samples(r.text)


async def test_metrics_count_requests_events_queries_and_alerts(client, auth, admin_token):
    ndjson = '{"status": 200}\n{"status": 500}\nnot json\n'
    r = await client.post(
        "/v1/ingest/secret-team-logs", headers={**auth, "Content-Type": "application/x-ndjson"}, content=ndjson
    )
    assert r.status_code == 200 and r.json()["failed"] == 1
    r = await client.post("/v1/query", headers=auth, json={"apl": "['secret-team-logs'] | count"})
    assert r.status_code == 200
    r = await client.post("/v1/query", headers=auth, json={"apl": "['secret-team-logs'] | nonsense"})
    assert r.status_code == 400
    assert (await client.get("/v1/no-such-thing/secret-path", headers=auth)).status_code == 404
    r = await client.post("/v1/alerts", headers=auth, json=[{"labels": {"alertname": "Down"}}])
    assert r.status_code == 200

    text, found = await scrape(client)
    assert found[("beacon_events_ingested_total", ())] == 2
    assert found[("beacon_events_failed_total", ())] == 1
    ingest = (("method", "POST"), ("route", "/v1/ingest/{dataset}"), ("status", "200"))
    assert found[("beacon_http_requests_total", ingest)] == 1
    assert found[("beacon_http_requests_total", (("method", "GET"), ("route", "unmatched"), ("status", "404")))] == 1
    assert found[("beacon_query_duration_seconds_count", (("kind", "query"), ("outcome", "ok")))] == 1
    assert found[("beacon_query_duration_seconds_count", (("kind", "query"), ("outcome", "error")))] == 1
    assert found[("beacon_alerts_received_total", (("source", "external"),))] == 1
    assert found[("beacon_deliveries_pending", ())] == 0
    assert found[("beacon_http_request_duration_seconds_count", (("method", "POST"), ("route", "/v1/query")))] == 2
    # Nothing a tenant typed: no dataset name, no path that was asked, no token.
    for secret in ("secret-team-logs", "secret-path", admin_token, admin_token[-8:]):
        assert secret not in text
    assert all(name.startswith("beacon_") for name, _ in found)


async def test_metrics_need_no_token_and_count_refusals(client):
    assert (await client.get("/v1/tokens")).status_code == 401
    _, found = await scrape(client)
    refused = (("method", "GET"), ("route", "/v1/tokens"), ("status", "401"))
    assert found[("beacon_http_requests_total", refused)] == 1


async def test_deliveries_and_monitor_evaluations_are_counted_and_failures_logged(
    app_client, admin_token, httpserver, caplog
):

    auth = {"Authorization": f"Bearer {admin_token}"}
    httpserver.expect_request("/ok").respond_with_data("", status=204)
    httpserver.expect_request("/down").respond_with_data("busy", status=503)
    async with app_client(allow_private_destinations=True) as client:
        ids = {}
        for name in ("ok", "down"):
            body = {"name": name, "type": "webhook", "config": {"url": httpserver.url_for(f"/{name}")}}
            ids[name] = (await client.post("/v1/notifiers", headers=auth, json=body)).json()["id"]
            assert (await client.post(f"/v1/notifiers/{ids[name]}/test", headers=auth)).status_code == 201
        r = await client.post(
            "/v1/ingest/web", headers={**auth, "Content-Type": "application/x-ndjson"}, content='{"status": 500}\n'
        )
        assert r.json()["ingested"] == 1
        monitor = {
            "name": "errors",
            "type": "threshold",
            "apl": "['web'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": 0,
            "interval_seconds": 60,
            "range_seconds": 600,
            "notifier_ids": [ids["ok"]],
        }
        r = await client.post("/v1/monitors", headers=auth, json=monitor)
        assert r.status_code == 201, r.text
        mon = r.json()["id"]
        with caplog.at_level("INFO", logger="beacon"):
            assert (await client.post(f"/v1/monitors/{mon}/evaluate", headers=auth, json={})).status_code == 200
        _, found = await scrape(client)

    assert found[("beacon_deliveries_total", (("outcome", "succeeded"), ("type", "webhook")))] == 1
    assert found[("beacon_deliveries_total", (("outcome", "retrying"), ("type", "webhook")))] == 1
    assert found[("beacon_delivery_duration_seconds_count", (("type", "webhook"),))] == 2
    assert found[("beacon_deliveries_pending", ())] == 2  # the failed test, to retry; the trigger, not yet sent
    assert found[("beacon_monitor_evaluations_total", (("outcome", "alerting"),))] == 1
    changes = [r for r in caplog.records if r.name == "beacon.monitors" and r.levelname == "INFO"]
    assert [(r.monitor_id, r.previous_state, r.state) for r in changes] == [(mon, "ok", "alerting")]
    failed = [r for r in caplog.records if r.name == "beacon.deliveries" and r.levelname == "WARNING"]
    assert len(failed) == 1 and failed[0].notifier_id == ids["down"] and "HTTP 503" in failed[0].getMessage()


async def test_a_metrics_token_keeps_tenants_volume_private(app_client, admin_token):
    """BEACON_METRICS_TOKEN set: /metrics answers only to it (not to an API token, not without one)."""

    async with app_client(metrics_token="scrape-secret") as client:
        assert_error(await client.get("/metrics"), 401, "missing_token")
        for wrong in (f"Bearer {admin_token}", "Bearer scrape-secreT", "scrape-secret", "Basic c2NyYXBlLXNlY3JldA=="):
            r = await client.get("/metrics", headers={"Authorization": wrong})
            assert r.status_code == 401 and "beacon_" not in r.text, (wrong, r.text)
        r = await client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert r.status_code == 200 and "beacon_http_requests_total" in r.text
