"""The notifiers page names the monitor each recent delivery came from (linked, its id in the tooltip), not its
id; a monitor of a dataset the token may not use stays out, as the deliveries list leaves it out."""

from __future__ import annotations

import re

from adapters import testing as kit
from app.deliveries import service
from tests.integration.ui.conftest import sign_in
from tests.offline_dns import offline_delivery_env


async def test_recent_deliveries_name_their_monitor(client, auth, admin_token, settings, db):
    hook = await client.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "ops hook", "type": "webhook", "config": {"url": "https://hooks.example.com/ops"}},
    )
    assert hook.status_code == 201, hook.text
    monitor = await client.post(
        "/v1/monitors",
        headers=auth,
        json={
            "name": "Checkout errors",
            "type": "threshold",
            "apl": "['web'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": 5,
            "notifier_ids": [hook.json()["id"]],
        },
    )
    assert monitor.status_code == 201, monitor.text
    mon_id = monitor.json()["id"]
    env = offline_delivery_env(settings, db)
    try:
        async with db() as s:
            event = kit.sample_events()["triggered"]
            service.enqueue(s, env, notifier_id=hook.json()["id"], event=event, monitor_id=mon_id)
            await s.commit()
    finally:
        await env.http.aclose()

    await sign_in(client, admin_token)
    page = (await client.get("/ui/notifiers")).text
    cell = re.search(rf'<a href="/ui/monitors/{mon_id}" title="{mon_id}">([^<]*)</a>', page)
    assert cell and cell.group(1) == "Checkout errors"
    assert f">{mon_id}<" not in page
