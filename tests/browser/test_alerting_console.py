"""The alerts, silences and routing pages in headless Chromium: a silence made from an alert (the button, the
prefilled form, the alert then suppressed and why, expiring it), and the routing tree with its test form.
Screenshots as the other browser tests take them (docs/screenshots/ with BEACON_UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.browser.conftest import LiveServer, screenshot, sign_in


@pytest.fixture
def routed(api: httpx.Client) -> dict[str, str]:
    """Pager for payments' critical alerts (and on to chat), chat for the rest; DBDown inhibits Latency."""
    ids = {}
    for name in ("pager", "chat"):
        body = {"name": name, "type": "webhook", "config": {"url": f"https://hooks.example/{name}"}}
        ids[name] = api.post("/v1/notifiers", json=body).json()["id"]
    version = api.get("/v1/routing").json()["version"]
    doc = {
        "route": {
            "notifier_ids": [ids["chat"]],
            "group_by": ["cluster"],
            "routes": [
                {
                    "matchers": ["team=payments", 'severity=~"critical|page"'],
                    "notifier_ids": [ids["pager"]],
                    "continue": True,
                    "mute_time_intervals": ["weekends"],
                },
                {"matchers": ["team=payments"], "group_by": ["alertname"]},
            ],
        },
        "inhibit_rules": [
            {"source_matchers": ["alertname=DBDown"], "target_matchers": ["alertname=Latency"], "equal": ["cluster"]}
        ],
        "time_intervals": [
            {"name": "weekends", "intervals": [{"weekdays": ["saturday", "sunday"], "location": "Europe/Berlin"}]}
        ],
    }
    r = api.put("/v1/routing", json=doc, headers={"If-Match": version})
    assert r.status_code == 200, r.text
    alerts = [
        {"labels": {"alertname": "DBDown", "cluster": "eu", "team": "payments", "severity": "critical"},
         "annotations": {"summary": "primary unreachable"}},
        {"labels": {"alertname": "Latency", "cluster": "eu", "team": "payments"}},
        {"labels": {"alertname": "DiskFull", "cluster": "us", "instance": "db-1", "severity": "warning"},
         "annotations": {"summary": "92% used on /var"}},
    ]  # fmt: skip
    r = api.post("/v1/alerts", json=alerts)
    assert r.status_code == 200, r.text
    ids.update(zip(("db_down", "latency", "disk"), r.json()["fingerprints"], strict=True))
    return ids


def test_alerts_page_shows_groups_and_why(page: Any, live_server: LiveServer, token: str, routed: dict) -> None:
    sign_in(page, live_server, token)
    page.click("header.top a[href='/ui/alerts']")
    page.wait_for_url(f"{live_server.url}/ui/alerts")
    assert page.locator("#alert-counts").inner_text().startswith("2 firing · 1 suppressed")
    latency = page.locator(f"#alert-{routed['latency']}")
    assert latency.locator(".alert-state").inner_text() == "suppressed"
    assert latency.locator(".inhibited-by").inner_text() == "inhibited by DBDown"
    assert latency.locator(".inhibited-by a").get_attribute("title") == routed["db_down"]
    # The inhibiting alert is a link to its row on the same page.
    latency.locator(".inhibited-by a").click()
    assert page.url.endswith(f"#alert-{routed['db_down']}")
    groups = page.locator("section.alert-group")
    assert groups.count() == 4  # DBDown to the pager and (continue) to payments' chat, Latency too, DiskFull
    assert page.locator(f"#alert-{routed['disk']} .alert-state").inner_text() == "firing"
    screenshot(page, "alerts")


def test_silence_an_alert_from_its_row(page: Any, live_server: LiveServer, token: str, routed: dict, api) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/alerts")
    page.locator(f"#alert-{routed['disk']} a.silence-alert").click()
    page.wait_for_url(re.compile(r".*/ui/silences/new\?alert=" + routed["disk"]))
    matchers = page.locator("textarea[name=matchers]")
    assert matchers.input_value().splitlines() == [
        'alertname="DiskFull"',
        'cluster="us"',
        'instance="db-1"',
        'severity="warning"',
    ]
    # Keep the alert and its host: the silence should outlive a change of severity.
    matchers.fill('alertname="DiskFull"\ninstance="db-1"')
    page.fill("input[name=duration]", "3h")
    page.fill("input[name=comment]", "Replacing the disk (OPS-42)")
    screenshot(page, "silence-new")
    page.click("form.silence-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/ui/silences\?state=active&changed=sil_"))
    silence_id = page.url.rsplit("#", 1)[1]
    row = page.locator(f"tr[id='{silence_id}']")
    assert row.locator(".silence-state").inner_text() == "active"
    assert row.locator(".silence-matchers").inner_text().split() == ['alertname="DiskFull"', 'instance="db-1"']
    assert "changed" in (row.get_attribute("class") or "")
    stored = api.get(f"/v1/silences/{silence_id}").json()
    length = datetime.fromisoformat(stored["ends_at"]) - datetime.fromisoformat(stored["starts_at"])
    assert length.total_seconds() == 3 * 3600
    screenshot(page, "silences")

    page.click("header.top a[href='/ui/alerts']")
    disk = page.locator(f"#alert-{routed['disk']}")
    assert disk.locator(".alert-state").inner_text() == "suppressed"
    assert disk.locator(".silenced-by").inner_text() == f"silenced by {silence_id}"
    assert disk.locator("a.silence-alert").count() == 1  # a suppressed alert can still get a silence of its own
    disk.locator(".silenced-by a").click()
    page.wait_for_url(f"{live_server.url}/ui/silences#{silence_id}")

    page.locator(f"tr[id='{silence_id}'] form[aria-label='Expire {silence_id}'] button").click()
    page.wait_for_url(re.compile(r".*/ui/silences\?state=expired&changed=sil_"))
    assert page.locator(f"tr[id='{silence_id}'] .silence-state").inner_text() == "expired"
    assert page.locator(f"tr[id='{silence_id}'] form").count() == 0
    page.goto(f"{live_server.url}/ui/alerts")
    assert page.locator(f"#alert-{routed['disk']} .alert-state").inner_text() == "firing"
    assert api.get(f"/v1/alerts/{routed['disk']}").json()["silenced_by"] == []


def test_extend_a_silence(page: Any, live_server: LiveServer, token: str, api: httpx.Client) -> None:
    until = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    created = api.post("/v1/silences", json={"matchers": ["team=web"], "ends_at": until, "comment": "deploy"})
    assert created.status_code == 201, created.text
    silence = created.json()
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/silences?state=active")
    form = page.locator(f"form[aria-label='Extend {silence['id']}']")
    form.locator("input[name=duration]").fill("45m")
    form.locator("button").click()
    page.wait_for_url(re.compile(r".*/ui/silences\?state=active&changed=sil_"))
    extended = api.get(f"/v1/silences/{silence['id']}").json()
    moved = datetime.fromisoformat(extended["ends_at"]) - datetime.fromisoformat(silence["ends_at"])
    assert moved == timedelta(minutes=45)
    ends = page.locator(f"tr[id='{silence['id']}'] .silence-ends time")
    assert ends.get_attribute("datetime") == extended["ends_at"]
    # Read in the viewer's zone (the test browser's is UTC), with how far off it is (2 h 45 min).
    shown = datetime.fromisoformat(extended["ends_at"]).strftime("%Y-%m-%d %H:%M:%S")
    assert ends.inner_text() == f"{shown} (in 3 hr.)"


def test_routing_page_tree_and_test_form(page: Any, live_server: LiveServer, token: str, routed: dict) -> None:
    sign_in(page, live_server, token)
    page.click("header.top a[href='/ui/routing']")
    page.wait_for_url(f"{live_server.url}/ui/routing")
    routes = page.locator("li.route")
    assert [routes.nth(i).get_attribute("data-route") for i in range(routes.count())] == [
        "route",
        "route.routes[0]",
        "route.routes[1]",
    ]
    second = page.locator("li.route[data-route='route.routes[1]'] > .route-body")
    assert "chat (inherited)" in second.inner_text()  # its parent's notifier
    # Children are drawn inside their parent, indented.
    root_box = page.locator("li.route[data-route='route'] > .route-head").bounding_box()
    child_box = page.locator("li.route[data-route='route.routes[0]'] > .route-head").bounding_box()
    assert child_box["x"] > root_box["x"] + 10

    page.fill("textarea[name=labels]", "alertname=Latency\nteam=payments\ncluster=eu\nseverity=critical")
    page.click("form.routing-test button[type=submit]")
    page.wait_for_selector("#test-result")
    taken = page.locator("tr.route-taken")
    assert [taken.nth(i).get_attribute("data-route") for i in range(taken.count())] == [
        "route.routes[0]",
        "route.routes[1]",
    ]
    assert page.locator("#verdict-inhibited").inner_text() == f"Inhibited by {routed['db_down']}"
    assert page.locator("#verdict-silenced").inner_text() == "Not silenced"
    highlighted = page.locator("li.route.taken")
    assert [highlighted.nth(i).get_attribute("data-route") for i in range(highlighted.count())] == [
        "route.routes[0]",
        "route.routes[1]",
    ]
    assert page.locator("textarea[name=labels]").input_value().startswith("alertname=Latency")
    screenshot(page, "routing")
