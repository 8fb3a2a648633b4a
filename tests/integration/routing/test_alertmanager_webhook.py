"""A routed group reaches a webhook notifier with `format: "alertmanager"` as Alertmanager's webhook body: the
receiver is the notifier's name, the group key and labels are the group's, resolved alerts carry their end."""

from __future__ import annotations

import json
from datetime import timedelta

from standardwebhooks.webhooks import Webhook as Receiver

from adapters.webhook import new_signing_secret


async def test_routed_group_in_alertmanagers_format(h):
    secret = new_signing_secret()
    config = {"url": h.httpserver.url_for("/hook"), "format": "alertmanager", "max_alerts": 2, "signing_secret": secret}
    r = await h.client.post(
        "/v1/notifiers", headers=h.auth, json={"name": "am-receiver", "type": "webhook", "config": config}
    )
    assert r.status_code == 201, r.text
    await h.routing({"group_by": ["alertname"], "group_wait_seconds": 10, "notifier_ids": [r.json()["id"]]})
    day = (h.clock.now + timedelta(days=1)).isoformat()
    generator = "http://prometheus.example:9090/graph?g0.expr=up"
    await h.post(
        *(
            {"labels": {"alertname": "Down", "instance": i}, "ends_at": day, "generator_url": generator}
            for i in ("a", "b", "c")
        )
    )
    await h.step()
    (first,) = await h.step(10)
    assert first["version"] == "4" and first["receiver"] == "am-receiver" and first["status"] == "firing"
    assert first["groupKey"] == '{}:{alertname="Down"}' and first["groupLabels"] == {"alertname": "Down"}
    assert first["commonLabels"] == {"alertname": "Down"} and first["truncatedAlerts"] == 1
    assert [a["labels"]["instance"] for a in first["alerts"]] == ["a", "b"]
    assert {a["generatorURL"] for a in first["alerts"]} == {generator}
    request = h.httpserver.log[-1][0]
    assert Receiver(secret).verify(request.get_data(), dict(request.headers))["version"] == "4"
    await h.post(*({"labels": {"alertname": "Down", "instance": i}, "ends_at": h.clock.now.isoformat()} for i in "abc"))
    (resolved,) = await h.step(300)
    assert resolved["status"] == "resolved" and resolved["truncatedAlerts"] == 1
    assert all(a["status"] == "resolved" and a["endsAt"].startswith("20") for a in resolved["alerts"])
    assert json.loads(request.get_data())["groupKey"] == resolved["groupKey"]
