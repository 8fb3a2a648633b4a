"""Test, preview, list, get and retry through the API, with real local receivers."""

from __future__ import annotations

import email
import json
from datetime import UTC, datetime
from email import policy

import pytest
from standardwebhooks.webhooks import Webhook as Receiver

from tests.helpers import assert_error

KEY = "R0UTINGKEYsecret000000000000abcd"


async def make_notifier(client, auth, type_, config):
    r = await client.post("/v1/notifiers", headers=auth, json={"name": f"{type_} n", "type": type_, "config": config})
    assert r.status_code == 201, r.text
    return r.json()


def configs(httpserver):
    return {
        "chat_a": ({"url": httpserver.url_for("/slack/T/B/tok")}, "/slack/T/B/tok"),
        "chat_b": ({"url": httpserver.url_for("/discord/1/tok")}, "/discord/1/tok"),
        "chat_c": ({"url": httpserver.url_for("/teams/wf")}, "/teams/wf"),
        "incident_a": ({"integration_key": KEY}, "/pd/v2/enqueue"),
        "incident_b": ({"integration_key": KEY}, "/og/v2/alerts"),
        "webhook": ({"url": httpserver.url_for("/hook")}, "/hook"),
    }


@pytest.mark.parametrize("type_", ["chat_a", "chat_b", "chat_c", "incident_a", "incident_b", "webhook"])
async def test_test_endpoint_sends_now(client, auth, httpserver, type_):
    config, path = configs(httpserver)[type_]
    httpserver.expect_request(path, method="POST").respond_with_data("ok", status=202 if "incident" in type_ else 200)
    notifier = await make_notifier(client, auth, type_, config)
    r = await client.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)
    assert r.status_code == 201, r.text
    d = r.json()
    assert d["object"] == "delivery" and d["id"].startswith("dlv_")
    assert d["notifier_id"] == notifier["id"] and d["kind"] == "notifier.test"
    assert d["monitor_id"] is None and d["monitor_event_id"] is None
    assert d["status"] == "succeeded" and d["attempts"] == 1 and d["error"] is None and d["next_attempt_at"] is None
    assert d["response_status"] == (202 if "incident" in type_ else 200)
    (entry,) = d["attempt_log"]
    assert entry["ok"] is True and entry["attempt"] == 1 and entry["duration_ms"] >= 0
    ((request, _),) = httpserver.log
    body = json.loads(request.get_data())
    if type_ == "webhook":
        verified = Receiver(notifier["signing_secret"]).verify(request.get_data(), dict(request.headers))
        assert verified["type"] == "notifier.test" and request.headers["webhook-id"] == d["id"]
    if type_ == "incident_b":
        assert request.headers["Authorization"] == f"GenieKey {KEY}"
    assert body  # a real payload
    assert (await client.get(f"/v1/deliveries/{d['id']}", headers=auth)).json() == d


async def test_test_email(client, auth, smtp):
    _, sink = smtp
    notifier = await make_notifier(client, auth, "email", {"addresses": ["ops@example.com"]})
    d = (await client.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)).json()
    assert d["status"] == "succeeded", d
    mail = email.message_from_bytes(sink.envelopes[0].content, policy=policy.default)
    assert mail["Subject"].startswith("[Test]") and mail["Message-ID"] == f"<{d['id']}@beacon.example.com>"


async def test_a_failed_test_is_scheduled_for_retry(client, auth, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("down for maintenance", status=503)
    notifier = await make_notifier(client, auth, "chat_a", {"url": httpserver.url_for("/hook")})
    d = (await client.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)).json()
    assert d["status"] == "retrying" and d["attempts"] == 1 and d["response_status"] == 503
    assert d["error"] == "HTTP 503: down for maintenance"
    wait = (datetime.fromisoformat(d["next_attempt_at"]) - datetime.now(UTC)).total_seconds()
    assert 0 < wait <= 2.1  # first backoff: between base/2 and base (2 s)


async def test_guard_refuses_at_send_time(app_client, client, auth, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    notifier = await make_notifier(client, auth, "chat_a", {"url": httpserver.url_for("/hook")})
    async with app_client(allow_private_destinations=False) as strict:
        d = (await strict.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)).json()
    assert d["status"] == "failed" and "refused" in d["error"] and "BEACON_ALLOW_PRIVATE_DESTINATIONS" in d["error"]
    assert httpserver.log == []


async def test_preview_renders_without_sending_and_masks_secrets(client, auth, httpserver):
    pd = await make_notifier(client, auth, "incident_a", {"integration_key": KEY})
    r = await client.post(f"/v1/notifiers/{pd['id']}/preview", headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "notifier_preview" and body["type"] == "incident_a" and body["target"] == "…abcd"
    assert body["action"] == "trigger" and body["message"]["routing_key"] == "**********"
    assert KEY not in r.text
    event = {"kind": "resolved", "monitor_id": "mon_1", "monitor_name": "Disk", "group": {"host": "a"}}
    resolved = (await client.post(f"/v1/notifiers/{pd['id']}/preview", headers=auth, json={"event": event})).json()
    assert resolved["action"] == "resolve" and set(resolved["message"]) == {"routing_key", "event_action", "dedup_key"}
    hook = await make_notifier(client, auth, "webhook", {"url": httpserver.url_for("/hook")})
    preview = await client.post(
        f"/v1/notifiers/{hook['id']}/preview",
        headers=auth,
        json={"event": {"monitor_name": "CPU", "kind": "triggered"}},
    )
    assert preview.json()["message"]["data"]["monitor_name"] == "CPU"
    assert hook["signing_secret"] not in preview.text and httpserver.url_for("/hook") not in preview.text
    assert httpserver.log == []  # nothing was sent


async def test_preview_validates_the_event(client, auth):
    n = await make_notifier(client, auth, "email", {"addresses": ["ops@example.com"]})
    for event, param in (({"colour": "red"}, "event.colour"), ({"kind": "exploded"}, "event.kind")):
        r = await client.post(f"/v1/notifiers/{n['id']}/preview", headers=auth, json={"event": event})
        assert_error(r, 400, "invalid_field", param=param)
    assert_error(await client.post("/v1/notifiers/ntf_00/preview", headers=auth), 404, "not_found")


async def test_list_get_filters_and_pagination(client, auth, httpserver):
    httpserver.expect_request("/ok", method="POST").respond_with_data("ok")
    httpserver.expect_request("/bad", method="POST").respond_with_data("no", status=400)
    good = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/ok")})
    bad = await make_notifier(client, auth, "chat_c", {"url": httpserver.url_for("/bad")})
    made = []
    for n in (good, bad, good, bad, good):
        made.append((await client.post(f"/v1/notifiers/{n['id']}/test", headers=auth)).json())
    ids = [d["id"] for d in made]

    async def listed(query):
        r = await client.get(f"/v1/deliveries{query}", headers=auth)
        assert r.status_code == 200, r.text
        return [d["id"] for d in r.json()["data"]]

    assert await listed("") == ids[::-1]
    assert await listed(f"?notifier_id={bad['id']}") == [ids[3], ids[1]]
    assert await listed("?status=failed") == [ids[3], ids[1]]
    assert await listed("?status=succeeded") == [ids[4], ids[2], ids[0]]
    assert await listed("?monitor_id=mon_none") == []
    page = (await client.get(f"/v1/notifiers/{good['id']}/deliveries?limit=2", headers=auth)).json()
    assert [d["id"] for d in page["data"]] == [ids[4], ids[2]] and page["has_more"]
    rest = (
        await client.get(f"/v1/notifiers/{good['id']}/deliveries?limit=2&cursor={page['next_cursor']}", headers=auth)
    ).json()
    assert [d["id"] for d in rest["data"]] == [ids[0]] and not rest["has_more"]
    assert "attempt_log" not in page["data"][0]
    failed = made[1]
    assert failed["status"] == "failed" and failed["response_status"] == 400 and failed["error"] == "HTTP 400: no"
    assert_error(await client.get("/v1/deliveries?status=lost", headers=auth), 400, "invalid_parameter", param="status")
    assert_error(await client.get("/v1/deliveries/dlv_00", headers=auth), 404, "not_found")
    assert_error(await client.get("/v1/notifiers/ntf_00/deliveries", headers=auth), 404, "not_found")
    assert_error(
        await client.get(f"/v1/deliveries?status=failed&cursor={page['next_cursor']}", headers=auth),
        400,
        "invalid_cursor",
    )


async def test_retry_endpoint(client, auth, httpserver):
    httpserver.expect_oneshot_request("/flaky", method="POST").respond_with_data("gone", status=404)
    httpserver.expect_request("/flaky", method="POST").respond_with_data("ok")
    n = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/flaky")})
    d = (await client.post(f"/v1/notifiers/{n['id']}/test", headers=auth)).json()
    assert d["status"] == "failed" and d["attempts"] == 1
    r = await client.post(f"/v1/deliveries/{d['id']}/retry", headers=auth)
    assert r.status_code == 200, r.text
    again = r.json()
    assert again["status"] == "succeeded" and again["attempts"] == 2 and again["error"] is None
    assert [a["response_status"] for a in again["attempt_log"]] == [404, 200]
    assert_error(await client.post(f"/v1/deliveries/{d['id']}/retry", headers=auth), 409, "conflict")
    assert_error(await client.post("/v1/deliveries/dlv_00/retry", headers=auth), 404, "not_found")


async def test_errors_from_a_destination_never_show_the_secret(client, auth, httpserver):
    # A careless receiver that echoes the request back in its error.
    httpserver.expect_request("/pd/v2/enqueue", method="POST").respond_with_handler(
        lambda request: __import__("werkzeug").Response(b"bad event: " + request.get_data(), status=400)
    )
    n = await make_notifier(client, auth, "incident_a", {"integration_key": KEY})
    r = await client.post(f"/v1/notifiers/{n['id']}/test", headers=auth)
    d = r.json()
    assert d["status"] == "failed" and "**********" in d["error"]
    assert KEY not in r.text and KEY not in (await client.get("/v1/deliveries", headers=auth)).text


async def test_scopes(client, make_token, auth, httpserver):
    httpserver.expect_request("/h", method="POST").respond_with_data("ok")
    n = await make_notifier(client, auth, "chat_b", {"url": httpserver.url_for("/h")})
    reader = {"Authorization": f"Bearer {await make_token(['notifiers:read'])}"}
    assert_error(await client.post(f"/v1/notifiers/{n['id']}/test", headers=reader), 403, "insufficient_scope")
    d = (await client.post(f"/v1/notifiers/{n['id']}/test", headers=auth)).json()
    assert (await client.get(f"/v1/deliveries/{d['id']}", headers=reader)).status_code == 200
    assert (await client.post(f"/v1/notifiers/{n['id']}/preview", headers=reader)).status_code == 200
    assert_error(await client.post(f"/v1/deliveries/{d['id']}/retry", headers=reader), 403, "insufficient_scope")
    outsider = {"Authorization": f"Bearer {await make_token(['annotations:read'])}"}
    assert_error(await client.get("/v1/deliveries", headers=outsider), 403, "insufficient_scope")
