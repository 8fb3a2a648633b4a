"""`beacon serve` as an operator runs it: JSON logs whose request lines carry the request id, no scheduler chatter,
and `/metrics` that adds up every worker process."""

from __future__ import annotations

import json
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.servers import Server, clean_env, free_port


def test_json_logs_and_metrics_across_two_workers(database_url, tmp_path):
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path),
        BEACON_LOG_FORMAT="json",
        BEACON_DELIVERY_POLL_SECONDS="0.2",  # the scheduler runs several times a second: none of it is logged
        BEACON_ROUTING_TICK_SECONDS="0.2",
    )
    server = Server(env, free_port(), "--workers", "2").wait_ready(60)
    try:
        base = f"http://127.0.0.1:{server.port}"
        auth = {"Authorization": f"Bearer {server.token}"}
        ids = [httpx.get(f"{base}/v1/tokens", headers=auth).headers["x-request-id"] for _ in range(12)]
        # Links name the address served (no BEACON_BASE_URL set): an error's doc_url opens here.
        refused = httpx.get(f"{base}/v1/tokens").json()["error"]
        assert refused["doc_url"] == f"{base}/docs/errors#missing_token"
        time.sleep(2)
        counted = 0.0
        for family in text_string_to_metric_families(httpx.get(f"{base}/metrics").text):
            for s in family.samples:
                ok = {"method": "GET", "route": "/v1/tokens", "status": "200"}
                if s.name == "beacon_http_requests_total" and s.labels == ok:
                    counted += s.value
        assert counted == 12  # each worker answered some; the scrape, answered by one, counts all
    finally:
        server.stop()
    records = [json.loads(line) for line in server.lines if line.startswith("{")]
    requests = [
        r for r in records if r["logger"] == "beacon.access" and r.get("path") == "/v1/tokens" and r["status"] == 200
    ]
    assert sorted(r["request_id"] for r in requests) == sorted(ids)
    assert all(r["method"] == "GET" and r["duration_ms"] >= 0 for r in requests)
    chatter = [line for line in server.lines if "Running job" in line or "executed successfully" in line]
    assert chatter == []
    assert not any("color_message" in r for r in records)
    not_json = [line for line in server.lines if line.strip() and not line.startswith(("{", "bcn_", "Created"))]
    assert not_json == []


def test_an_unknown_log_format_is_refused_before_anything_starts(tmp_path):
    import subprocess

    from tests.servers import BEACON

    env = clean_env(BEACON_DATA_DIR=str(tmp_path), BEACON_LOG_FORMAT="xml")
    done = subprocess.run([BEACON, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "BEACON_LOG_FORMAT must be one of text, json, got 'xml'" in done.stderr
    assert not (tmp_path / "pg").exists()  # refused before the embedded PostgreSQL was started
