"""Every notification says what changed, in every adapter's own form, delivered to real local receivers
(pytest-httpserver for the HTTP types, aiosmtpd for e-mail): a routed group's message and a monitor's own message
each carry the related changes, and neither an unrelated one (another dataset, other labels) nor one older than
the window. A change seen by the group is the same for every notifier of its route."""

from __future__ import annotations

import email
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import policy
from typing import Any

import pytest

from app.deliveries.worker import Dispatcher, deliver_due
from app.monitors.tick import evaluate_due
from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from app.services import services_of
from tests.offline_dns import offline_delivery_env

KEY = "R0UTINGKEY0000000000000000000abc"
T = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)  # the alert's start
RELATED = ("checkout 1.4.2", "web pool size")
UNRELATED = ("cart 9.9", "other dataset", "ancient web deploy")


@pytest.fixture
def wired(settings, httpserver, smtp):
    controller, _ = smtp
    base = httpserver.url_for("").rstrip("/")
    return replace(
        settings,
        allow_private_destinations=True,
        monitor_match_settle_seconds=0.0,
        incident_a_url=base + "/pd",
        incident_b_url=base + "/og",
        smtp_host="127.0.0.1",
        smtp_port=controller.port,
        smtp_starttls=False,
    )


@pytest.fixture
async def api(app_client, wired):
    async with app_client(wired) as c:
        yield c


@pytest.fixture
async def delivery_env(wired, db):
    env = offline_delivery_env(wired, db)
    yield env
    await env.http.aclose()


async def _setup(api: Any, auth: dict[str, str], httpserver: Any) -> list[str]:
    for path in ("/chat_a", "/chat_b", "/chat_c", "/hook"):
        httpserver.expect_request(path, method="POST").respond_with_data("", status=204)
    httpserver.expect_request("/pd/v2/enqueue", method="POST").respond_with_json({"status": "success"}, status=202)
    httpserver.expect_request("/og/v2/alerts", method="POST").respond_with_json({"result": "ok"}, status=202)
    configs = {
        "chat_a": {"url": httpserver.url_for("/chat_a")},
        "chat_b": {"url": httpserver.url_for("/chat_b")},
        "chat_c": {"url": httpserver.url_for("/chat_c")},
        "webhook": {"url": httpserver.url_for("/hook")},
        "incident_a": {"integration_key": KEY},
        "incident_b": {"integration_key": KEY},
        "email": {"addresses": ["oncall@example.com"]},
    }
    ids = []
    for kind, config in configs.items():
        r = await api.post("/v1/notifiers", headers=auth, json={"name": kind, "type": kind, "config": config})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    annotations = [
        ("checkout 1.4.2", -4, {"datasets": ["*"], "labels": {"service": "checkout"}, "url": "https://ci.example/1"}),
        ("web pool size", -20, {"datasets": ["web"], "type": "config"}),
        ("cart 9.9", -2, {"datasets": ["*"], "labels": {"service": "cart"}}),
        ("other dataset", -3, {"datasets": ["other"]}),
        ("ancient web deploy", -120, {"datasets": ["web"]}),
    ]
    for title, minutes, fields in annotations:
        body = {"type": "deploy", "title": title, "time": (T + timedelta(minutes=minutes)).isoformat(), **fields}
        r = await api.post("/v1/annotations", headers=auth, json=body)
        assert r.status_code == 201, r.text
    return ids


def _received(httpserver: Any, smtp: Any) -> dict[str, str]:
    """Each destination's message as text (JSON bodies dumped, e-mails as their plain and HTML parts)."""
    found: dict[str, str] = {}
    for request, _ in httpserver.log:
        found[request.path] = json.dumps(json.loads(request.get_data()), ensure_ascii=False)
    _, sink = smtp
    for envelope in sink.envelopes:
        mail = email.message_from_bytes(envelope.content, policy=policy.default)
        found["email"] = mail.get_body(("plain",)).get_content() + mail.get_body(("html",)).get_content()
    return found


def _check(found: dict[str, str]) -> None:
    assert set(found) == {"/chat_a", "/chat_b", "/chat_c", "/hook", "/pd/v2/enqueue", "/og/v2/alerts", "email"}
    for where, text in found.items():
        for title in RELATED:
            assert title in text, (where, title)
        for title in UNRELATED:
            assert title not in text, (where, title)
        assert "service=checkout" in text and "dataset web" in text, where  # why each matched
        assert "4 min before the first alert" in text, where


async def test_a_routed_groups_message_says_what_changed(api, auth, httpserver, smtp, wired, db, delivery_env):
    ids = await _setup(api, auth, httpserver)
    clock_now = [T]
    renv = RoutingEnv(delivery_env, clock=lambda: clock_now[0])
    services_of(api.app).routing_env.clock = renv.clock
    current = await api.get("/v1/routing", headers=auth)
    route = {"notifier_ids": ids, "group_by": ["alertname"], "group_wait_seconds": 0}
    r = await api.put("/v1/routing", headers={**auth, "If-Match": current.json()["version"]}, json={"route": route})
    assert r.status_code == 200, r.text
    labels = {"alertname": "HighErrors", "service": "checkout", "dataset": "web", "severity": "critical"}
    r = await api.post("/v1/alerts", headers=auth, json=[{"labels": labels, "starts_at": T.isoformat()}])
    assert r.status_code == 200, r.text
    await run_routing(renv)  # places the alert in its group
    clock_now[0] = T + timedelta(seconds=1)
    await run_routing(renv)  # flushes it
    assert await deliver_due(Dispatcher(delivery_env)) == 7
    found = _received(httpserver, smtp)
    _check(found)
    hook = json.loads(found["/hook"])["data"]
    assert [c["title"] for c in hook["changes"]] == list(RELATED) and hook["more_changes"] == 0
    assert hook["changes"][0]["why"] == "service=checkout" and hook["changes"][0]["datasets"] == ["*"]
    pager = json.loads(found["/pd/v2/enqueue"])
    assert {"href": "https://ci.example/1", "text": "Change: deploy: checkout 1.4.2"} in pager["links"]
    assert [c["title"] for c in pager["payload"]["custom_details"]["changes"]] == list(RELATED)
    assert "Recent changes" in json.loads(found["/og/v2/alerts"])["details"]

    # The alert's page and the group's say the same.
    (fp,) = r.json()["fingerprints"]
    one = (await api.get(f"/v1/alerts/{fp}", headers=auth)).json()
    assert [c["title"] for c in one["changes"]] == list(RELATED)
    (group,) = (await api.get("/v1/alerts/groups", headers=auth)).json()["data"]
    assert [c["title"] for c in group["changes"]] == list(RELATED) and group["changes_window_seconds"] == 3600


async def test_a_monitors_own_message_says_what_changed(api, auth, httpserver, smtp, db, delivery_env):
    ids = await _setup(api, auth, httpserver)
    events = [{"_time": (T - timedelta(seconds=s)).isoformat(), "status": 500} for s in range(1, 6)]
    r = await api.post("/v1/ingest/web", headers=auth, json=events)
    assert r.status_code == 200, r.text
    r = await api.post(
        "/v1/monitors",
        headers=auth,
        json={
            "name": "HighErrors",
            "type": "threshold",
            "apl": "['web'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": 3,
            "interval_seconds": 60,
            "notifier_ids": ids,
            "labels": {"service": "checkout"},
        },
    )
    assert r.status_code == 201, r.text
    async with db() as s:
        from sqlalchemy import text

        await s.execute(text("UPDATE monitors SET next_evaluation_at = :t"), {"t": T})
        await s.commit()
    result = await evaluate_due(delivery_env, lanes=1, now=T)
    assert result.deliveries == 7
    assert await deliver_due(Dispatcher(delivery_env)) == 7
    found = _received(httpserver, smtp)
    _check(found)
    hook = json.loads(found["/hook"])["data"]
    assert hook["kind"] == "triggered" and [c["title"] for c in hook["changes"]] == list(RELATED)
