"""What the alerts and routing pages read: every inhibiting alert and every notifier named however many there are,
and a routing page whose version is the version of the tree it shows, even while the document is replaced."""

from __future__ import annotations

import asyncio
import html
import re

import httpx

from tests.integration.ui.conftest import csrf_of, sign_in
from tests.integration.ui.test_alerting_pages import notifier, post_alerts, put_routing, row_of, section


async def test_alerts_page_names_every_inhibiting_alert_left_off_the_page(client, auth, admin_token):
    """Sixty inhibiting alerts filtered off the page: each still named (they were looked up one by one, at most
    50 of them)."""
    await put_routing(
        client,
        auth,
        {
            "route": {"notifier_ids": [], "group_by": ["n"]},
            "inhibit_rules": [{"source_matchers": ["kind=source"], "target_matchers": ["kind=target"], "equal": ["n"]}],
        },
    )
    count = 60
    sources = await post_alerts(
        client, auth, *({"labels": {"alertname": f"Src{i}", "kind": "source", "n": str(i)}} for i in range(count))
    )
    targets = await post_alerts(
        client, auth, *({"labels": {"alertname": f"Tgt{i}", "kind": "target", "n": str(i)}} for i in range(count))
    )
    await sign_in(client, admin_token)
    r = await client.get("/ui/alerts", params={"matchers": "kind=target"})
    assert r.status_code == 200
    assert f"0 firing · {count} suppressed" in html.unescape(r.text)
    for i, (source, target) in enumerate(zip(sources, targets, strict=True)):
        row = row_of(r.text, f"alert-{target}")
        assert f'<a href="/ui/alerts#alert-{source}" title="{source}">Src{i}</a>' in row, i


async def test_pages_name_every_notifier_past_the_hundredth(client, auth, admin_token):
    """The console named only the 100 newest notifiers (one page of the list): the oldest of 101 was an id."""
    ids = [await notifier(client, auth, f"n{i:03}") for i in range(101)]
    oldest, newest = ids[0], ids[-1]
    await put_routing(
        client,
        auth,
        {
            "route": {
                "notifier_ids": [newest],
                "group_by": ["alertname"],
                "routes": [{"matchers": ["team=db"], "notifier_ids": [oldest]}],
            }
        },
    )
    await post_alerts(client, auth, {"labels": {"alertname": "DBDown", "team": "db"}})
    await sign_in(client, admin_token)

    page = (await client.get("/ui/alerts")).text
    group = section(page, 'data-group-key="{}/{team=&#34;db&#34;}:{alertname=&#34;DBDown&#34;}"')
    assert f'<span title="{oldest}">n000</span>' in group

    page = (await client.get("/ui/routing", params={"labels": "alertname=DBDown\nteam=db"})).text
    assert f'<span title="{newest}">n100</span>' in section(page, 'id="route"', 'id="route.routes[0]"')
    assert f'<span title="{oldest}">n000</span>' in section(page, 'id="route.routes[0]"', "</li>")
    assert f'<span title="{oldest}">n000</span>' in section(page, 'id="test-result"')

    # The notifiers page: a test sent from the second page of the list names its notifier on the first.
    r = await client.post(f"/ui/notifiers/{oldest}/test", data={"csrf": csrf_of(page)}, follow_redirects=False)
    assert r.status_code == 303
    page = (await client.get(r.headers["location"])).text
    assert f'id="{oldest}"' not in page  # its card is on the next page
    assert f'Test message to <strong title="{oldest}">n000</strong>' in section(page, 'id="test-result"', "</div>")


async def test_routing_page_version_is_the_version_of_the_tree_it_shows(served, auth, admin_token):
    """While the document is replaced again and again, every page shows a version and the tree of that version
    (the page read the document twice: a replacement in between gave one version's number over another's tree).
    A real server, so that the replacements and the pages run at once."""
    async with httpx.AsyncClient(base_url=served, timeout=30) as api, httpx.AsyncClient(base_url=served) as web:
        r = await web.post("/ui/login", data={"token": admin_token})
        assert r.status_code == 303, r.text
        version = (await api.get("/v1/routing", headers=auth)).json()["version"]

        async def replace_often() -> None:
            nonlocal version
            for _ in range(80):
                doc = {"route": {"notifier_ids": [], "routes": [{"matchers": [f"v={int(version) + 1}"]}]}}
                r = await api.put("/v1/routing", headers={**auth, "If-Match": version}, json=doc)
                assert r.status_code == 200, r.text
                version = r.json()["version"]

        async def read_often() -> list[tuple[str, str]]:
            seen = []
            for _ in range(80):
                page = (await web.get("/ui/routing", params={"labels": "v=1"})).text
                shown = re.search(r'id="routing-version">(\d+)<', page)
                marker = re.search(r'class="route-matchers">\{v=(\d+)\}<', page)
                assert shown, page
                if marker:  # the first pages may come before the first replacement
                    seen.append((shown.group(1), marker.group(1)))
            return seen

        _, *pages = await asyncio.gather(replace_often(), read_often(), read_often())
    seen = [s for p in pages for s in p]
    assert seen, "no page showed a replaced document"
    assert [s for s in seen if s[0] != s[1]] == []
