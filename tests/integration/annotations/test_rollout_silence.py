"""A rollout holds its own alerts: an annotation's `silence` is a silence over its span, listed with the
annotation's id as `created_by`, that ends with the span (its end_time, a PATCH that ends it, `silence: null`,
deleting it); no open-ended mute; only a token that may change silences makes one. Through the API and through
the console's dataset page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.helpers import assert_error
from tests.integration.ui.conftest import csrf_of, sign_in


def iso(t: datetime) -> str:
    return t.isoformat()


async def _silence(client: Any, auth: dict[str, str], silence_id: str) -> dict[str, Any]:
    r = await client.get(f"/v1/silences/{silence_id}", headers=auth)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def _alert_state(client: Any, auth: dict[str, str]) -> dict[str, Any]:
    r = await client.post("/v1/alerts", headers=auth, json=[{"labels": {"alertname": "Errors", "service": "checkout"}}])
    assert r.status_code == 200, r.text
    (fp,) = r.json()["fingerprints"]
    return dict((await client.get(f"/v1/alerts/{fp}", headers=auth)).json())


async def test_the_silence_starts_and_ends_with_the_annotation(client, auth):
    now = datetime.now(UTC)
    body = {
        "type": "deploy",
        "title": "checkout 1.4.2",
        "datasets": ["web"],
        "silence": {"matchers": ["service=checkout"]},
    }
    # No open-ended mutes.
    r = await client.post("/v1/annotations", headers=auth, json=body)
    assert_error(r, 400, "invalid_field", param="end_time")
    assert (await client.get("/v1/silences", headers=auth)).json()["data"] == []

    r = await client.post("/v1/annotations", headers=auth, json={**body, "end_time": iso(now + timedelta(minutes=30))})
    assert r.status_code == 201, r.text
    rollout = r.json()
    held = await _silence(client, auth, rollout["silence_id"])
    assert held["created_by"] == rollout["id"] and held["state"] == "active"
    assert held["matchers"] == ['service="checkout"'] and held["comment"] == "Rollout: checkout 1.4.2"
    assert held["ends_at"] == rollout["end_time"]
    alert = await _alert_state(client, auth)
    assert alert["state"] == "suppressed" and alert["silenced_by"] == [held["id"]]

    # The rollout takes longer: the silence follows; then it ends early: the silence ends with it.
    later = (now + timedelta(hours=1)).replace(microsecond=0)
    r = await client.patch(f"/v1/annotations/{rollout['id']}", headers=auth, json={"end_time": iso(later)})
    assert r.status_code == 200, r.text
    assert (await _silence(client, auth, held["id"]))["ends_at"] == r.json()["end_time"]
    r = await client.patch(f"/v1/annotations/{rollout['id']}", headers=auth, json={"end_time": iso(datetime.now(UTC))})
    assert r.status_code == 200, r.text
    assert (await _silence(client, auth, held["id"]))["state"] == "expired"
    assert (await _alert_state(client, auth))["state"] == "firing"
    # An open end cannot be set while it holds a silence.
    r = await client.patch(f"/v1/annotations/{rollout['id']}", headers=auth, json={"end_time": None})
    assert_error(r, 400, "invalid_field", param="end_time")


async def test_silence_null_deleting_and_a_pending_rollout(client, auth):
    now = datetime.now(UTC)
    body = {
        "type": "deploy",
        "title": "tonight",
        "datasets": ["web"],
        "time": iso(now + timedelta(hours=2)),
        "end_time": iso(now + timedelta(hours=3)),
        "silence": {"matchers": ["service=checkout", "env=prod"]},
    }
    r = await client.post("/v1/annotations", headers=auth, json=body)
    assert r.status_code == 201, r.text
    pending = r.json()
    held = await _silence(client, auth, pending["silence_id"])
    assert held["state"] == "pending" and held["starts_at"] == pending["time"]
    # Moved earlier while pending: the silence moves with it.
    r = await client.patch(
        f"/v1/annotations/{pending['id']}", headers=auth, json={"time": iso(now + timedelta(hours=1))}
    )
    assert (await _silence(client, auth, held["id"]))["starts_at"] == r.json()["time"]
    # `silence: null` ends it now; the annotation stays.
    r = await client.patch(f"/v1/annotations/{pending['id']}", headers=auth, json={"silence": None})
    assert r.status_code == 200 and r.json()["silence_id"] is None
    assert (await _silence(client, auth, held["id"]))["state"] == "expired"
    # A new silence on it, then deleting the annotation ends that one too (it stays listed).
    r = await client.patch(
        f"/v1/annotations/{pending['id']}", headers=auth, json={"silence": {"matchers": ["service=checkout"]}}
    )
    again = r.json()["silence_id"]
    assert again and again != held["id"]
    assert (await client.delete(f"/v1/annotations/{pending['id']}", headers=auth)).status_code == 204
    gone = await _silence(client, auth, again)
    assert gone["state"] == "expired" and gone["created_by"] == pending["id"]


async def test_only_a_token_that_may_change_silences_holds_one(client, auth, make_token):
    now = datetime.now(UTC)
    body = {
        "type": "deploy",
        "title": "x",
        "datasets": ["pub"],
        "end_time": iso(now + timedelta(minutes=10)),
        "silence": {"matchers": ["service=checkout"]},
    }
    writer = {"Authorization": f"Bearer {await make_token(['annotations:write'])}"}
    assert_error(await client.post("/v1/annotations", headers=writer, json=body), 403, "insufficient_scope")
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['pub'])}"}
    assert_error(await client.post("/v1/annotations", headers=limited, json=body), 403, "insufficient_scope")
    bad = {**body, "silence": {"matchers": ["service=~.*"]}}  # would silence every alert
    assert_error(
        await client.post("/v1/annotations", headers=auth, json=bad), 400, "invalid_field", param="silence.matchers"
    )
    # A rollout an unlimited token made cannot be moved or deleted by a token that may not change silences.
    r = await client.post("/v1/annotations", headers=auth, json=body)
    assert r.status_code == 201, r.text
    rollout = r.json()
    for who in (writer, limited):
        r = await client.patch(
            f"/v1/annotations/{rollout['id']}", headers=who, json={"end_time": iso(now + timedelta(hours=5))}
        )
        assert_error(r, 403, "insufficient_scope")
        assert_error(await client.delete(f"/v1/annotations/{rollout['id']}", headers=who), 403, "insufficient_scope")
    assert (await _silence(client, auth, rollout["silence_id"]))["ends_at"] == rollout["end_time"]


async def test_through_the_console(client, auth, admin_token):
    r = await client.post("/v1/ingest/web", headers=auth, json=[{"status": 200}])
    assert r.status_code == 200, r.text
    await sign_in(client, admin_token)
    form = await client.get("/ui/datasets/web/annotations/new")
    assert form.status_code == 200 and 'name="hold"' in form.text
    fields = {
        "csrf": csrf_of(form.text),
        "type": "deploy",
        "title": "checkout 1.4.3",
        "labels": "service=checkout",
        "duration": "30m",
        "hold": 'service="checkout"',
    }
    # Without a duration the silence would never end: refused, the form kept as typed.
    r = await client.post("/ui/datasets/web/annotations", data={**fields, "duration": ""})
    assert r.status_code == 400 and "needs a duration" in r.text and "checkout 1.4.3" in r.text
    r = await client.post("/ui/datasets/web/annotations", data=fields, follow_redirects=False)
    assert r.status_code == 303, r.text
    (rollout,) = (await client.get("/v1/annotations", headers=auth)).json()["data"]
    assert rollout["labels"] == {"service": "checkout"} and rollout["silence_id"]
    held = await _silence(client, auth, rollout["silence_id"])
    assert held["state"] == "active" and held["created_by"] == rollout["id"]
    assert (await _alert_state(client, auth))["state"] == "suppressed"

    page = await client.get("/ui/datasets/web", params={"range": "1h"})
    assert page.status_code == 200 and held["id"] in page.text and "End now" in page.text
    r = await client.post(
        f"/ui/annotations/{rollout['id']}/end", data={"csrf": csrf_of(page.text)}, follow_redirects=False
    )
    assert r.status_code == 303
    assert (await _silence(client, auth, held["id"]))["state"] == "expired"
    assert (await _alert_state(client, auth))["state"] == "firing"
    ended = (await client.get(f"/v1/annotations/{rollout['id']}", headers=auth)).json()
    assert ended["end_time"] is not None and ended["end_time"] < rollout["end_time"]
