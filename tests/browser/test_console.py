"""The console in headless Chromium: sign in, open a dataset with annotations, check where the markers are
drawn, their tooltips and links; screenshots of each page (docs/screenshots/ with BEACON_UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.browser.conftest import END, POINT, SPAN, START, LiveServer, screenshot, sign_in

TOLERANCE_PX = 1.5


def _fraction(t: str, start: str, end: str) -> float:
    t0, t1, x = (datetime.fromisoformat(v) for v in (start, end, t))
    return (x - t0) / (t1 - t0)


def _plot_area(page: Any) -> tuple[float, float, dict[str, str]]:
    """Screen x of the plot's left edge, the plot's width in screen pixels, and the chart's data attributes."""
    svg = page.locator("svg.chart").first
    box = svg.bounding_box()
    attrs = svg.evaluate(
        "el => ({start: el.dataset.start, end: el.dataset.end, left: el.dataset.left,"
        " plotWidth: el.dataset.plotWidth, viewBox: el.getAttribute('viewBox')})"
    )
    scale = box["width"] / float(attrs["viewBox"].split()[2])
    return box["x"] + float(attrs["left"]) * scale, float(attrs["plotWidth"]) * scale, attrs


def test_sign_in_and_see_the_datasets(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token, shot="login")
    assert page.locator("h1").inner_text() == "Datasets"
    assert page.locator("a[href='/ui/datasets/web']").is_visible()  # the screenshot: test_console_pages.py


def test_markers_are_drawn_where_their_times_fall(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    plot_x, plot_width, chart = _plot_area(page)
    assert (chart["start"], chart["end"]) == ("2025-03-01T00:00:00.000Z", "2025-03-02T00:00:00.000Z")

    point = page.locator(f".ann-marker[data-title='{POINT['title']}'] line")
    line_box = point.bounding_box()
    expected = plot_x + plot_width * _fraction(POINT["time"], chart["start"], chart["end"])
    assert abs(line_box["x"] + line_box["width"] / 2 - expected) <= TOLERANCE_PX

    band = page.locator(f".ann-marker[data-title='{SPAN['title']}'] rect").bounding_box()
    left = plot_x + plot_width * _fraction(SPAN["time"], chart["start"], chart["end"])
    right = plot_x + plot_width * _fraction(SPAN["end_time"], chart["start"], chart["end"])
    assert abs(band["x"] - left) <= TOLERANCE_PX and abs(band["x"] + band["width"] - right) <= TOLERANCE_PX

    # One bar per 5-minute bucket with events (every bucket from 12:00 to 18:00, every other one elsewhere),
    # all inside the plot area.
    bars = page.locator("rect.bar")
    assert bars.count() == 6 * 12 + 18 * 6
    boxes = [bars.nth(i).bounding_box() for i in (0, bars.count() - 1)]
    assert boxes[0]["x"] >= plot_x - TOLERANCE_PX
    assert boxes[1]["x"] + boxes[1]["width"] <= plot_x + plot_width + TOLERANCE_PX


def test_hovering_a_marker_shows_its_title(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    tooltip = page.locator("#tooltip")
    assert tooltip.is_hidden()
    page.locator(f".ann-marker[data-title='{SPAN['title']}']").hover()
    assert tooltip.is_visible() and SPAN["title"] in tooltip.inner_text()
    assert "incident" in tooltip.inner_text()
    page.mouse.move(5, 5)
    assert tooltip.is_hidden()
    page.locator(f".ann-marker[data-title='{POINT['title']}']").hover()
    assert tooltip.is_visible()
    assert tooltip.inner_text().startswith(POINT["title"])
    assert "2025-03-01 06:00:00" in tooltip.inner_text()  # the browser's zone: UTC here
    screenshot(page, "dataset")


def test_clicking_a_marker_opens_its_url(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    # The annotation's site is outside this closed network: the browser gets a stand-in page for it.
    page.context.route(
        "https://ci.example/**", lambda route: route.fulfill(body="<title>CI run</title>", content_type="text/html")
    )
    page.context.route(
        "https://status.example/**", lambda route: route.fulfill(body="<title>Status</title>", content_type="text/html")
    )
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    for annotation in (POINT, SPAN):
        with page.context.expect_page() as opened:
            page.locator(f".ann-marker[data-title='{annotation['title']}']").click()
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.url == annotation["url"]
        popup.close()
    assert page.url.startswith(f"{live_server.url}/ui/datasets/web")  # the console stays open


def test_the_query_box_draws_a_chart(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    page.fill("textarea[name=q]", "['web'] | summarize p95 = percentile(duration_ms, 95) by bin(_time, 30m), service")
    page.click("section[aria-label=Query] button[type=submit]")
    page.wait_for_selector("table.result")
    assert page.locator("table.result thead th").all_text_contents() == ["_time", "service", "p95"]
    assert page.locator("table.result tbody tr").count() == 96  # 48 half hours, two services
    lines = page.locator("section[aria-label=Query] g.series-line")
    assert [lines.nth(i).get_attribute("data-name") for i in range(lines.count())] == ["api · p95", "web · p95"]
    screenshot(page, "query")


def test_the_query_box_shows_the_querys_warnings(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    page.fill("textarea[name=q]", "['web'] | where servce == 'api' | count")
    page.click("section[aria-label=Query] button[type=submit]")
    page.wait_for_selector("table.result")
    warning = page.locator("section[aria-label=Query] .warning")
    assert warning.count() == 1 and warning.is_visible()
    # The field names read as code, not between raw backticks.
    assert "field servce" in warning.inner_text() and "did you mean service?" in warning.inner_text()
    assert warning.locator("code").all_inner_texts()[:2] == ["servce", "service"] and "`" not in warning.inner_text()
    screenshot(page, "query-warning")


def test_the_numeric_field_chart(page: Any, live_server: LiveServer, token: str, web: str) -> None:
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/datasets/web?start={START}&end={END}")
    page.select_option("select[name=fn]", "avg")
    page.select_option("select[name=field]", "duration_ms")
    page.click("form.controls button[type=submit]")
    page.wait_for_url("**fn=avg**")
    assert "avg(duration_ms)" in page.locator(".chart-caption").inner_text()
    chart = page.locator("svg.chart").first
    # Each 5-minute bucket from 12:00 to 18:00 has events, so there the averages join into one line (which
    # 18:00, the next bucket, continues); elsewhere every other bucket is empty: each average is a lone dot.
    assert chart.locator("polyline.line").count() == 1
    assert chart.locator("circle.dot").count() == 18 * 6 - 1
    assert page.url.count("range=&") == 1  # the custom range, not a preset
    screenshot(page, "dataset-avg")


def test_notifiers_page_sends_a_test(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client, httpserver: Any
) -> None:
    httpserver.expect_request("/hook").respond_with_data("ok")
    httpserver.expect_request("/down").respond_with_data("unavailable", status=410)
    api.post("/v1/notifiers", json={"name": "ops", "type": "webhook", "config": {"url": httpserver.url_for("/hook")}})
    down = api.post(
        "/v1/notifiers", json={"name": "legacy", "type": "webhook", "config": {"url": httpserver.url_for("/down")}}
    ).json()
    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/notifiers")
    for name in ("ops", "legacy"):
        page.locator(f"section[aria-label='Notifier {name}'] button[type=submit]").click()
        page.wait_for_selector("#test-result")
    assert "failed" in page.locator("#test-result").inner_text()
    card = page.locator(f"section[id='{down['id']}']")
    assert "HTTP 410" in page.locator("#test-result").inner_text()
    assert card.locator("table.deliveries tbody tr").count() == 1
    assert [e[0].path for e in httpserver.log] == ["/hook", "/down"]
    screenshot(page, "notifiers")


def test_monitors_page_shows_state_and_timeline(
    page: Any, live_server: LiveServer, token: str, api: httpx.Client
) -> None:
    now = datetime.now(UTC)
    events = [{"_time": (now - timedelta(seconds=s)).isoformat(), "status": 500} for s in range(1, 30)]
    assert api.post("/v1/ingest/web", json=events).status_code == 200
    created = []
    for name, threshold in (("API errors", 10), ("Error budget", 1000)):
        body = {
            "name": name,
            "type": "threshold",
            "apl": "['web'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": threshold,
            "interval_seconds": 60,
            "range_seconds": 300,
            "notifier_ids": [],
        }
        r = api.post("/v1/monitors", json=body)
        assert r.status_code == 201, r.text
        created.append(r.json())
        assert api.post(f"/v1/monitors/{r.json()['id']}/evaluate", json={}).status_code == 200
    history = api.get(f"/v1/monitors/{created[0]['id']}/history").json()["data"]
    assert [e["kind"] for e in history] == ["triggered"]

    sign_in(page, live_server, token)
    page.goto(f"{live_server.url}/ui/monitors?range=1h")
    alerting = page.locator(f"section[id='{created[0]['id']}']")
    assert alerting.locator(".monitor-state").inner_text() == "alerting"
    assert page.locator(f"section[id='{created[1]['id']}'] .monitor-state").inner_text() == "ok"
    # The alerting stretch starts where the change's time falls on the timeline and runs to its end.
    svg = alerting.locator("svg.state-timeline")
    box = svg.bounding_box()
    start, end = (svg.get_attribute(a) for a in ("data-start", "data-end"))
    stretch = alerting.locator("rect[data-state=alerting]").bounding_box()
    expected = box["x"] + box["width"] * _fraction(history[0]["time"], start, end)
    assert abs(stretch["x"] - expected) <= TOLERANCE_PX
    assert abs(stretch["x"] + stretch["width"] - (box["x"] + box["width"])) <= TOLERANCE_PX
    screenshot(page, "monitors")
