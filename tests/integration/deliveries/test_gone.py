"""A webhook answering 410 Gone (Standard Webhooks: the endpoint is gone for good and its sender should stop): the
notifier is disabled until a person re-enables it, and says why on the notifier (API, console) and in its
deliveries. Other types' 410 fails the delivery only."""

from __future__ import annotations

import html

from sqlalchemy import text
from werkzeug import Response

from adapters import testing as kit
from app.deliveries import service
from app.deliveries.worker import deliver_due
from tests.integration.ui.conftest import sign_in

EVENTS = kit.sample_events()
FOREVER = "9999-12-31T00:00:00.000Z"


async def make_notifier(client, auth, type_: str, url: str) -> str:
    r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": type_, "config": {"url": url}})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def enqueue(db, worker, notifier_id: str, monitor_id: str, *kinds: str) -> list[str]:
    async with db() as s:
        ids = [
            service.enqueue(s, worker.env, notifier_id=notifier_id, event=EVENTS[k], monitor_id=monitor_id).id
            for k in kinds
        ]
        await s.commit()
    return ids


async def rows(db) -> dict[str, dict]:
    async with db() as s:
        found = await s.execute(text("SELECT id, status, response_status, error FROM deliveries"))
        return {r["id"]: dict(r) for r in found.mappings()}


async def test_a_webhooks_410_disables_it_until_a_person_re_enables_it(
    client, auth, admin_token, httpserver, db, worker
):
    answer = {"status": 410}
    httpserver.expect_request("/hook", method="POST").respond_with_handler(
        lambda request: Response("this endpoint was removed", status=answer["status"])
    )
    hook = await make_notifier(client, auth, "webhook", httpserver.url_for("/hook"))
    fired, resolved = await enqueue(db, worker, hook, "mon_1", "triggered", "resolved")
    (other,) = await enqueue(db, worker, hook, "mon_2", "triggered")
    await deliver_due(worker)

    # The heads of both streams went out together and were told 410; nothing more was sent.
    sent = [entry[0].headers["webhook-id"] for entry in httpserver.log]
    assert sorted(sent) == sorted([fired, other])
    found = await rows(db)
    for dlv in (fired, other):
        assert found[dlv]["status"] == "failed" and found[dlv]["response_status"] == 410
        assert found[dlv]["error"].startswith("HTTP 410: this endpoint was removed")
        assert found[dlv]["error"].endswith("the endpoint is gone (410): the notifier is disabled until re-enabled")
    assert found[resolved]["status"] == "deferred"
    assert found[resolved]["error"].startswith("the notifier is disabled: disabled by Beacon: the endpoint answered")

    shown = (await client.get(f"/v1/notifiers/{hook}", headers=auth)).json()
    assert shown["disabled_until"] == FOREVER
    reason = shown["disabled_reason"]
    assert "410 Gone" in reason and 'PATCH {"disabled_until": null}' in reason
    assert found[resolved]["error"] == f"the notifier is disabled: {reason}"

    # For good: what comes later waits too.
    (later,) = await enqueue(db, worker, hook, "mon_3", "triggered")
    await deliver_due(worker)
    assert (await rows(db))[later]["status"] == "deferred" and len(httpserver.log) == 2

    await sign_in(client, admin_token)
    card = (await client.get("/ui/notifiers")).text.split(f'id="{hook}"')[1].split("</section>")[0]
    assert '<span class="badge status-failed">disabled</span>' in card and reason in html.unescape(card)

    # A person re-enables it once the endpoint is back: the waiting streams send what is still true, as after a
    # mute (the endpoint never heard mon_1 fire, so not its resolve either).
    answer["status"] = 204
    r = await client.patch(f"/v1/notifiers/{hook}", headers=auth, json={"disabled_until": None})
    assert r.status_code == 200 and r.json()["disabled_until"] is None and r.json()["disabled_reason"] is None
    await deliver_due(worker)
    found = await rows(db)
    assert found[later]["status"] == "succeeded"
    assert found[resolved]["status"] == "superseded" and "fired and resolved while" in found[resolved]["error"]
    assert [entry[0].headers["webhook-id"] for entry in httpserver.log][2:] == [later]


async def test_the_test_message_disables_too_and_a_new_date_clears_the_reason(client, auth, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("gone", status=410)
    hook = await make_notifier(client, auth, "webhook", httpserver.url_for("/hook"))
    r = await client.post(f"/v1/notifiers/{hook}/test", headers=auth)
    assert r.status_code == 201 and r.json()["status"] == "failed" and r.json()["response_status"] == 410
    shown = (await client.get(f"/v1/notifiers/{hook}", headers=auth)).json()
    assert shown["disabled_until"] == FOREVER and r.json()["id"] in shown["disabled_reason"]
    # A person mutes it until a date instead: theirs to decide, Beacon's reason no longer holds.
    r = await client.patch(f"/v1/notifiers/{hook}", headers=auth, json={"disabled_until": "2099-01-01T00:00:00Z"})
    assert r.json()["disabled_until"] == "2099-01-01T00:00:00.000Z" and r.json()["disabled_reason"] is None


async def test_a_chat_410_fails_the_delivery_only(client, auth, httpserver, db, worker):
    # Slack answers 410 for an archived channel, which can be unarchived: each message fails, the notifier stays.
    httpserver.expect_request("/chat", method="POST").respond_with_data("channel_is_archived", status=410)
    chat = await make_notifier(client, auth, "chat_a", httpserver.url_for("/chat"))
    (dlv,) = await enqueue(db, worker, chat, "mon_1", "triggered")
    await deliver_due(worker)
    assert (await rows(db))[dlv] | {"id": None} == {
        "id": None, "status": "failed", "response_status": 410, "error": "HTTP 410: channel_is_archived"}  # fmt: skip
    shown = (await client.get(f"/v1/notifiers/{chat}", headers=auth)).json()
    assert shown["disabled_until"] is None and shown["disabled_reason"] is None
