"""What changed, as every adapter renders it (the end-to-end delivery is tests/integration/annotations/
test_changes_delivered.py): each change's title, link, when and why in the adapter's own form, the count of the
rest, hostile text kept as text; Alertmanager's webhook body untouched by them."""

from __future__ import annotations

import json

import pytest

from adapters import testing as kit
from adapters.alertmanager_format import alertmanager_body
from adapters.chat_a import ChatA
from adapters.chat_b import ChatB
from adapters.chat_c import ChatC
from adapters.email import Email
from adapters.incident_a import IncidentA
from adapters.incident_b import IncidentB
from adapters.webhook import Webhook, new_signing_secret

KEY = "R0UTINGKEY0000000000000000000abc"
CONFIGS = {
    "email": {"addresses": ["ops@example.com"]},
    "incident_a": {"integration_key": KEY},
    "incident_b": {"integration_key": KEY},
    "webhook": {"url": "https://public.example/x", "signing_secret": new_signing_secret()},
}
ALL = [ChatA, ChatB, ChatC, Webhook, IncidentA, IncidentB, Email]


def events():
    changes = kit.sample_changes()
    return {
        "monitor": kit.replace_event(kit.sample_events()["triggered"], changes=changes, more_changes=2),
        "group": kit.replace_event(kit.sample_group_events()["group_firing"], changes=changes, more_changes=2),
    }


@pytest.mark.parametrize("kind", ["monitor", "group"])
@pytest.mark.parametrize("adapter_cls", ALL, ids=lambda a: a.type)
def test_every_adapter_says_what_changed(adapter_cls, kind):
    adapter = kit.adapter(adapter_cls, CONFIGS.get(adapter_cls.type, {"url": "https://public.example/x"}))
    text = json.dumps(adapter.render(events()[kind]).payload, ensure_ascii=False)
    for expected in (
        "checkout 1.4.2",
        "raise pool size",
        "4 min before the first alert",
        "env=prod, service=checkout",
        "dataset web-logs",
        "https://ci.example.com/runs/1042",
    ):
        assert expected in text, (adapter_cls.type, expected)
    if adapter_cls not in (Webhook, IncidentA):  # those carry the array and its count
        assert "and 2 more" in text
    # Without changes nothing of the section shows.
    plain = kit.replace_event(events()[kind], changes=[], more_changes=0)
    assert "Recent changes" not in json.dumps(adapter.render(plain).payload)


def test_the_forms_each_adapter_uses():
    e = events()["monitor"]
    slack = kit.adapter(ChatA, {"url": "https://public.example/x"}).render(e).payload
    section = next(b for b in slack["blocks"] if "Recent changes" in json.dumps(b))
    assert "<https://ci.example.com/runs/1042|deploy: checkout 1.4.2>" in section["text"]["text"]
    pager = kit.adapter(IncidentA, CONFIGS["incident_a"]).render(e).payload
    assert pager["links"][1] == {"href": "https://ci.example.com/runs/1042", "text": "Change: deploy: checkout 1.4.2"}
    assert [c["title"] for c in pager["payload"]["custom_details"]["changes"]] == ["checkout 1.4.2", "raise pool size"]
    genie = kit.adapter(IncidentB, CONFIGS["incident_b"]).render(e).payload
    assert genie["details"]["Recent changes"].startswith("• deploy: checkout 1.4.2 — 4 min before the first alert")
    hook = kit.adapter(Webhook, CONFIGS["webhook"]).render(e).payload["data"]
    assert hook["changes"][0]["why"] == "env=prod, service=checkout" and hook["more_changes"] == 2
    mail = kit.adapter(Email, CONFIGS["email"]).render(e).payload
    assert "Recent changes:\n• deploy: checkout 1.4.2" in mail["text"]
    assert '<a href="https://ci.example.com/runs/1042">deploy: checkout 1.4.2</a>' in mail["html"]


@pytest.mark.parametrize("kind", ["monitor", "group"])
def test_alertmanagers_webhook_format_stays_alertmanagers(kind):
    with_changes = events()[kind]
    without = kit.replace_event(with_changes, changes=[], more_changes=0)
    args = {"receiver": "team", "external_url": "https://beacon.example.com"}
    assert alertmanager_body(with_changes, **args) == alertmanager_body(without, **args)
    adapter = kit.adapter(Webhook, {**CONFIGS["webhook"], "format": "alertmanager"})
    assert "checkout 1.4.2" not in json.dumps(adapter.render(with_changes).payload)
