"""Dataset limits and what changed (app/access.py): a limited token never sees, and a notification for a limited
token's monitor never carries, an annotation of a dataset such a token may not see; environment-wide annotations
are seen by every token and written only by unlimited ones."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from app.deliveries.worker import Dispatcher, deliver_due
from app.monitors.tick import evaluate_due
from tests.helpers import assert_error
from tests.offline_dns import offline_delivery_env

T = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)


@pytest.fixture
def local(settings):
    return replace(settings, allow_private_destinations=True, monitor_match_settle_seconds=0.0)


@pytest.fixture
async def api(app_client, local):
    async with app_client(local) as c:
        yield c


async def _annotate(api, headers, title, datasets, minutes=-5, **fields):
    body = {
        "type": "deploy",
        "title": title,
        "datasets": datasets,
        "time": (T + timedelta(minutes=minutes)).isoformat(),
    }
    r = await api.post("/v1/annotations", headers=headers, json={**body, **fields})
    assert r.status_code == 201, r.text
    return r.json()


async def _changes_around(api, auth):
    await _annotate(api, auth, "pub deploy", ["pub"], -5)
    await _annotate(api, auth, "secret deploy", ["secret"], -6, labels={"service": "checkout"})
    await _annotate(api, auth, "pub and secret", ["pub", "secret"], -7)
    await _annotate(api, auth, "everywhere", ["*"], -8, labels={"service": "checkout"})


async def test_a_limited_tokens_monitor_message_carries_only_what_its_dataset_may_see(api, auth, local, db, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=204)
    await _changes_around(api, auth)
    r = await api.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "hook", "type": "webhook", "config": {"url": httpserver.url_for("/hook")}},
    )
    hook = r.json()["id"]
    events = [{"_time": (T - timedelta(seconds=s)).isoformat(), "status": 500} for s in range(1, 4)]
    assert (await api.post("/v1/ingest/pub", headers=auth, json=events)).status_code == 200
    limited = {"Authorization": f"Bearer {await _token(db, datasets=['pub'])}"}
    r = await api.post(
        "/v1/monitors",
        headers=limited,
        json={
            "name": "pub errors",
            "type": "threshold",
            "apl": "['pub'] | where status >= 500 | summarize count()",
            "operator": "above",
            "threshold": 1,
            "notifier_ids": [hook],
            "labels": {"service": "checkout"},
        },
    )
    assert r.status_code == 201, r.text
    env = offline_delivery_env(local, db)
    try:
        async with db() as s:
            await s.execute(text("UPDATE monitors SET next_evaluation_at = :t"), {"t": T})
            await s.commit()
        assert (await evaluate_due(env, lanes=1, now=T)).deliveries == 1
        assert await deliver_due(Dispatcher(env)) == 1
    finally:
        await env.http.aclose()
    (request, _) = httpserver.log[0]
    changes = json.loads(request.get_data())["data"]["changes"]
    # Not the secret deploy, though its labels match; not the one on pub and secret: a token limited to pub,
    # which reads this delivery, may see neither.
    assert [c["title"] for c in changes] == ["pub deploy", "everywhere"]


async def _token(db, **kwargs):
    from app.tokens.service import create_token

    async with db() as session:
        return (await create_token(session, name="t", scopes=["*"], **kwargs)).token


async def test_views_show_a_token_only_the_changes_it_may_see(api, auth, db, make_token):
    await _changes_around(api, auth)
    r = await api.post(
        "/v1/alerts",
        headers=auth,
        json=[{"labels": {"alertname": "E", "service": "checkout", "dataset": "pub"}, "starts_at": T.isoformat()}],
    )
    (fp,) = r.json()["fingerprints"]
    seen = (await api.get(f"/v1/alerts/{fp}", headers=auth)).json()["changes"]
    assert [c["title"] for c in seen] == ["pub deploy", "secret deploy", "pub and secret", "everywhere"]

    # A token limited to pub sees only pub's alerts, and of their changes only what it may see.
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['pub'])}"}
    labels = {"labels": {"alertname": "E", "service": "checkout", "dataset": "pub"}}
    tested = (await api.post("/v1/routing/test", headers=limited, json=labels)).json()
    assert [c["title"] for c in tested["changes"]] == ["pub deploy", "everywhere"]
    admin_test = (await api.post("/v1/routing/test", headers=auth, json=labels)).json()
    assert "secret deploy" in [c["title"] for c in admin_test["changes"]]
    # Without annotations:read, no changes at all.
    reader = {"Authorization": f"Bearer {await make_token(['routing:read', 'alerts:read'])}"}
    tested = (await api.post("/v1/routing/test", headers=reader, json=labels)).json()
    assert tested["changes"] == [] and tested["more_changes"] == 0
    assert (await api.get(f"/v1/alerts/{fp}", headers=reader)).json()["changes"] == []


async def test_environment_wide_annotations_are_read_by_all_and_written_by_unlimited_tokens(api, auth, make_token):
    everywhere = await _annotate(api, auth, "everywhere", ["*"])
    limited = {
        "Authorization": f"Bearer {await make_token(['annotations:read', 'annotations:write'], datasets=['pub'])}"
    }
    listed = (await api.get("/v1/annotations", headers=limited, params={"datasets": "pub"})).json()["data"]
    assert [a["title"] for a in listed] == ["everywhere"]
    assert (await api.get(f"/v1/annotations/{everywhere['id']}", headers=limited)).json()["datasets"] == ["*"]
    r = await api.post("/v1/annotations", headers=limited, json={"type": "d", "title": "x", "datasets": ["*"]})
    assert_error(r, 403, "insufficient_scope")
    r = await api.patch(f"/v1/annotations/{everywhere['id']}", headers=limited, json={"title": "mine now"})
    assert_error(r, 403, "insufficient_scope")
    assert_error(await api.delete(f"/v1/annotations/{everywhere['id']}", headers=limited), 403, "insufficient_scope")
    # Nor may a limited token move its own annotation environment-wide.
    own = await _annotate(api, limited, "own", ["pub"])
    r = await api.patch(f"/v1/annotations/{own['id']}", headers=limited, json={"datasets": ["*"]})
    assert_error(r, 403, "insufficient_scope")
    r = await api.post("/v1/annotations", headers=auth, json={"type": "d", "title": "x", "datasets": ["*", "web"]})
    assert_error(r, 400, "invalid_field", param="datasets")
