"""The datasets pages: the list, a dataset's chart with its annotations, the query box, and access rules."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest

from app.timefmt import iso_ms
from tests.integration.ui.conftest import EVENTS_END, EVENTS_START, sign_in

DAY = {"start": EVENTS_START, "end": EVENTS_END}


def bar_labels(page: str) -> list[str]:
    return re.findall(r'<rect class="bar"[^>]*><title>([^<]+)</title>', page)


def markers(page: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m)) for m in re.findall(r'<g class="ann-marker[^>]*>', page)]


async def test_the_list_shows_the_datasets_a_token_may_see(client, web, make_token):
    await client.post(
        "/v1/ingest/db",
        headers={"content-type": "application/x-ndjson", "authorization": f"Bearer {await make_token(['ingest'])}"},
        content=b'{"a":1}\n',
    )
    await sign_in(client, await make_token(["datasets:read", "query"], datasets=["web"]))
    page = (await client.get("/ui/datasets")).text
    assert '<a href="/ui/datasets/web">web</a>' in page
    assert "/ui/datasets/db" not in page


async def test_the_list_shows_each_datasets_events_last_event_and_ingest_rate(client, web, auth, admin_token):
    now = datetime.now(UTC).replace(microsecond=0)
    recent = [{"_time": (now - timedelta(minutes=m)).isoformat(), "n": m} for m in range(30)]
    r = await client.post("/v1/ingest/live", headers=auth, json=recent)
    assert r.status_code == 200 and r.json()["ingested"] == 30
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets")).text

    def row(name: str) -> str:
        return page.split(f'<tr data-dataset="{name}">')[1].split("</tr>")[0]

    # web: seven old events (March 2025), none arrived with a time in the last day; live: 30 just now.
    assert '<td class="num events" title="exact">7</td>' in row("web")
    assert '<time datetime="2025-03-02T00:00:00.000Z">2025-03-02 00:00:00 UTC</time>' in row("web")
    assert '<span class="muted">idle</span>' in row("web")
    assert '<td class="num events" title="exact">30</td>' in row("live")
    assert f'<time datetime="{iso_ms(now)}">' in row("live")
    assert re.search(r'<td class="num rate"[^>]*>0\.5/min</td>', row("live"))


async def test_the_list_counts_a_datasets_events_from_the_rollup(client, auth, admin_token):
    """Counts come from the per-minute rollup, which equals the events: exact past 10,000 events (the events were
    counted up to 10,000, then the planner's estimate was shown), and the rate is its last hour."""
    now = datetime.now(UTC).replace(microsecond=0)
    old = now - timedelta(days=3)  # a backfill: counted, but not in the rate
    events = [{"_time": (old - timedelta(seconds=s)).isoformat()} for s in range(10_000)]
    events += [{"_time": (now - timedelta(seconds=30 * s)).isoformat()} for s in range(50)]  # the last 25 minutes
    for batch in (events[:5_000], events[5_000:]):
        r = await client.post("/v1/ingest/big", headers=auth, json=batch)
        assert r.status_code == 200 and r.json()["ingested"] == len(batch), r.text
    counted = await client.post("/v1/query", headers=auth, json={"apl": "['big'] | count"})
    assert counted.json()["rows"] == [[10_050]], counted.text  # the events' answer
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets")).text
    row = page.split('<tr data-dataset="big">')[1].split("</tr>")[0]
    assert '<td class="num events" title="exact">10,050</td>' in row
    assert re.search(r'<td class="num rate"[^>]*>0\.8/min</td>', row)  # 50 in the last hour


async def test_the_range_placeholder_is_the_charts_own_start(client, web, admin_token):
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets/web", params={"range": "6h"})).text
    start = re.search(r'<svg class="chart"[^>]*data-start="([^"]+)"', page).group(1)
    placeholder = re.search(r'name="start" size="22" placeholder="([^"]+)"', page).group(1)
    assert datetime.fromisoformat(placeholder) == datetime.fromisoformat(start)
    assert abs(datetime.now(UTC) - timedelta(hours=6) - datetime.fromisoformat(start)) < timedelta(minutes=5)


async def test_a_dataset_page_counts_events_per_bucket(client, web, admin_token):
    await sign_in(client, admin_token)
    r = await client.get("/ui/datasets/web", params=DAY)
    assert r.status_code == 200
    assert "<strong>6</strong> events" in r.text  # the event at midnight is outside [start, end)
    assert "in buckets of 5m" in r.text
    labels = bar_labels(r.text)
    assert labels == [
        "2025-03-01T10:00:00.000Z — 3",
        "2025-03-01T12:30:00.000Z — 2",
        "2025-03-01T23:55:00.000Z — 1",
    ]
    assert "server-timing" in r.headers and "total;dur=" in r.headers["server-timing"]


async def test_a_dataset_page_draws_its_annotations_in_the_range(client, web, admin_token):
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets/web", params=DAY)).text
    found = {m["title"]: m for m in markers(page)}
    assert set(found) == {"v1.2.3", "DB failover"}  # not the other day's, not the other dataset's
    left, width = 64.0, 960 - 64 - 12
    assert float(found["v1.2.3"]["x"]) == round(left + width * 6 / 24, 2)  # 06:00 of a day
    assert float(found["DB failover"]["x"]) == round(left + width * 12 / 24, 2)
    assert found["DB failover"]["end-time"] == "2025-03-01T18:00:00.000Z"
    assert '<a href="https://ci.example/run/1" target="_blank"' in page
    assert 'class="ann-marker ann-span"' in page and 'class="ann-marker ann-point"' in page


async def test_a_numeric_field_summarized_by_a_function(client, web, admin_token):
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets/web", params={**DAY, "fn": "max", "field": "duration_ms"})).text
    assert '<option value="duration_ms" selected>' in page  # offered because it holds numbers
    assert "<strong>max(duration_ms)</strong>" in page
    # Three buckets with values, far apart: three lone dots, no line joining them.
    assert "<polyline" not in page
    dots = re.findall(r'<circle class="dot" cx="[^"]+" cy="([^"]+)"', page)
    assert len(dots) == 3
    # max per bucket: 60 (10:00), 7 (12:30), 1 (23:55), on a 0-60 axis (ticks every 20) of the plot height.
    top, height = 12.0, 260 - 12 - 28
    assert [float(y) for y in dots] == [pytest.approx(top + height * (1 - v / 60), abs=0.05) for v in (60, 7, 1)]
    r = await client.get("/ui/datasets/web", params={**DAY, "fn": "avg"})
    assert r.status_code == 400 and "choose one in <code>field</code>" in html.unescape(r.text)


async def test_the_query_box_shows_a_table_and_a_chart(client, web, admin_token):
    await sign_in(client, admin_token)
    q = "['web'] | summarize n = count() by bin(_time, 1h), service"
    page = (await client.get("/ui/datasets/web", params={**DAY, "q": q})).text
    assert "<th>_time</th><th>service</th><th>n</th>" in page
    assert "<td>2025-03-01T10:00:00.000Z</td><td>api</td><td>2</td>" in page
    assert '<g class="series-line" data-name="api · n">' in page
    assert '<g class="series-line" data-name="web · n">' in page
    table_only = (await client.get("/ui/datasets/web", params={**DAY, "q": "['web'] | count"})).text
    assert "<th>Count</th>" in table_only and "<td>6</td>" in table_only  # over the page range
    assert "series-line" not in table_only


async def test_the_query_box_shows_the_querys_warnings(client, web, auth, admin_token):
    """A field the dataset never had reads as null: the API's warning says so, and so does the console."""
    await sign_in(client, admin_token)
    q = "['web'] | where servce == 'api' | count"
    expected = await client.post("/v1/query", headers=auth, json={"apl": q, **{k + "_time": v for k, v in DAY.items()}})
    (warning,) = expected.json()["warnings"]
    assert warning["suggestion"] == "service"
    page = (await client.get("/ui/datasets/web", params={**DAY, "q": q})).text
    shown = re.findall(r'<p class="warning" role="status" data-code="unknown_field">(.*?)</p>', page)
    # The message as the API says it, its backticked names shown as code.
    assert [html.unescape(w) for w in shown] == [re.sub(r"`([^`]+)`", r"<code>\1</code>", warning["message"])]
    assert "<code>servce</code>" in shown[0] and "`" not in shown[0]
    assert "<td>0</td>" in page  # the result is still shown
    page = (await client.get("/ui/datasets/web", params={**DAY, "q": "['web'] | where service == 'api' | count"})).text
    assert 'class="warning"' not in page


async def test_a_bad_query_is_shown_next_to_the_box(client, web, admin_token):
    await sign_in(client, admin_token)
    r = await client.get("/ui/datasets/web", params={**DAY, "q": "['web'] | where"})
    assert r.status_code == 200
    assert re.search(r'<p class="error" role="alert">Line 1, column \d+: expected an expression', r.text)
    assert bar_labels(r.text)  # the chart is still there


async def test_pages_a_token_cannot_see_say_so(client, web, make_token):
    await sign_in(client, await make_token(["query"], datasets=["db"]))
    r = await client.get("/ui/datasets/web")
    assert r.status_code == 403 and "not allowed to use the dataset &#39;web&#39;" in r.text
    assert "Traceback" not in r.text and r.headers["content-type"].startswith("text/html")
    r = await client.get("/ui/datasets")
    assert r.status_code == 403 and "needs a token with the <code>datasets:read</code> scope" in html.unescape(r.text)
    r = await client.get("/ui/notifiers")
    assert r.status_code == 403 and "notifiers:read" in r.text


async def test_annotations_need_their_scope(client, web, make_token):
    await sign_in(client, await make_token(["query", "datasets:read"]))
    page = (await client.get("/ui/datasets/web", params=DAY)).text
    assert markers(page) == []
    assert "no <code>annotations:read</code> scope" in page
    assert bar_labels(page)


async def test_unknown_datasets_and_bad_parameters(client, web, admin_token):
    await sign_in(client, admin_token)
    r = await client.get("/ui/datasets/nope")
    assert r.status_code == 404 and "No dataset named 'nope'." in html.unescape(r.text)
    r = await client.get("/ui/datasets/web", params={"range": "2x"})  # any duration from 1m to 90d is a range
    assert r.status_code == 400 and "must be a duration from 1m to 90d" in html.unescape(r.text)
    r = await client.get("/ui/datasets/web", params={"start": "yesterday"})
    assert r.status_code == 400 and "RFC 3339" in r.text


async def test_the_query_box_shows_a_bounded_table_of_wide_events(client, web, auth, admin_token):
    """Events of thousands of fields: the page's table shows the first columns and says what it left out."""
    wide = {"_time": "2025-03-01T11:00:00Z", **{f"k{i:04d}": i for i in range(5_000)}}
    r = await client.post("/v1/ingest/web", headers={**auth, "content-type": "application/json"}, json=[wide])
    assert r.status_code == 200 and r.json()["ingested"] == 1, r.text
    await sign_in(client, admin_token)
    page = (await client.get("/ui/datasets/web", params={**DAY, "q": "['web'] | take 100"})).text
    header = page.split('<table class="result">')[1].split("</thead>")[0]
    assert header.count("<th>") == 40 and "<th>_time</th><th>duration_ms</th>" in header
    assert "The table shows 7 of them and 40 of 1000 columns" in html.unescape(page)
    assert 'data-code="too_many_fields"' in page  # the API's warning: 5,002 fields, 1,000 columns
