"""webhook with `config.format: "alertmanager"`: Alertmanager's webhook body (version 4), signed like every webhook,
so a receiver written for Alertmanager reads it unchanged; `max_alerts` truncates as Alertmanager does."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook as Receiver

from adapters import testing as kit
from adapters.base import AdapterContext, ConfigError
from adapters.webhook import Webhook, new_signing_secret
from tests.adapters.conftest import golden

# The keys Alertmanager 0.25's notify/webhook.Message has (template.Data + version, groupKey, truncatedAlerts).
MESSAGE_KEYS = {
    "version",
    "groupKey",
    "truncatedAlerts",
    "status",
    "receiver",
    "groupLabels",
    "commonLabels",
    "commonAnnotations",
    "externalURL",
    "alerts",
}
ALERT_KEYS = {"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"}


def _named(ctx: AdapterContext, name: str = "payments-pager") -> AdapterContext:
    return AdapterContext(
        settings=ctx.settings, http=ctx.http, message_id=ctx.message_id, signing_secrets=(), notifier_name=name
    )


def _adapter(ctx: AdapterContext, url: str = "https://public.example/am", **config: object) -> Webhook:
    full = {"url": url, "signing_secret": new_signing_secret(), "format": "alertmanager", **config}
    return kit.adapter(Webhook, full, _named(ctx))  # type: ignore[return-value]


async def test_group_is_alertmanagers_body_signed(httpserver, ctx):
    secret = new_signing_secret()
    httpserver.expect_request("/am", method="POST").respond_with_data("", status=200)
    adapter = _adapter(ctx, httpserver.url_for("/am"), signing_secret=secret)
    result = await adapter.send(adapter.render(kit.sample_group_events()["group_firing"]))
    assert result.ok
    ((request, _),) = httpserver.log
    body = Receiver(secret).verify(request.get_data(), dict(request.headers))
    assert set(body) == MESSAGE_KEYS and all(set(a) == ALERT_KEYS for a in body["alerts"])
    assert body["version"] == "4" and body["status"] == "firing" and body["truncatedAlerts"] == 0
    assert body["receiver"] == "payments-pager" and body["externalURL"] == "https://beacon.example.com"
    assert body["groupKey"] == '{}/{team="payments"}:{alertname="HighLatency"}'
    assert body["groupLabels"] == {"alertname": "HighLatency"}
    assert [(a["status"], a["labels"]["instance"]) for a in body["alerts"]] == [
        ("firing", "db-1"),
        ("firing", "db-2"),
        ("resolved", "db-3"),
    ]
    firing, _, resolved = body["alerts"]
    assert firing["endsAt"] == "0001-01-01T00:00:00Z"  # Alertmanager's "not ended"
    assert resolved["endsAt"] == "2026-11-21T08:04:00.000Z"
    golden("webhook_alertmanager_group_firing", json.loads(request.get_data()))


def test_max_alerts_truncates_and_counts_the_rest(ctx):
    body = _adapter(ctx, max_alerts=2).render(kit.sample_group_events()["group_firing"]).payload
    assert [a["labels"]["instance"] for a in body["alerts"]] == ["db-1", "db-2"]
    assert body["truncatedAlerts"] == 1
    everything = _adapter(ctx, max_alerts=3).render(kit.sample_group_events()["group_firing"]).payload
    assert len(everything["alerts"]) == 3 and everything["truncatedAlerts"] == 0


def test_resolved_group(ctx):
    body = _adapter(ctx).render(kit.sample_group_events()["group_resolved"]).payload
    assert body["status"] == "resolved"
    assert {a["status"] for a in body["alerts"]} == {"resolved"}
    assert all(a["endsAt"] != "0001-01-01T00:00:00Z" for a in body["alerts"])


def test_a_monitors_own_message_is_a_group_of_one(ctx):
    events = kit.sample_events()
    trigger = _adapter(ctx).render(events["triggered"]).payload
    resolve = _adapter(ctx).render(events["resolved"]).payload
    (fired,) = trigger["alerts"]
    (ended,) = resolve["alerts"]
    assert trigger["status"] == fired["status"] == "firing" and fired["endsAt"] == "0001-01-01T00:00:00Z"
    assert resolve["status"] == ended["status"] == "resolved" and ended["endsAt"] == events["resolved"].time
    assert fired["labels"]["alertname"] == events["triggered"].monitor_name
    assert fired["labels"]["monitor_id"] == events["triggered"].monitor_id
    # The same alert in both messages: a receiver pairs the resolve with its trigger.
    assert fired["fingerprint"] == ended["fingerprint"] and trigger["groupKey"] == resolve["groupKey"]
    assert fired["generatorURL"] == events["triggered"].link


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"format": "alertmanager", "max_alerts": -1}, "0 (all alerts) or more"),
        ({"max_alerts": 5}, 'applies to `config.format: "alertmanager"` only'),
    ],
)
def test_bad_settings_name_the_key(config, message):
    with pytest.raises(ConfigError) as caught:
        Webhook.validate({"url": "https://public.example/am", **config})
    assert caught.value.param == "config.max_alerts" and message in caught.value.message


def test_unknown_format_is_refused():
    with pytest.raises(ConfigError) as caught:
        Webhook.validate({"url": "https://public.example/am", "format": "prometheus"})
    assert caught.value.param == "config.format"
