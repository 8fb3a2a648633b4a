"""Every statement Beacon sends, judged by the Citus plan (issue 32): Citus is not installed here, so what can be
proved is what the statements say. A representative workload runs through the real app over HTTP (a real uvicorn)
and its own jobs (monitor loop, router, delivery worker, retention), with every statement recorded
(tests/sqlrecorder.py); tests/sqlcheck.py then finds, by the table classes of app/db/citus_plan.py (the plan
`beacon migrate --distributed` applies):
- a statement over events, event_rollups or dataset_fields without `dataset_id = $n` (it would fan out to every
  shard, or be refused);
- a row lock (FOR UPDATE / FOR SHARE / ...) on a reference table (a lock on the whole table on every node);
- a join of a distributed table with a reference table off the distribution column, or with a local table;
- the mixes of local and Citus tables Citus cannot run, and the ON CONFLICT parameter Citus fails on.
"""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.datasets.retention import apply_retention
from app.db.engine import make_engine
from app.deliveries.worker import deliver_due
from app.monitors.tick import evaluate_due
from app.routing.jobs import run_routing
from app.services import services_of
from app.settings import Settings
from tests.servers import served_app
from tests.sqlcheck import Finding, check_all
from tests.sqlrecorder import Recorder, recording


@pytest.fixture
def local_settings(settings: Settings) -> Settings:
    return replace(settings, allow_private_destinations=True, monitor_match_settle_seconds=0.0)


@pytest.fixture
async def recorded(make_app, local_settings: Settings) -> AsyncIterator[tuple[Recorder, Any, str]]:
    """The app served with every statement recorded from before it starts."""
    with recording() as recorder:
        app = make_app(local_settings)
        async with served_app(app) as url:
            yield recorder, app, url


def events(at: datetime, count: int, **fields: Any) -> list[dict[str, Any]]:
    return [{"_time": (at + timedelta(seconds=i)).isoformat(), "n": i, **fields} for i in range(count)]


def report(findings: list[Finding]) -> str:
    return "\n".join(f"[{f.rule}] {f.detail}\n    {f.sql[:400]}" for f in findings)


async def workload(api: httpx.AsyncClient, app: Any, database_url: str, hook_url: str) -> dict[str, Any]:
    """Ingest, query, export, datasets, console pages, notifiers, monitors and their loop, alerts, routing,
    silences, annotations, tokens, deliveries, retention and dataset deletion; returns what a user would check."""
    seen: dict[str, Any] = {}
    now = datetime.now(UTC).replace(microsecond=0)

    async def ok(response: httpx.Response, status: int = 200) -> Any:
        assert response.status_code == status, response.text
        return response.json() if response.content else None

    # Ingest: JSON arrays, NDJSON, gzip; a new dataset and one that exists; days long ago for retention.
    await ok(await api.post("/v1/ingest/web", json=events(now - timedelta(minutes=3), 20, status=500, svc="a")))
    await ok(await api.post("/v1/ingest/web", json=events(now - timedelta(days=3), 5, status=200)))
    await ok(await api.post("/v1/ingest/web", json=events(now - timedelta(days=4), 5, status=200)))
    ndjson = "\n".join(f'{{"status": 503, "svc": "b", "i": {i}}}' for i in range(10)).encode()
    await ok(
        await api.post(
            "/v1/ingest/api",
            content=gzip.compress(ndjson),
            headers={"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"},
        )
    )
    await ok(await api.post("/v1/ingest/api", json=events(now - timedelta(days=3), 3, status=200)))

    # Queries: events, the rollup (count by minute, count), no range (clamped to the dataset's days), a field
    # the dataset never had, an unknown dataset; export.
    window = {
        "start_time": (now - timedelta(hours=1)).isoformat(),
        "end_time": (now + timedelta(minutes=1)).isoformat(),
    }
    rows = await ok(await api.post("/v1/query", json={"apl": "['web'] | where status >= 500 | take 5", **window}))
    assert len(rows["rows"]) == 5
    by_minute = await ok(
        await api.post("/v1/query", json={"apl": "['web'] | summarize count() by bin(_time, 1m)", **window})
    )
    assert sum(r[1] for r in by_minute["rows"]) == 20
    counted = await ok(await api.post("/v1/query", json={"apl": "['web'] | count"}))
    seen["web_count"] = counted["rows"][0][0]
    unknown = await ok(await api.post("/v1/query", json={"apl": "['web'] | where statsu == 1 | count", **window}))
    assert [w["code"] for w in unknown["warnings"]] == ["unknown_field"]
    missing = await api.post("/v1/query", json={"apl": "['wbe'] | count"})
    assert missing.status_code == 404 and "web" in missing.json()["error"]["message"]
    exported = await api.post("/v1/export", json={"apl": "['api'] | where status == 503", **window})
    assert exported.status_code == 200 and len(exported.text.splitlines()) == 10

    # Datasets: list, detail, fields, change.
    listed = await ok(await api.get("/v1/datasets"))
    assert {d["name"] for d in listed["data"]} == {"web", "api"}
    detail = await ok(await api.get("/v1/datasets/web"))
    assert detail["events_estimate"] == 30
    await ok(await api.get("/v1/datasets/web/fields"))
    await ok(await api.patch("/v1/datasets/web", json={"retention_days": 1, "description": "front"}))

    # Notifiers, routing, silences, monitors.
    hook = await ok(
        await api.post("/v1/notifiers", json={"name": "hook", "type": "webhook", "config": {"url": hook_url}}), 201
    )
    await ok(await api.patch(f"/v1/notifiers/{hook['id']}", json={"send_resolved": False}))
    routing = await api.get("/v1/routing")
    doc = routing.json()
    doc["route"]["notifier_ids"] = [hook["id"]]
    doc["route"]["group_wait_seconds"] = 0
    await ok(await api.put("/v1/routing", json=doc, headers={"If-Match": routing.headers["etag"]}))
    silence = await ok(
        await api.post(
            "/v1/silences",
            json={"matchers": ["team=nobody"], "ends_at": (now + timedelta(hours=1)).isoformat(), "comment": "x"},
        ),
        201,
    )
    await ok(await api.patch(f"/v1/silences/{silence['id']}", json={"comment": "y"}))
    monitor = {
        "type": "threshold",
        "notifier_ids": [],
        "interval_seconds": 60,
        "range_seconds": 3600,
        "operator": "above",
        "threshold": 3,
    }
    web_errors = await ok(
        await api.post(
            "/v1/monitors",
            json={**monitor, "name": "web errors", "apl": "['web'] | where status >= 500 | summarize count()",
                  "notifier_ids": [hook["id"]]},
        ),
        201,
    )  # fmt: skip
    await ok(
        await api.post(
            "/v1/monitors",
            json={**monitor, "name": "api errors", "apl": "['api'] | where status >= 500 | summarize count()"},
        ),
        201,
    )
    await ok(
        await api.post(
            "/v1/monitors",
            json={**monitor, "name": "web 404", "apl": "['web'] | where status >= 404 | summarize count()"},
        ),
        201,
    )
    typo = await ok(
        await api.post(
            "/v1/monitors", json={**monitor, "name": "typo", "apl": "['web'] | where statsu > 1 | summarize count()"}
        ),
        201,
    )
    assert [w["code"] for w in typo["warnings"]] == ["unknown_field"]
    await ok(
        await api.post(
            "/v1/monitors",
            json={"type": "match_event", "name": "api 503", "apl": "['api'] | where status == 503",
                  "interval_seconds": 60, "range_seconds": 600, "notifier_ids": [hook["id"]]},
        ),
        201,
    )  # fmt: skip
    await ok(await api.patch(f"/v1/monitors/{typo['id']}", json={"description": "spelled wrong"}))
    await ok(await api.post(f"/v1/monitors/{web_errors['id']}/evaluate"))

    # The loop, its router and the delivery worker; an external alert routed; annotations and a child token.
    services = services_of(app)
    env = services.delivery_env
    at = now + timedelta(seconds=150)
    ticked = await evaluate_due(env, lanes=1, now=at)
    seen["evaluated"] = ticked.evaluated
    await ok(await api.post("/v1/alerts", json=[{"labels": {"alertname": "Disk", "team": "db"}}]))
    await run_routing(services.routing_env, datetime.now(UTC))
    seen["sent"] = await deliver_due(services.dispatcher)
    await ok(await api.get(f"/v1/monitors/{web_errors['id']}/history"))
    await ok(await api.get("/v1/alerts"))
    await ok(await api.get("/v1/deliveries", params={"monitor_id": web_errors["id"]}))
    note = await ok(await api.post("/v1/annotations", json={"type": "deploy", "title": "v2", "datasets": ["web"],
                                                            "time": now.isoformat()}), 201)  # fmt: skip
    await ok(await api.patch(f"/v1/annotations/{note['id']}", json={"title": "v2.1"}))
    await ok(await api.post("/v1/tokens", json={"name": "reader", "scopes": ["query"]}), 201)
    await ok(await api.delete(f"/v1/monitors/{typo['id']}"), 204)

    # The console: datasets (their activity), a monitor's page (its values chart).
    token = api.headers["Authorization"].removeprefix("Bearer ")
    async with httpx.AsyncClient(base_url=str(api.base_url)) as web:
        signed = await web.post("/ui/login", data={"token": token}, headers={"Origin": str(api.base_url)})
        assert signed.status_code == 303, signed.text
        assert "web" in (await web.get("/ui/datasets")).text
        assert (await web.get("/ui/datasets/web")).status_code == 200
        assert (await web.get(f"/ui/monitors/{web_errors['id']}")).status_code == 200

    # Retention (web keeps a day: its days long ago go, api's stay) and deleting a dataset.
    engine = make_engine(database_url, pool_size=1)
    try:
        seen["retention"] = await apply_retention(engine, now)
    finally:
        await engine.dispose()
    seen["web_count_after"] = (await ok(await api.post("/v1/query", json={"apl": "['web'] | count"})))["rows"][0][0]
    await ok(await api.delete("/v1/datasets/api"), 204)
    assert (await api.post("/v1/query", json={"apl": "['api'] | count"})).status_code == 404
    return seen


async def test_every_statement_routes_on_citus(recorded, admin_token, database_url, httpserver):
    recorder, app, url = recorded
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    headers = {"Authorization": f"Bearer {admin_token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        seen = await workload(api, app, database_url, httpserver.url_for("/hook"))

    # The workload did what it is meant to exercise.
    assert seen["web_count"] == 30
    assert seen["evaluated"] >= 4 and seen["sent"] >= 1 and len(httpserver.log) >= 1
    assert len(seen["retention"].dropped) == 1 and seen["retention"].deleted_rows == 5
    assert seen["web_count_after"] == 20
    statements = recorder.app_statements()
    for table in ("events", "event_rollups", "dataset_fields", "deliveries", "monitors", "alerts"):
        assert any(table in s for s in statements), table

    findings = check_all(statements)
    assert not findings, f"{len(findings)} statements would not route or run on Citus:\n{report(findings)}"
