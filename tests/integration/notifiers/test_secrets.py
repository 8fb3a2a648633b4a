"""Notifier secrets: shown once, never again (responses, errors, logs), sealed at rest, rotated."""

from __future__ import annotations

import base64
import html
import json
import logging
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote

import msgspec
import pytest
from sqlalchemy import text
from werkzeug import Request, Response

from adapters import testing as kit
from app.secretbox import SealedValueError, SecretBox
from tests.helpers import assert_error, captured_logs
from tests.integration.ui.conftest import sign_in

URL_SECRET = "T0SECRET/B0SECRET/zzPathCredentialQQ77"
URL = f"https://hooks.example.com/services/{URL_SECRET}"
KEY = "INTEGRATIONKEYsecret0000000000ab"
WHSEC = re.compile(r"whsec_([A-Za-z0-9+/]+=*)")


def _is_signing_secret(value: str) -> bool:
    match = WHSEC.fullmatch(value)
    return bool(match) and len(base64.b64decode(match.group(1))) == 32


async def _sealed(db, notifier_id: str) -> bytes:
    async with db() as s:
        return (
            await s.execute(text("SELECT config_sealed FROM notifiers WHERE id = :id"), {"id": notifier_id})
        ).scalar_one()


def _open(sealed: bytes, notifier_id: str, key: str = "test-secret-key") -> dict:
    return msgspec.json.decode(SecretBox(key).open(sealed, f"notifier:{notifier_id}"))


async def test_signing_secret_is_shown_once_and_never_again(client, auth):
    with captured_logs() as logs:
        r = await client.post(
            "/v1/notifiers", headers=auth, json={"name": "hook", "type": "webhook", "config": {"url": URL}}
        )
        assert r.status_code == 201
        created = r.json()
        secret = created["signing_secret"]
        assert _is_signing_secret(secret)
        nid = created["id"]
        seen = [
            await client.get(f"/v1/notifiers/{nid}", headers=auth),
            await client.get("/v1/notifiers", headers=auth),
            await client.patch(f"/v1/notifiers/{nid}", headers=auth, json={"name": "renamed"}),
            await client.patch(f"/v1/notifiers/{nid}", headers=auth, json={"config": {"url": URL + "x"}}),
            # Errors about the config name the key, never its value.
            await client.patch(f"/v1/notifiers/{nid}", headers=auth, json={"config": {"url": URL + " bad"}}),
            await client.patch(f"/v1/notifiers/{nid}", headers=auth, json={"config": {"url": URL, "extra": KEY}}),
            await client.post(
                "/v1/notifiers",
                headers=auth,
                json={"name": "x", "type": "webhook", "config": {"url": "ftp://" + URL_SECRET}},
            ),
            await client.post(
                "/v1/notifiers",
                headers=auth,
                json={"name": "x", "type": "webhook", "config": {"url": URL, "signing_secret": "whsec_" + URL_SECRET}},
            ),
        ]
        logging.getLogger("beacon").warning("canary")
    assert [r.status_code for r in seen] == [200, 200, 200, 200, 400, 400, 400, 400]
    for response in seen:
        assert secret not in response.text
        assert URL_SECRET not in response.text
        assert "signing_secret" not in response.json() or response.status_code == 400
    assert seen[0].json()["target"] == "hooks.example.com/…/QQ77"
    text_of_logs = "\n".join(logs)
    assert any("canary" in line for line in logs), "the capture works"  # so the check below can fail
    for value in (secret, URL_SECRET, KEY):
        assert value not in text_of_logs


async def test_incident_key_never_returned_or_logged(client, auth):
    with captured_logs() as logs:
        created = (
            await client.post(
                "/v1/notifiers",
                headers=auth,
                json={"name": "pd", "type": "incident_a", "config": {"integration_key": KEY}},
            )
        ).json()
        assert created["target"] == "…00ab"
        responses = [created, (await client.get(f"/v1/notifiers/{created['id']}", headers=auth)).json()]
        responses.append((await client.get("/v1/notifiers", headers=auth)).json())
    assert "signing_secret" not in created
    assert all(KEY not in msgspec.json.encode(body).decode() for body in responses)
    assert KEY not in "\n".join(logs)


async def test_config_is_encrypted_at_rest(client, auth, db):
    hook = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "h", "type": "webhook", "config": {"url": URL}})
    ).json()
    pd = (
        await client.post(
            "/v1/notifiers", headers=auth, json={"name": "p", "type": "incident_b", "config": {"integration_key": KEY}}
        )
    ).json()
    async with db() as s:
        rows = (await s.execute(text("SELECT n::text FROM notifiers n"))).scalars().all()
        raw = b"".join((await s.execute(text("SELECT config_sealed FROM notifiers"))).scalars().all())
    dump = "\n".join(rows)
    signing_key_b64 = hook["signing_secret"].removeprefix("whsec_")
    for value in (URL_SECRET, KEY, hook["signing_secret"], signing_key_b64, "hooks.example.com/services"):
        assert value not in dump
        assert value.encode() not in raw
    # The sealed value opens with the key derived from the secret key, for its own row only.
    assert _open(await _sealed(db, hook["id"]), hook["id"])["config"] == {
        "url": URL,
        "signing_secret": hook["signing_secret"],
    }
    assert _open(await _sealed(db, pd["id"]), pd["id"])["config"] == {"integration_key": KEY}
    with pytest.raises(SealedValueError):
        _open(await _sealed(db, hook["id"]), hook["id"], key="another-secret-key")
    with pytest.raises(SealedValueError):
        _open(await _sealed(db, hook["id"]), pd["id"])


async def test_a_sealed_config_moved_to_another_row_does_not_open(client, auth, db):
    a = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "a", "type": "webhook", "config": {"url": URL}})
    ).json()
    b = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "b", "type": "chat_a", "config": {"url": URL}})
    ).json()
    async with db() as s:
        await s.execute(
            text(
                "UPDATE notifiers SET config_sealed = (SELECT config_sealed FROM notifiers WHERE id = :a) WHERE id = :b"
            ),
            {"a": a["id"], "b": b["id"]},
        )
        await s.commit()
    # A config edit has to open the sealed value: it fails loudly (500, no detail) rather than use a foreign one.
    r = await client.patch(f"/v1/notifiers/{b['id']}", headers=auth, json={"config": {"url": URL}})
    assert_error(r, 500, "internal_error")
    assert a["signing_secret"] not in r.text


async def test_user_supplied_signing_secret_is_kept(client, auth, db):
    mine = "whsec_" + base64.b64encode(b"k" * 32).decode()
    created = await client.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "h", "type": "webhook", "config": {"url": URL, "signing_secret": mine}},
    )
    assert created.status_code == 201 and created.json()["signing_secret"] == mine
    assert _open(await _sealed(db, created.json()["id"]), created.json()["id"])["config"]["signing_secret"] == mine


async def test_rotate_secret(client, auth, db):
    created = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "h", "type": "webhook", "config": {"url": URL}})
    ).json()
    old = created["signing_secret"]
    before = datetime.now(UTC)
    r = await client.post(f"/v1/notifiers/{created['id']}/rotate-secret", headers=auth)
    assert r.status_code == 200
    body = r.json()
    new = body["signing_secret"]
    assert _is_signing_secret(new) and new != old
    assert body["id"] == created["id"] and body["object"] == "notifier"
    overlap_end = datetime.fromisoformat(body["previous_secret_expires_at"])
    assert before + timedelta(hours=24) - timedelta(seconds=5) <= overlap_end <= datetime.now(UTC) + timedelta(hours=24)
    for later in (
        await client.get(f"/v1/notifiers/{created['id']}", headers=auth),
        await client.get("/v1/notifiers", headers=auth),
    ):
        assert new not in later.text and old not in later.text
    stored = _open(await _sealed(db, created["id"]), created["id"])
    assert stored["config"]["signing_secret"] == new
    assert [p["secret"] for p in stored["previous_secrets"]] == [old]
    # A second rotation keeps both earlier secrets while their overlap lasts.
    newest = (await client.post(f"/v1/notifiers/{created['id']}/rotate-secret", headers=auth)).json()["signing_secret"]
    stored = _open(await _sealed(db, created["id"]), created["id"])
    assert stored["config"]["signing_secret"] == newest
    assert [p["secret"] for p in stored["previous_secrets"]] == [old, new]


async def test_rotate_needs_a_type_with_a_secret(client, auth):
    chat = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "c", "type": "chat_a", "config": {"url": URL}})
    ).json()
    assert_error(
        await client.post(f"/v1/notifiers/{chat['id']}/rotate-secret", headers=auth), 409, "unsupported_operation"
    )
    assert_error(await client.post("/v1/notifiers/ntf_00/rotate-secret", headers=auth), 404, "not_found")


async def test_signing_secret_cannot_be_patched(client, auth):
    created = (
        await client.post("/v1/notifiers", headers=auth, json={"name": "h", "type": "webhook", "config": {"url": URL}})
    ).json()
    other = "whsec_" + base64.b64encode(b"z" * 32).decode()
    r = await client.patch(f"/v1/notifiers/{created['id']}", headers=auth, json={"config": {"signing_secret": other}})
    err = assert_error(r, 400, "invalid_field", param="config.signing_secret")
    assert "rotate-secret" in err["message"] and other not in r.text


def _echo_page(request: Request) -> Response:
    """A 404 as common servers write it: nginx and Apache HTML-escape the path, Express decodes it, PHP's
    json_encode writes `\\/`, some percent-encode it."""
    target = request.environ["REQUEST_URI"]
    page = [
        f"<html><body><h1>404 Not Found</h1><p>The requested URL {html.escape(target)} was not found.</p>",
        f"Cannot POST {unquote(target)}",
        json.dumps({"error": "no route", "path": target}).replace("/", "\\/"),
        quote(target, safe=""),
    ]
    return Response("\n".join(page), status=404)


async def test_an_echoing_destination_leaves_no_part_of_the_url_in_what_we_store_or_show(
    app_client, admin_token, httpserver, db
):
    httpserver.expect_request(re.compile(".*")).respond_with_handler(_echo_page)
    # (The query value is a secret part too, so it must be a word the pages do not otherwise show: not "alerts".)
    url = httpserver.url_for(f"/services/{URL_SECRET}") + "?token=QuerySecret%2F123&channel=oncall-room-7"
    auth = {"Authorization": f"Bearer {admin_token}"}
    async with app_client(allow_private_destinations=True) as client:
        body = {"name": "chat", "type": "chat_a", "config": {"url": url}}
        notifier = (await client.post("/v1/notifiers", headers=auth, json=body)).json()
        sent = await client.post(f"/v1/notifiers/{notifier['id']}/test", headers=auth)
        delivery = sent.json()
        shown = [
            sent.text,
            (await client.get(f"/v1/deliveries/{delivery['id']}", headers=auth)).text,
            (await client.get("/v1/deliveries", headers=auth)).text,
            (await client.get(f"/v1/notifiers/{notifier['id']}/deliveries", headers=auth)).text,
        ]
        await sign_in(client, admin_token)
        shown.append((await client.get(f"/ui/notifiers?tested={delivery['id']}")).text)
    async with db() as s:
        stored = (
            await s.execute(text("SELECT d::text FROM deliveries d UNION ALL SELECT a::text FROM delivery_attempts a"))
        ).scalars()
        shown += list(stored)
    assert URL_SECRET in unquote(httpserver.log[0][0].environ["REQUEST_URI"])  # it was sent, and echoed
    assert delivery["status"] == "failed" and delivery["response_status"] == 404
    # What the destination said stays readable; only the secret parts are masked.
    assert "404 Not Found" in delivery["error"] and "Cannot POST **********" in delivery["error"]
    assert len(shown) == 7
    for where in shown:
        kit.assert_no_secret(where, [url])
        for token in ("T0SECRET", "B0SECRET", "zzPathCredentialQQ77", "QuerySecret"):
            assert token not in where
