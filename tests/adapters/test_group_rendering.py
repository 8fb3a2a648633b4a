"""Routed group notifications, rendered by every adapter and sent to real local receivers: golden payloads,
incident keys from the group key, every alert in webhook and e-mail messages, chat lists capped."""

from __future__ import annotations

import email
import hashlib
import json
from email import policy

import msgspec
import pytest

from adapters import testing as kit
from adapters.base import GroupAlert
from adapters.chat_a import ChatA
from adapters.chat_b import ChatB
from adapters.chat_c import ChatC
from adapters.email import Email
from adapters.incident_a import IncidentA
from adapters.incident_b import IncidentB
from adapters.webhook import Webhook, new_signing_secret
from tests.adapters.conftest import golden

GROUPS = kit.sample_group_events()
KEY = "R0UTINGKEY0000000000000000000abc"
GROUP_KEY = '{}/{team="payments"}:{alertname="HighLatency"}'
ALL = [ChatA, ChatB, ChatC, Webhook, IncidentA, IncidentB, Email]
CONFIGS = {
    "email": {"addresses": ["ops@example.com"]},
    "incident_a": {"integration_key": KEY},
    "incident_b": {"integration_key": KEY},
    "webhook": {"url": "https://public.example/x", "signing_secret": new_signing_secret()},
}


def config(adapter_cls):
    return CONFIGS.get(adapter_cls.type, {"url": "https://public.example/x"})


def big_group(n: int = 25):
    event = GROUPS["group_firing"]
    assert event.alert_group is not None
    alerts = [
        GroupAlert(
            fingerprint=f"{i:016x}",
            status="firing",
            labels={"alertname": "HighLatency", "instance": f"db-{i}"},
            starts_at="2026-11-21T08:00:00.000Z",
        )
        for i in range(n)
    ]
    return kit.replace_event(event, alert_group=msgspec.structs.replace(event.alert_group, alerts=alerts))


@pytest.mark.parametrize("adapter_cls", [ChatA, ChatB, ChatC])
@pytest.mark.parametrize("kind", ["group_firing", "group_resolved"])
async def test_chat_golden(httpserver, ctx, adapter_cls, kind):
    httpserver.expect_request("/hooks/T000/B000/secretTOKEN", method="POST").respond_with_data("ok")
    adapter = kit.adapter(adapter_cls, {"url": httpserver.url_for("/hooks/T000/B000/secretTOKEN")}, ctx)
    result = await adapter.send(adapter.render(GROUPS[kind]))
    assert result.ok, result
    body = json.loads(httpserver.log[0][0].get_data())
    golden(f"{adapter_cls.type}_{kind}", body)
    text = json.dumps(body, ensure_ascii=False)
    assert ("[FIRING:2] HighLatency" if kind == "group_firing" else "[RESOLVED] HighLatency") in text
    assert "p99 latency 2.1 s on db-1" in text and "p99 latency 1.2 s on db-3" in text


@pytest.mark.parametrize("adapter_cls", [ChatA, ChatB, ChatC])
def test_chat_lists_ten_alerts_and_counts_the_rest(ctx, adapter_cls):
    adapter = kit.adapter(adapter_cls, {"url": "https://public.example/hook"}, ctx)
    text = json.dumps(adapter.render(big_group(25)).payload, ensure_ascii=False)
    assert "[FIRING:25] HighLatency" in text and "db-9" in text and "db-10" not in text
    assert "and 15 more" in text


async def test_incident_a_dedup_key_from_the_group_key(httpserver, ctx):
    httpserver.expect_request("/pd/v2/enqueue", method="POST").respond_with_json({"status": "success"}, status=202)
    adapter = kit.adapter(IncidentA, {"integration_key": KEY}, ctx)
    for kind in ("group_firing", "group_resolved"):
        assert (await adapter.send(adapter.render(GROUPS[kind]))).ok
    trigger, resolve = (json.loads(r.get_data()) for r, _ in httpserver.log)
    golden("incident_a_group_trigger", trigger)
    expected = hashlib.sha256(f"alert_group:{GROUP_KEY}".encode()).hexdigest()
    assert trigger["dedup_key"] == resolve["dedup_key"] == expected
    assert (trigger["event_action"], resolve["event_action"]) == ("trigger", "resolve")
    assert trigger["payload"]["severity"] == "critical"  # the group's common `severity` label
    assert len(trigger["payload"]["custom_details"]["alerts"]) == 3


async def test_incident_b_alias_from_the_group_key(httpserver, ctx):
    alias = hashlib.sha256(f"alert_group:{GROUP_KEY}".encode()).hexdigest()
    httpserver.expect_request("/og/v2/alerts", method="POST").respond_with_json({}, status=202)
    httpserver.expect_request(f"/og/v2/alerts/{alias}/close", method="POST").respond_with_json({}, status=202)
    adapter = kit.adapter(IncidentB, {"integration_key": KEY}, ctx)
    for kind in ("group_firing", "group_resolved"):
        assert (await adapter.send(adapter.render(GROUPS[kind]))).ok
    (create, _), (close, _) = httpserver.log
    body = json.loads(create.get_data())
    golden("incident_b_group_create", body)
    assert body["alias"] == alias and close.path == f"/og/v2/alerts/{alias}/close"
    assert body["priority"] == "P1"


async def test_webhook_carries_every_alert_signed(httpserver, ctx):
    secret = new_signing_secret()
    httpserver.expect_request("/receiver", method="POST").respond_with_data("", status=204)
    adapter = kit.adapter(Webhook, {"url": httpserver.url_for("/receiver"), "signing_secret": secret}, ctx)
    for kind in ("group_firing", "group_resolved"):
        assert (await adapter.send(adapter.render(GROUPS[kind]))).ok
    from standardwebhooks.webhooks import Webhook as Receiver

    firing, resolved = (Receiver(secret).verify(r.get_data(), dict(r.headers)) for r, _ in httpserver.log)
    golden("webhook_group_firing", firing)
    assert firing["type"] == "alerts.firing" and resolved["type"] == "alerts.resolved"
    assert [a["status"] for a in firing["data"]["alerts"]] == ["firing", "firing", "resolved"]
    assert firing["data"]["alerts"][0]["labels"]["instance"] == "db-1"
    assert firing["data"]["alerts"][0]["annotations"]["summary"] == "p99 latency 2.1 s on db-1"
    assert firing["data"]["reason"] == "new_alerts" and firing["data"]["group_key"] == GROUP_KEY
    many = adapter.render(big_group(300)).payload
    assert len(many["data"]["alerts"]) == 300  # every alert, not a sample


async def test_email_lists_every_alert_with_labels_and_annotations(smtp):
    controller, sink = smtp
    settings = kit.settings_with(smtp_host="127.0.0.1", smtp_port=controller.port, smtp_starttls=False)
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com"]}, kit.context(settings, message_id="dlv_g"))
    message = adapter.render(GROUPS["group_firing"])
    golden("email_group_firing", message.payload)
    assert (await adapter.send(message)).ok
    mail = email.message_from_bytes(sink.envelopes[0].content, policy=policy.default)
    assert mail["Subject"] == "[FIRING:2] HighLatency"
    text = mail.get_body(("plain",)).get_content()
    for instance in ("db-1", "db-2", "db-3"):
        assert f"instance={instance}" in text
    assert "runbook: https://runbooks.example.com/latency" in text
    assert "<code>alertname=HighLatency" in mail.get_body(("html",)).get_content()
    assert len(adapter.render(big_group(60)).payload["text"].split("[firing]")) == 61


@pytest.mark.parametrize("adapter_cls", ALL, ids=lambda a: a.type)
def test_hostile_labels_stay_text(ctx, adapter_cls):
    adapter = kit.adapter(adapter_cls, config(adapter_cls), ctx)
    event = GROUPS["group_firing"]
    assert event.alert_group is not None
    alerts = [msgspec.structs.replace(a, annotations={"summary": kit.HOSTILE_TEXT}) for a in event.alert_group.alerts]
    hostile = kit.replace_event(event, alert_group=msgspec.structs.replace(event.alert_group, alerts=alerts))
    text = json.dumps(adapter.render(hostile).payload, ensure_ascii=False)
    assert "49" not in text.replace("2026", "") and "{{ 7*7 }}" in text


@pytest.mark.parametrize("adapter_cls", ALL, ids=lambda a: a.type)
def test_builtin_adapters_pass_the_group_kit(adapter_cls):
    kit.check_group_render(kit.adapter(adapter_cls, config(adapter_cls)))


def test_a_plugin_without_group_templates_still_renders_groups(tmp_path):
    (tmp_path / "message.json.j2").write_text('{"text": {{ (event.monitor_name ~ ": " ~ event.description) | json }}}')

    class Plugin(ChatA):
        type = "plugin_chat"
        templates_dir = tmp_path

    rendered = kit.check_group_render(kit.adapter(Plugin, {"url": "https://public.example/x"}))
    assert rendered["group_firing"].payload == {"text": "HighLatency: 2 firing, 1 resolved"}
