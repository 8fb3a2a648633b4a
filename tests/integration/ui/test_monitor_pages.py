"""The monitors page: state, last value against the threshold, and the history drawn as a timeline.

History is made by the monitor loop's own code at chosen times (the monitors tests' harness)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from adapters.http import HttpSender
from app.deliveries.sending import DeliveryEnv
from app.notifiers.service import build_notifier_env
from app.timefmt import iso_ms
from tests.integration.monitors.conftest import Harness
from tests.integration.ui.conftest import sign_in


@pytest.fixture
async def h(client, auth, db, settings, httpserver):
    """The monitors tests' harness: runs the monitor loop's own code at chosen times, on this test's database."""
    notifier_env = build_notifier_env(settings)
    http = HttpSender(notifier_env.guard, timeout=5.0)
    yield Harness(client, auth, db, DeliveryEnv(settings, notifier_env, http, db), httpserver)
    await http.aclose()


def _card(page: str, monitor_id: str) -> str:
    return page.split(f'id="{monitor_id}"')[1].split("</section>")[0]


async def test_a_monitor_shows_its_state_value_and_timeline(h, admin_token):
    await h.ingest("web", [{"_time": h.at(s), "status": 500} for s in (1, 2, 3)])
    m = await h.monitor(apl="['web'] | summarize count()", operator="above", threshold=2, interval_seconds=60)
    await h.run(h.at(30), monitor_id=m["id"])  # 3 events in the last minute: above 2, alerting
    await h.run(h.at(150), monitor_id=m["id"])  # none: resolved
    await sign_in(h.client, admin_token)
    r = await h.client.get("/ui/monitors", params={"range": "1h"})
    assert r.status_code == 200
    card = _card(r.text, m["id"])
    assert '<span class="badge state-ok monitor-state">ok</span>' in card
    value = r'Last value</span>\s*<strong class="">0</strong>.*when the value is &gt;</span> <strong>2</strong>'
    assert re.search(value + r'\s*<span class="muted">\(within\)', card, re.S)

    svg = re.search(r'<svg class="state-timeline"[^>]*data-start="([^"]+)" data-end="([^"]+)"', card)
    assert svg
    start, end = (datetime.fromisoformat(v) for v in svg.groups())

    def x_of(t: datetime) -> float:
        return (t - start) / (end - start) * 960

    stretch = r'<rect class="tl-\w+" data-state="(\w+)" x="([\d.]+)" y="3" width="([\d.]+)"'
    found = [(state, float(x), float(w)) for state, x, w in re.findall(stretch, card)]
    assert [s for s, _, _ in found] == ["alerting", "ok"]
    (_, a_x, a_w), (_, ok_x, ok_w) = found
    assert a_x == pytest.approx(x_of(h.at(30)), abs=0.01)
    assert a_x + a_w == pytest.approx(x_of(h.at(150)), abs=0.01)
    assert ok_x + ok_w == pytest.approx(960, abs=0.01)
    marks = re.findall(r'data-kind="(\w+)" data-time="([^"]+)"', card)
    assert marks == [("triggered", iso_ms(h.at(30))), ("resolved", iso_ms(h.at(150)))]
    assert "<td>triggered</td>" in card and "<td>resolved</td>" in card


async def test_the_monitors_page_needs_monitors_read(client, make_token):
    await sign_in(client, await make_token(["query"]))
    r = await client.get("/ui/monitors")
    assert r.status_code == 403 and "monitors:read" in r.text


async def test_no_monitors_yet(client, admin_token):
    await sign_in(client, admin_token)
    page = (await client.get("/ui/monitors")).text
    assert "No monitors yet" in page
