"""incident_a (Events API v2) and incident_b (alerts API) against a real local HTTP server."""

from __future__ import annotations

import hashlib
import json

from adapters import testing as kit
from adapters.incident_a import IncidentA
from adapters.incident_b import IncidentB
from tests.adapters.conftest import golden

EVENTS = kit.sample_events()
KEY = "R0UTINGKEY0000000000000000000abc"


def expected_key(monitor_id: str, group: dict) -> str:
    group_text = json.dumps(dict(sorted(group.items())), separators=(",", ":")) if group else ""
    return hashlib.sha256(f"{monitor_id}{group_text}".encode()).hexdigest()


async def test_incident_a_trigger_and_resolve_share_the_dedup_key(httpserver, ctx):
    httpserver.expect_request("/pd/v2/enqueue", method="POST").respond_with_json(
        {"status": "success", "dedup_key": "x"}, status=202
    )
    adapter = kit.adapter(IncidentA, {"integration_key": KEY}, ctx)
    for kind in ("triggered", "resolved"):
        result = await adapter.send(adapter.render(EVENTS[kind]))
        assert result.ok and result.status == 202, result
    trigger, resolve = (json.loads(r.get_data()) for r, _ in httpserver.log)
    golden("incident_a_trigger", trigger)
    golden("incident_a_resolve", resolve)
    assert trigger["event_action"] == "trigger" and resolve["event_action"] == "resolve"
    assert trigger["routing_key"] == resolve["routing_key"] == KEY
    assert trigger["dedup_key"] == resolve["dedup_key"] == expected_key("mon_0123456789abcdef", {"service": "api"})
    other_group = kit.replace_event(EVENTS["triggered"], group={"service": "web"})
    assert adapter.render(other_group).payload["dedup_key"] != trigger["dedup_key"]
    assert len(trigger["payload"]["summary"]) <= 1024


async def test_incident_a_summary_limit(httpserver, ctx):
    adapter = kit.adapter(IncidentA, {"integration_key": KEY}, ctx)
    summary = adapter.render(kit.replace_event(EVENTS["triggered"], monitor_name="x" * 5000)).payload["payload"][
        "summary"
    ]
    assert len(summary) == 1024 and summary.endswith("…")


async def test_incident_b_create_then_close_by_alias(httpserver, ctx):
    httpserver.expect_request("/og/v2/alerts", method="POST").respond_with_json({"result": "ok"}, status=202)
    alias = expected_key("mon_0123456789abcdef", {"service": "api"})
    httpserver.expect_request(f"/og/v2/alerts/{alias}/close", method="POST").respond_with_json({}, status=202)
    adapter = kit.adapter(IncidentB, {"integration_key": KEY}, ctx)
    for kind in ("triggered", "resolved"):
        result = await adapter.send(adapter.render(EVENTS[kind]))
        assert result.ok and result.status == 202, result
    (create, _), (close, _) = httpserver.log
    assert create.path == "/og/v2/alerts"
    assert close.path == f"/og/v2/alerts/{alias}/close" and close.args.to_dict() == {"identifierType": "alias"}
    for request in (create, close):
        assert request.headers["Authorization"] == f"GenieKey {KEY}"
    body = json.loads(create.get_data())
    golden("incident_b_create", body)
    golden("incident_b_close", json.loads(close.get_data()))
    assert body["alias"] == alias
    long = adapter.render(kit.replace_event(EVENTS["triggered"], monitor_name="m" * 400, description="d" * 20000))
    assert len(long.payload["message"]) == 130 and len(long.payload["description"]) <= 15000
    assert KEY not in json.dumps(body)  # the key travels in the header only
