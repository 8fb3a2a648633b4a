"""The range a monitor's page charts: without `?range=` one that fits the monitor (about 90 of its windows), so a
10-second monitor is not a sliver of a day; `?range=` takes any duration from a minute to 90 days."""

from __future__ import annotations

import re

from tests.integration.ui.conftest import sign_in


def _selected(page: str) -> list[str]:
    return re.findall(r'<option value="([^"]*)" selected>', page)


async def _monitor(client, auth, interval: int) -> str:
    body = {
        "name": f"every {interval} s",
        "type": "threshold",
        "apl": "['web'] | where status >= 500 | summarize count()",
        "operator": "above",
        "threshold": 5,
        "interval_seconds": interval,
        "notifier_ids": [],
    }
    r = await client.post("/v1/monitors", headers=auth, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def test_the_default_range_fits_the_monitor(client, auth, admin_token):
    await sign_in(client, admin_token)
    fast, hourly = await _monitor(client, auth, 10), await _monitor(client, auth, 3600)

    page = (await client.get(f"/ui/monitors/{fast}")).text
    assert _selected(page) == ["15m"] and 'id="chart-cut"' not in page
    page = (await client.get(f"/ui/monitors/{hourly}")).text
    assert _selected(page) == ["7d"] and 'id="chart-cut"' not in page

    # A day of 10-second windows is more than a chart draws: the chart starts where its values do, and says so.
    page = (await client.get(f"/ui/monitors/{fast}", params={"range": "24h"})).text
    assert _selected(page) == ["24h"] and 'id="chart-cut"' in page


async def test_any_duration_is_a_range(client, auth, admin_token, web):
    await sign_in(client, admin_token)
    fast = await _monitor(client, auth, 10)
    page = await client.get(f"/ui/monitors/{fast}", params={"range": "90m"})
    assert page.status_code == 200 and _selected(page.text) == ["90m"]  # offered in the menu as it was asked
    assert (await client.get("/ui/datasets/web", params={"range": "3d"})).status_code == 200
    assert (await client.get("/ui/monitors", params={"range": "2h"})).status_code == 200
    for bad in ("91d", "30s", "soon"):
        refused = await client.get(f"/ui/monitors/{fast}", params={"range": bad})
        assert refused.status_code == 400 and "from 1m to 90d" in refused.text, bad
