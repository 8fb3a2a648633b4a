"""Every view says who was and will be told of an alert as the one pipeline does (issue 26): a routed monitor's
page lists the messages its team got, a monitor with its own notifiers is shown notifying those (not the
tree's), and the routing test answers for its labels with its own route."""

from __future__ import annotations

from dataclasses import replace

import pytest

from adapters.http import HttpSender
from app.deliveries.sending import DeliveryEnv
from app.notifiers.service import build_notifier_env
from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from tests.integration.monitors.conftest import Harness
from tests.integration.ui.conftest import sign_in

ERRORS = "['web'] | where status >= 500 | summarize count()"


@pytest.fixture
def settings(settings):
    return replace(settings, allow_private_destinations=True)  # the webhooks are local receivers


@pytest.fixture
async def h(client, auth, db, settings, httpserver):
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=5.0)
    yield Harness(client, auth, db, DeliveryEnv(settings, notifier_env, http, db), httpserver)
    await http.aclose()


async def _tree(h, routes, root_notifiers=()):
    current = (await h.client.get("/v1/routing", headers=h.auth)).json()
    r = await h.client.put(
        "/v1/routing",
        headers={**h.auth, "If-Match": current["version"]},
        json={
            "route": {
                "notifier_ids": list(root_notifiers),
                "group_by": ["alertname"],
                "group_wait_seconds": 0,
                "routes": routes,
            }
        },
    )
    assert r.status_code == 200, r.text


async def test_a_routed_monitors_page_lists_what_its_team_got(h, admin_token):
    h.httpserver.expect_request("/hook").respond_with_data("ok")
    hook = await h.webhook()
    await _tree(h, [{"matchers": ["team=payments"], "notifier_ids": [hook["id"]]}])
    m = await h.monitor(apl=ERRORS, operator="above", threshold=2, labels={"team": "payments"})
    await h.ingest("web", [{"_time": h.at(s), "status": 500} for s in (1, 2, 3)])
    await h.run(h.at(60))
    await run_routing(RoutingEnv(h.env), h.at(60))  # placed and flushed already by the tick's own router run
    assert await h.deliver() == 1
    r = await h.client.get("/v1/deliveries", headers=h.auth, params={"monitor_id": m["id"]})
    (sent,) = r.json()["data"]
    assert sent["notifier_id"] == hook["id"] and sent["kind"] == "alerts.firing" and sent["status"] == "succeeded"
    await sign_in(h.client, admin_token)
    deliveries = (await h.client.get(f"/ui/monitors/{m['id']}")).text.split('aria-label="Deliveries"')[1]
    assert "Nothing sent for this monitor yet" not in deliveries and "alerts.firing" in deliveries


async def test_a_monitor_with_its_own_notifiers_is_shown_notifying_them(h, admin_token):
    for path in ("/own", "/team"):
        h.httpserver.expect_request(path).respond_with_data("ok")
    own = await h.webhook("/own")
    body = {"name": "team pager", "type": "webhook", "config": {"url": h.httpserver.url_for("/team")}}
    team = (await h.client.post("/v1/notifiers", headers=h.auth, json=body)).json()
    await _tree(h, [], root_notifiers=[team["id"]])
    m = await h.monitor(apl=ERRORS, operator="above", threshold=2, notifier_ids=[own["id"]], labels={"team": "x"})
    await h.ingest("web", [{"_time": h.at(s), "status": 500} for s in (1, 2, 3)])
    await h.run(h.at(60))
    assert await h.deliver() == 1
    assert [r.path for r, _ in h.httpserver.log] == ["/own"]  # the tree's notifier hears nothing of it
    (group,) = (await h.client.get("/v1/alerts/groups", headers=h.auth)).json()["data"]
    assert group["notifier_ids"] == [own["id"]] and group["route"] == f"monitor:{m['id']}"
    labels = {"alertname": m["name"], "monitor_id": m["id"], "dataset": "web", "team": "x"}
    r = await h.client.post("/v1/routing/test", headers=h.auth, json={"labels": labels})
    assert r.json()["notifier_ids"] == [own["id"]]
    (route,) = r.json()["routes"]
    assert route["group_wait_seconds"] == 0 and route["repeat_interval_seconds"] is None
    await sign_in(h.client, admin_token)
    page = (await h.client.get("/ui/alerts")).text
    notifies = page.split("Notifies")[1].split("</p>")[0]
    assert own["name"] in notifies and team["name"] not in notifies
