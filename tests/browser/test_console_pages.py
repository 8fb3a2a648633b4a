"""The console in headless Chromium, as a user meets it: links from alerts open the monitor's page (signing in
first), sign-in comes back but never leaves the site, `/` and `/docs` lead somewhere, and the pages read well
(timelines, placeholders, tooltips, clustered markers, local times, dataset activity, navigation, banners)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from tests.browser.conftest import (
    END,
    POINT,
    SCREENSHOTS,
    START,
    UPDATE_SCREENSHOTS,
    LiveServer,
    make_token,
    new_page,
    screenshot,
    sign_in,
)

RED = "rgb(239, 68, 68)"  # .tl-alerting


def _errors(api: httpx.Client, n: int, service: str = "api") -> None:
    now = datetime.now(UTC)
    events = [
        {"_time": (now - timedelta(seconds=s + 1)).isoformat(), "status": 500, "service": service} for s in range(n)
    ]
    assert api.post("/v1/ingest/web", json=events).status_code == 200


def _monitor(api: httpx.Client, name: str, apl: str, threshold: float, **extra: Any) -> dict[str, Any]:
    body = {
        "name": name,
        "type": "threshold",
        "apl": apl,
        "operator": "above",
        "threshold": threshold,
        "interval_seconds": 60,
        "range_seconds": 300,
        "notifier_ids": [],
        **extra,
    }
    r = api.post("/v1/monitors", json=body)
    assert r.status_code == 201, r.text
    assert api.post(f"/v1/monitors/{r.json()['id']}/evaluate", json={}).status_code == 200
    return r.json()


def _sign_in_at(page: Any, token: str) -> None:
    """Sign in on the sign-in page the browser is on."""
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")


def test_an_alerts_link_opens_the_monitor_page_after_signing_in(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client
) -> None:
    _errors(api, 5)
    m = _monitor(api, "API errors", "['web'] | where status >= 500 | summarize count()", 2)
    found = api.get("/v1/annotations", params={"datasets": "web", "type": "monitor"}).json()["data"]
    link = found[0]["url"]  # the link a chat message, a webhook body and the chart annotation carry
    assert link == f"{live_server.url}/ui/monitors/{m['id']}"

    page.goto(link)  # not signed in yet
    assert page.url == f"{live_server.url}/ui/login?next={quote('/ui/monitors/' + m['id'], safe='')}"
    _sign_in_at(page, token)
    page.wait_for_url(link)
    assert page.locator("h1").inner_text().startswith("API errors")
    assert page.locator(".monitor-state").inner_text() == "alerting"
    assert "where status >= 500" in page.locator("pre.apl").inner_text()
    # The value (5 errors in its window) is drawn above the dashed threshold line at 2, and the trigger is a
    # marker on the chart; the timeline beneath is red.
    chart = page.locator("section[aria-label=Value] svg.chart")
    # In the chart's own units: the highest point of the value (dots and lines) against the threshold's y.
    highest, threshold_y = chart.evaluate(
        """svg => {
          const ys = [...svg.querySelectorAll("circle.dot")].map(c => +c.getAttribute("cy"));
          svg.querySelectorAll("polyline.line").forEach(l =>
            l.getAttribute("points").split(" ").forEach(p => ys.push(+p.split(",")[1])));
          return [Math.min(...ys), +svg.querySelector("g.threshold line").getAttribute("y1")];
        }"""
    )
    assert highest < threshold_y
    assert chart.locator(".ann-marker[data-type=triggered]").count() == 1
    alerting = page.locator("section[aria-label=Value] rect[data-state=alerting]")
    assert alerting.evaluate("el => getComputedStyle(el).fill") == RED
    assert page.locator("section[aria-label=History] tbody tr").count() == 1
    page.goto(f"{link}?range=1h")
    screenshot(page, "monitor")


def test_sign_in_never_sends_the_browser_to_another_site(page: Any, live_server: LiveServer, token: str) -> None:
    for target in ("https://evil.example/", "//evil.example/ui/datasets", "/\\evil.example"):
        page.context.clear_cookies()
        page.goto(f"{live_server.url}/ui/login?next={quote(target, safe='')}")
        assert page.locator("input[name=next]").count() == 0
        _sign_in_at(page, token)
        page.wait_for_url(f"{live_server.url}/ui/datasets")


def test_the_front_door_and_the_api_reference(page: Any, live_server: LiveServer) -> None:
    # Offline: every request that leaves the service fails, and the API reference still draws (Swagger UI's files
    # are the service's own).
    outside: list[str] = []

    def only_local(route: Any) -> None:
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_local)
    page.goto(f"{live_server.url}/")
    assert page.url == f"{live_server.url}/ui/login"
    page.goto(f"{live_server.url}/docs")
    assert page.url == f"{live_server.url}/schema/swagger"
    page.wait_for_selector(".swagger-ui .opblock-summary-path[data-path='/v1/query']")
    assert page.title() == "Beacon" and "Beacon" in page.locator(".swagger-ui .info .title").inner_text()
    assert outside == []
    page.goto(f"{live_server.url}/docs/errors")
    assert "missing_token" in page.content()


def test_a_grouped_monitors_timeline_is_red_while_a_group_alerts(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client
) -> None:
    _errors(api, 5, "api")
    _errors(api, 1, "web")
    by_service = "['web'] | where status >= 500 | summarize count() by service"
    m = _monitor(api, "5xx by service", by_service, 2, notify_by_group=True)
    assert api.get(f"/v1/monitors/{m['id']}").json()["state"] == "alerting"
    sign_in(page, live_server, token)
    for path in ("/ui/monitors?range=1h", f"/ui/monitors/{m['id']}?range=1h"):
        page.goto(live_server.url + path)
        stretch = page.locator("svg.state-timeline rect[data-state]").last
        assert stretch.get_attribute("data-state") == "alerting", path
        assert stretch.evaluate("el => getComputedStyle(el).fill") == RED


def test_the_range_placeholder_is_the_charts_own_start(
    page: Any, live_server: LiveServer, token: str, web: str
) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?range=6h")
    placeholder = page.locator("input[name=start]").get_attribute("placeholder")
    start = page.locator("svg.chart").first.get_attribute("data-start")
    assert datetime.fromisoformat(placeholder) == datetime.fromisoformat(start)
    assert abs(datetime.now(UTC) - timedelta(hours=6) - datetime.fromisoformat(start)) < timedelta(minutes=5)


def test_the_tooltip_of_a_marker_at_the_right_edge_stays_in_its_card(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client, web: str
) -> None:
    late = {"type": "deploy", "title": "Late deploy with a long title, v9.9.9", "time": "2025-03-01T23:55:00Z"}
    assert api.post("/v1/annotations", json={"datasets": ["web"], **late}).status_code == 201
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    marker = page.locator(f".ann-marker[data-title='{late['title']}']")
    marker.hover()
    tip = page.locator("#tooltip")
    assert tip.is_visible() and late["title"] in tip.inner_text()
    card = page.locator("section[aria-label=Chart]").bounding_box()
    box = tip.bounding_box()
    assert box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
    assert box["x"] >= card["x"] - 0.5
    assert box["x"] + box["width"] <= marker.bounding_box()["x"] + 1  # opened to the left of the marker


def test_markers_near_now_are_drawn_as_one_that_lists_them(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client, web: str
) -> None:
    now = datetime.now(UTC)
    titles = ["Deploy api v2", "Deploy web v7", "Flag flip"]
    for seconds, title in zip((90, 60, 30), titles, strict=True):
        body = {
            "type": "deploy",
            "title": title,
            "datasets": ["web"],
            "time": (now - timedelta(seconds=seconds)).isoformat(),
        }
        assert api.post("/v1/annotations", json=body).status_code == 201
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?range=24h")
    assert page.locator(".ann-marker").count() == 1
    cluster = page.locator(".ann-marker[data-count='3']")
    assert cluster.locator("text.ann-count").text_content() == "3"
    cluster.hover()
    text = page.locator("#tooltip").inner_text()
    assert all(t in text for t in titles) and "3 × deploy" in text


def test_times_read_in_the_viewers_zone_and_relative_when_recent(
    browser: Any, live_server: LiveServer, token: str, api: httpx.Client, web: str
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    assert api.post("/v1/ingest/live", json=[{"_time": (now - timedelta(minutes=3)).isoformat()}]).status_code == 200
    page = new_page(browser, "Asia/Kolkata")  # UTC+05:30
    try:
        sign_in(page, live_server, token)
        live = page.locator("tr[data-dataset=live] td.last-event time")
        assert "(3 min. ago)" in live.inner_text() or "(3 min ago)" in live.inner_text()
        kolkata = now - timedelta(minutes=3) + timedelta(hours=5, minutes=30)
        assert live.inner_text().startswith(kolkata.strftime("%Y-%m-%d %H:%M:%S"))
        assert (
            live.get_attribute("datetime") == (now - timedelta(minutes=3)).isoformat(timespec="milliseconds")[:-6] + "Z"
        )
        page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
        first = page.locator("section[aria-label=Annotations] tbody tr").first.locator("time").first
        assert first.inner_text() == "2025-03-01 11:30:00"  # 06:00 UTC
        assert page.locator("text.x-tick").first.text_content() == "05:30"  # the axis starts at 00:00 UTC
        page.locator(f".ann-marker[data-title='{POINT['title']}']").hover()
        assert "2025-03-01 11:30:00" in page.locator("#tooltip").inner_text()
    finally:
        page.context.close()


def test_the_datasets_page_shows_events_last_event_and_ingest_rate(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client, web: str
) -> None:
    now = datetime.now(UTC)
    recent = [{"_time": (now - timedelta(seconds=s)).isoformat()} for s in range(1, 121)]
    assert api.post("/v1/ingest/live", json=recent).status_code == 200
    sign_in(page, live_server, token)
    web_row, live_row = (page.locator(f"tr[data-dataset={name}]") for name in ("web", "live"))
    assert web_row.locator("td.events").inner_text() == "456"  # the fixture's day of events
    assert web_row.locator("td.last-event").inner_text() == "2025-03-01 23:50:00"
    assert web_row.locator("td.rate").inner_text() == "idle"
    assert live_row.locator("td.events").inner_text() == "120"
    assert live_row.locator("td.rate").inner_text() == "2.0/min"
    screenshot(page, "datasets")


def test_navigation_offers_only_the_pages_the_token_opens(
    page: Any, live_server: LiveServer, database_url: str
) -> None:
    page.goto(f"{live_server.url}/ui/login")
    _sign_in_at(page, make_token(database_url, ["monitors:read"]))
    page.wait_for_url(f"{live_server.url}/ui/monitors")  # the token's home: the first page it can open
    assert page.locator("nav[aria-label=Console] a").all_inner_texts() == ["Monitors"]
    page.goto(f"{live_server.url}/ui/datasets")
    assert page.locator("h1").inner_text() == "Not allowed"
    assert page.locator("nav[aria-label=Console] a").all_inner_texts() == ["Monitors"]


def test_not_found_names_a_dataset_by_its_name(page: Any, live_server: LiveServer, token: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/nope")
    assert page.locator("p.error").inner_text() == "No dataset named 'nope'."


def test_the_test_send_outcome_is_in_view(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client, httpserver: Any
) -> None:
    httpserver.expect_request("/hook").respond_with_data("ok")
    made = [
        api.post(
            "/v1/notifiers",
            json={"name": f"hook {i}", "type": "webhook", "config": {"url": httpserver.url_for("/hook")}},
        ).json()
        for i in range(8)
    ]
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/notifiers")
    last = made[0]  # the oldest is listed last, far below the fold
    page.locator(f"section[id='{last['id']}'] button[type=submit]").click()
    page.wait_for_selector("#test-result")
    result = page.locator(f"section[id='{last['id']}'] #test-result")
    assert "succeeded" in result.inner_text()
    box = result.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= page.viewport_size["height"]


def test_screenshots_go_to_a_temporary_place_unless_asked(page: Any, live_server: LiveServer) -> None:
    page.goto(f"{live_server.url}/ui/login")
    path = screenshot(page, "login-probe")
    try:
        assert path.exists()
        assert (path.parent == SCREENSHOTS) == UPDATE_SCREENSHOTS
    finally:
        if UPDATE_SCREENSHOTS:
            Path(path).unlink()
