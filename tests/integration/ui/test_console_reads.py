"""What the alerts and routing pages read: every inhibiting alert named however many there are."""

from __future__ import annotations

import html

from tests.integration.ui.conftest import sign_in
from tests.integration.ui.test_alerting_pages import post_alerts, put_routing, row_of


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
