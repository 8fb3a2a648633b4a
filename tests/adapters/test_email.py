"""email against a real local SMTP server (aiosmtpd): multipart text + HTML, headers, escaping, failures."""

from __future__ import annotations

import base64
import email
import socket
from email import policy

import pytest
from aiosmtpd.controller import Controller

from adapters import testing as kit
from adapters.email import Email
from tests.receivers import Sink


def _ctx(controller, **extra):
    settings = kit.settings_with(
        smtp_host="127.0.0.1",
        smtp_port=controller.port,
        smtp_starttls=False,
        smtp_from="alerts@beacon.example.com",
        **extra,
    )
    return kit.context(settings, message_id="dlv_mail1")


async def test_multipart_message_arrives(smtp):
    controller, sink = smtp
    ctx = _ctx(controller)
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com", "oncall@example.org"]}, ctx)
    result = await adapter.send(adapter.render(kit.sample_events()["triggered"]))
    assert result.ok, result
    (envelope,) = sink.envelopes
    assert envelope.mail_from == "alerts@beacon.example.com"
    assert envelope.rcpt_tos == ["ops@example.com", "oncall@example.org"]
    mail = email.message_from_bytes(envelope.content, policy=policy.default)
    assert mail["Subject"] == "[Alerting] API 5xx rate"
    assert mail["To"] == "ops@example.com, oncall@example.org"
    assert mail["Message-ID"] == "<dlv_mail1@beacon.example.com>"
    assert mail.get_content_type() == "multipart/alternative"
    text = mail.get_body(("plain",)).get_content()
    html = mail.get_body(("html",)).get_content()
    assert "the value 12.5 is above the threshold 10" in text
    assert "Open in Beacon: https://beacon.example.com/monitors/mon_0123456789abcdef" in text
    assert '<a href="https://beacon.example.com/monitors/mon_0123456789abcdef">' in html


async def test_hostile_text_is_escaped_in_html_and_subject_stays_one_line(smtp):
    controller, sink = smtp
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com"]}, _ctx(controller))
    assert (await adapter.send(adapter.render(kit.hostile_event()))).ok
    mail = email.message_from_bytes(sink.envelopes[0].content, policy=policy.default)
    html = mail.get_body(("html",)).get_content()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in html
    assert "{{ 7*7 }}" in html and ("&#34;" in html or "&quot;" in html)
    assert "\n" not in str(mail["Subject"]) and "<script>alert(1)</script>" in str(mail["Subject"])
    assert kit.HOSTILE_TEXT in mail.get_body(("plain",)).get_content().replace("\r\n", "\n")


async def test_refused_recipient_is_permanent_and_busy_is_retried(smtp):
    controller, sink = smtp
    adapter = kit.adapter(Email, {"addresses": ["gone@example.com"]}, _ctx(controller))
    sink.reject = {"gone@example.com": "550 5.1.1 no such user"}
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and not result.retryable and result.status == 550
    sink.reject = {"gone@example.com": "451 4.3.0 try again later"}
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and result.retryable and result.status == 451
    assert sink.envelopes == []


async def test_a_refused_recipient_among_others_is_reported_and_not_retried(smtp):
    controller, sink = smtp
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com", "gone@example.com"]}, _ctx(controller))
    for reply in ("550 5.1.1 no such user", "452 4.2.2 mailbox full"):
        sink.envelopes.clear()
        sink.reject = {"gone@example.com": reply}
        result = await adapter.send(adapter.render(kit.sample_events()["test"]))
        # The message reached ops@ only: not a success, and a retry would send it to ops@ a second time.
        assert not result.ok and not result.retryable and result.status == int(reply[:3]), result
        assert f"delivered to 1 of 2 recipients; refused: gone@example.com ({reply})" in result.detail
        assert "ops@example.com" not in result.detail
        assert [e.rcpt_tos for e in sink.envelopes] == [["ops@example.com"]]


async def test_every_recipient_refused_names_each_and_retries_only_when_all_are_temporary(smtp):
    controller, sink = smtp
    adapter = kit.adapter(Email, {"addresses": ["a@example.com", "b@example.com"]}, _ctx(controller))
    sink.reject = {"a@example.com": "550 5.1.1 no such user", "b@example.com": "451 4.3.0 try again later"}
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and not result.retryable and result.status == 550
    assert result.detail == (
        "SMTP: every recipient was refused: a@example.com (550 5.1.1 no such user); "
        "b@example.com (451 4.3.0 try again later)"
    )
    sink.reject = {"a@example.com": "450 4.2.0 greylisted", "b@example.com": "451 4.3.0 try again later"}
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and result.retryable and result.status == 450
    assert sink.envelopes == []


async def test_a_partial_delivery_is_recorded_as_failed_with_the_refused_address(app_client, auth, smtp):
    controller, sink = smtp
    sink.reject = {"gone@example.com": "550 5.1.1 no such user"}
    settings = dict(smtp_host="127.0.0.1", smtp_port=controller.port, smtp_starttls=False, smtp_from="a@b.example")
    async with app_client(**settings) as client:
        body = {"name": "mail", "type": "email", "config": {"addresses": ["ops@example.com", "gone@example.com"]}}
        notifier = (await client.post("/v1/notifiers", headers=auth, json=body)).json()
        sent = (await client.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)).json()
        stored = (await client.get(f"/v1/deliveries/{sent['id']}", headers=auth)).json()
    for d in (sent, stored):
        assert d["status"] == "failed" and d["next_attempt_at"] is None and d["response_status"] == 550, d
        assert "delivered to 1 of 2 recipients; refused: gone@example.com (550 5.1.1 no such user)" in d["error"]
        assert [a["retryable"] for a in d["attempt_log"]] == [False]
    assert [e.rcpt_tos for e in sink.envelopes] == [["ops@example.com"]]


class EchoingAuth(Sink):
    """A relay that refuses the credentials and repeats them in its reply (decoded, too)."""

    async def handle_AUTH(self, server, session, envelope, args):
        decoded = base64.b64decode(args[1]).decode() if len(args) > 1 else ""
        return f"535 5.7.8 bad credentials {' '.join(args)} ({decoded!r})"


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
async def test_relay_credentials_echoed_by_the_relay_are_masked(mechanism):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    other = {"PLAIN": "LOGIN", "LOGIN": "PLAIN"}[mechanism]
    controller = Controller(
        EchoingAuth(), hostname="127.0.0.1", port=port, auth_require_tls=False, auth_exclude_mechanism=[other]
    )
    controller.start()
    try:
        ctx = _ctx(controller, smtp_username="beacon-relay-user", smtp_password="Relay/Pa55word")
        adapter = kit.adapter(Email, {"addresses": ["ops@example.com"]}, ctx)
        result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    finally:
        controller.stop()
    assert not result.ok and result.status == 535 and f"bad credentials {mechanism} **********" in result.detail
    plain = base64.b64encode(b"\0beacon-relay-user\0Relay/Pa55word").decode()
    login = base64.b64encode(b"beacon-relay-user").decode()
    for shown in ("Relay/Pa55word", "beacon-relay-user", plain, login):
        assert shown not in result.detail, result.detail


async def test_unreachable_or_unconfigured_relay():
    closed = kit.settings_with(smtp_host="127.0.0.1", smtp_port=kit.closed_port(), smtp_starttls=False)
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com"]}, kit.context(closed))
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and result.retryable and "SMTP network error" in result.detail
    adapter = kit.adapter(Email, {"addresses": ["ops@example.com"]}, kit.context(kit.settings_with(smtp_host=None)))
    result = await adapter.send(adapter.render(kit.sample_events()["test"]))
    assert not result.ok and not result.retryable and "BEACON_SMTP_HOST" in result.detail


def test_config_kit():
    kit.check_config(
        Email,
        valid={"addresses": ["ops@example.com"]},
        invalid={"addresses": {"addresses": ["nope"]}},
    )
    kit.check_render(kit.adapter(Email, {"addresses": ["ops@example.com"]}))
