"""`GET /metrics`: Prometheus' text format without a token, parsed with prometheus_client's own parser, counting
what a user did — and no tenant data (dataset names, tokens, paths that were asked) in any label."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


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
