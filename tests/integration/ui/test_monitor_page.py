"""A monitor's own page, where notifications and chart annotations link: its definition, its value over time
against the threshold, its state changes, history, deliveries and who gets its messages.

History is made by the monitor loop's own code at chosen times (the monitors tests' harness)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta
from urllib.parse import urlsplit

import msgspec
import pytest

from adapters.http import HttpSender
from app.auth import Principal
from app.db.reads import open_read_pool
from app.deliveries.sending import DeliveryEnv
from app.monitors.schemas import MonitorOut
from app.notifiers.service import build_notifier_env
from app.routing.env import RoutingEnv
from app.routing.jobs import run_routing
from app.ui.monitor_values import value_series
from app.ui.ranges import floor_to
from tests.integration.monitors.conftest import Harness
from tests.integration.ui.conftest import sign_in

MINUTE = timedelta(minutes=1)


@pytest.fixture
def settings(settings):
    return replace(settings, allow_private_destinations=True)  # the webhook is a local receiver


@pytest.fixture
async def h(client, auth, db, settings, httpserver):
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=5.0)
    yield Harness(client, auth, db, DeliveryEnv(settings, notifier_env, http, db), httpserver)
    await http.aclose()


def _section(page: str, label: str) -> str:
    return page.split(f'aria-label="{label}"')[1].split("</section>")[0]


async def test_the_link_of_a_notification_opens_the_monitor_page(h, admin_token):
    h.httpserver.expect_request("/hook").respond_with_data("ok")
    hook = await h.webhook()
    await h.ingest("web", [{"_time": h.at(s), "status": 500} for s in (1, 2, 3)])
    m = await h.monitor(
        name="API errors",
        apl="['web'] | where status >= 500 | summarize count()",
        operator="above",
        threshold=2,
        interval_seconds=60,
        notifier_ids=[hook["id"]],
    )
    await h.run(h.at(30), monitor_id=m["id"])
    assert await h.deliver() == 1
    link = h.received()[0]["data"]["link"]
    path = urlsplit(link).path
    assert path == f"/ui/monitors/{m['id']}"

    # Opened in a browser that is not signed in: sign in, then back to the monitor.
    r = await h.client.get(path, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/ui/login?next=%2Fui%2Fmonitors%2F{m['id']}"
    r = await h.client.post("/ui/login", data={"token": admin_token, "next": path}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == path

    page = (await h.client.get(path, params={"range": "1h"})).text
    assert "<h1>API errors" in page and '<span class="badge state-alerting monitor-state">alerting</span>' in page
    assert '<pre class="apl">[&#39;web&#39;] | where status &gt;= 500 | summarize count()</pre>' in page
    assert re.search(r'class="monitor-threshold">the value is &gt; <strong>2</strong>', page)
    value = r'<dd class="monitor-value"><strong class="error">3</strong>\s*<span class="muted">\(breached\)'
    assert re.search(value, page)
    # The chart: a threshold line at 2, the trigger as a marker where it happened.
    assert '<g class="threshold" data-value="2">' in page
    assert re.search(r'<g class="ann-marker ann-point" data-id="[^"]+" data-type="triggered"', page)
    # Who gets it, what was sent, the history.
    assert f'<a href="/ui/notifiers#{hook["id"]}">on-call hook</a>' in _section(page, "Recipients")
    deliveries = _section(page, "Deliveries")
    assert "on-call hook" in deliveries and "status-succeeded" in deliveries
    assert "<td>triggered</td>" in _section(page, "History")


async def test_the_value_over_time_is_the_monitors_query_over_each_window(h, database_url):
    window = floor_to(h.at(0), MINUTE) - 5 * MINUTE
    events = [{"_time": window + timedelta(seconds=s), "status": 500, "service": "api"} for s in (5, 10, 15)]
    events += [{"_time": window + timedelta(seconds=s), "status": 503, "service": "web"} for s in (20, 30)]
    events += [{"_time": window + 2 * MINUTE + timedelta(seconds=1), "status": 500, "service": "web"}]
    events += [{"_time": window + timedelta(seconds=40), "status": 200, "service": "api"}]  # not an error
    await h.ingest("web", events)
    m = await h.monitor(
        apl="['web'] | where status >= 500 | summarize count() by service",
        operator="above",
        threshold=2,
        interval_seconds=60,
        range_seconds=60,
        notify_by_group=True,
    )
    out = msgspec.convert(m, MonitorOut)
    who = Principal("tok_x", frozenset({"*"}), None)
    pool = await open_read_pool(database_url)  # the query pool's kind of session (JSONB handed over parsed)
    try:
        series = await value_series(pool, who, out, window - MINUTE, window + 4 * MINUTE, h.at(0))
    finally:
        await pool.close()
    # The worst group of each minute: api's 3 errors, then web's lone one two minutes later.
    assert series.error is None
    assert series.points == [(window, 3.0), (window + 2 * MINUTE, 1.0)]


async def test_a_grouped_monitor_is_red_while_a_group_alerts(h, admin_token):
    by_service = "['web'] | where status >= 500 | summarize count() by service"
    await h.ingest("web", [{"_time": h.at(s), "status": 500, "service": "api"} for s in (1, 2, 3)])
    m = await h.monitor(apl=by_service, operator="above", threshold=2, interval_seconds=60, notify_by_group=True)
    await h.run(h.at(30), monitor_id=m["id"])
    assert (await h.get(m["id"]))["state"] == "alerting"
    await sign_in(h.client, admin_token)
    for path in (f"/ui/monitors/{m['id']}", "/ui/monitors"):
        page = (await h.client.get(path, params={"range": "1h"})).text
        states = re.findall(r'<rect class="tl-\w+" data-state="(\w+)"', page)
        assert states == ["alerting"], path  # from its first trigger (before: green all along)


async def test_a_routed_monitor_shows_the_routes_its_labels_take(h, admin_token):
    hook = await h.webhook()
    current = (await h.client.get("/v1/routing", headers=h.auth)).json()
    routes = [{"matchers": ["team=payments"], "notifier_ids": [hook["id"]]}]
    r = await h.client.put(
        "/v1/routing",
        headers={**h.auth, "If-Match": current["version"]},
        json={"route": {"notifier_ids": [], "group_by": ["alertname"], "routes": routes}},
    )
    assert r.status_code == 200, r.text
    m = await h.monitor(apl="['web'] | summarize count()", operator="above", threshold=2, labels={"team": "payments"})
    await sign_in(h.client, admin_token)
    recipients = _section((await h.client.get(f"/ui/monitors/{m['id']}")).text, "Recipients")
    assert "Routed by the routing tree" in recipients
    assert "<code>route.routes[0]</code>" in recipients
    assert f'<a href="/ui/notifiers#{hook["id"]}">on-call hook</a>' in recipients


async def test_the_monitor_page_asks_what_its_api_asks(h, client, make_token, admin_token):
    m = await h.monitor(apl="['web'] | summarize count()", operator="above", threshold=2)
    await sign_in(client, await make_token(["query"]))
    r = await client.get(f"/ui/monitors/{m['id']}")
    assert r.status_code == 403 and "monitors:read" in r.text
    await sign_in(client, await make_token(["monitors:read"], datasets=["other"]))
    r = await client.get(f"/ui/monitors/{m['id']}")
    assert r.status_code == 404 and f"No monitor with id {json.dumps(m['id'])[1:-1]!r}" in r.text.replace("&#39;", "'")
    # Without notifiers:read or routing:read, the page says what it leaves out.
    await sign_in(client, await make_token(["monitors:read"]))
    page = (await client.get(f"/ui/monitors/{m['id']}")).text
    assert "no <code>notifiers:read</code> scope" in page and "no <code>routing:read</code> scope" in page


# One pipeline (issue 26): every view says who was and will be told of an alert as the pipeline does.
ERRORS = "['web'] | where status >= 500 | summarize count()"


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
