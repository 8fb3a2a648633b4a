"""The /v1/notifiers resource: representation and `target` per type, get, list, update, delete, scopes."""

from __future__ import annotations

import re

import pytest

from tests.helpers import assert_error

MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
FIELDS = {
    "object",
    "id",
    "name",
    "type",
    "target",
    "send_resolved",
    "disabled_until",
    "disabled_reason",
    "created_at",
    "updated_at",
}

VALID = {
    "chat_a": {"url": "https://hooks.example.com/services/T000/B000/XXXXx9Ab"},
    "chat_b": {"url": "https://chat-b.example.com/api/webhooks/123/tokenQwEr"},
    "chat_c": {"url": "https://prod.example.com:8443/workflows/abc/triggers/zz99/"},
    "incident_a": {"integration_key": "R0UT1NGKEY0000000000000000001234"},
    "incident_b": {"integration_key": "eb243592-faa2-4ba2-a551q-1afdf565c889"},
    "webhook": {"url": "https://receiver.example.org/hooks/beacon"},
    "email": {"addresses": ["ops@example.com", "oncall@example.com", "boss@example.org"]},
}
TARGETS = {
    "chat_a": "hooks.example.com/…/x9Ab",
    "chat_b": "chat-b.example.com/…/QwEr",
    "chat_c": "prod.example.com:8443/…/zz99",
    "incident_a": "…1234",
    "incident_b": "…c889",
    "webhook": "receiver.example.org/…/acon",
    "email": "ops@example.com +2 more",
}


async def create(client, auth, type_, config=None, **extra):
    body = {"name": f"{type_} notifier", "type": type_, "config": config or VALID[type_], **extra}
    r = await client.post("/v1/notifiers", headers=auth, json=body)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.mark.parametrize("type_", list(VALID))
async def test_create_each_type(client, auth, type_):
    body = await create(client, auth, type_)
    expected = FIELDS | ({"signing_secret"} if type_ == "webhook" else set())
    assert set(body) == expected
    assert body["object"] == "notifier"
    assert re.fullmatch(r"ntf_[0-9a-f]+", body["id"])
    assert body["name"] == f"{type_} notifier" and body["type"] == type_
    assert body["target"] == TARGETS[type_]
    assert body["disabled_until"] is None
    assert body["send_resolved"] is (type_ not in ("chat_a", "email"))  # Alertmanager's defaults
    assert MS.fullmatch(body["created_at"]) and body["updated_at"] == body["created_at"]
    got = (await client.get(f"/v1/notifiers/{body['id']}", headers=auth)).json()
    assert got == {k: v for k, v in body.items() if k != "signing_secret"}
    assert "config" not in got


async def test_single_address_target_and_url_without_path(client, auth):
    assert (await create(client, auth, "email", {"addresses": ["solo@example.com"]}))["target"] == "solo@example.com"
    assert (await create(client, auth, "chat_a", {"url": "https://hooks.example.com"}))["target"] == "hooks.example.com"
    short = await create(client, auth, "webhook", {"url": "http://hooks.example.com/ab?token=secret"})
    assert short["target"] == "hooks.example.com/…/ab"


async def test_types_come_from_the_registry(client, auth):
    r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": "carrier_pigeon", "config": {}})
    err = assert_error(r, 400, "invalid_field", param="type")
    for t in VALID:
        assert t in err["message"]


MEANT = {
    "slack": "'chat_a', Chat service A (Slack-style incoming webhook)?",
    "Mattermost": "'chat_a'",
    "discord": "'chat_b', Chat service B (Discord-style webhook)?",
    "teams": "'chat_c', Chat service C (Teams Workflows-style webhook)?",
    "MS Teams": "'chat_c'",
    "pagerduty": "'incident_a', Incident paging A (PagerDuty-style Events API v2)?",
    "PagerDuty": "'incident_a'",
    "opsgenie": "'incident_b', Incident paging B (Opsgenie-style alerts API)?",
    "smtp": "'email'",
    "http": "'webhook'",
    "chat-a": "'chat_a'",
    "webhok": "'webhook'",
    "incidnt_a": "'incident_a'",
}


async def test_unknown_types_name_the_type_meant(client, auth, db):
    """Issue 18: the types are named by role; `type: "slack"` is answered with the type that speaks to it."""
    for given, meant in MEANT.items():
        r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": given, "config": {}})
        err = assert_error(r, 400, "invalid_field", param="type")
        assert f"Unknown notifier type {given!r}. Did you mean {meant}" in err["message"], err["message"]
        assert "The types are chat_a, " in err["message"]
    r = await client.post("/v1/notifiers", headers=auth, json={"name": "n", "type": "carrier_pigeon", "config": {}})
    assert "Did you mean" not in r.json()["error"]["message"]


CREATE_ERRORS = [
    ({"type": "chat_a", "config": VALID["chat_a"]}, "missing_field", "name"),
    ({"name": "n", "config": VALID["chat_a"]}, "missing_field", "type"),
    ({"name": "n", "type": "chat_a"}, "missing_field", "config"),
    ({"name": "", "type": "chat_a", "config": VALID["chat_a"]}, "invalid_field", "name"),
    ({"name": "x" * 257, "type": "chat_a", "config": VALID["chat_a"]}, "invalid_field", "name"),
    ({"name": "n", "type": "chat_a", "config": "https://hooks.example.com/x"}, "invalid_field", "config"),
    (
        {"name": "n", "type": "chat_a", "config": VALID["chat_a"], "disabled_until": "2026-01-01T00:00:00"},
        "invalid_field",
        "disabled_until",
    ),
    ({"name": "n", "type": "chat_a", "config": VALID["chat_a"], "colour": "red"}, "invalid_field", "colour"),
]


async def test_create_rejects_body_with_param(client, auth, db):
    from sqlalchemy import text

    for body, code, param in CREATE_ERRORS:
        r = await client.post("/v1/notifiers", headers=auth, json=body)
        try:
            assert_error(r, 400, code, param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {body!r}: {exc}") from None
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM notifiers"))).scalar_one() == 0


async def test_disabled_until_set_and_cleared(client, auth):
    n = await create(client, auth, "chat_a", disabled_until="2030-01-01T02:00:00.123456+02:00")
    assert n["disabled_until"] == "2030-01-01T00:00:00.123Z"
    r = await client.patch(f"/v1/notifiers/{n['id']}", headers=auth, json={"disabled_until": None})
    assert r.status_code == 200 and r.json()["disabled_until"] is None


async def test_update_name_and_config(client, auth):
    n = await create(client, auth, "chat_a")
    r = await client.patch(f"/v1/notifiers/{n['id']}", headers=auth, json={"name": "renamed"})
    assert r.status_code == 200
    body = r.json()
    assert body["name"] == "renamed" and body["target"] == n["target"]
    assert body["updated_at"] >= n["updated_at"] and body["created_at"] == n["created_at"]
    r = await client.patch(
        f"/v1/notifiers/{n['id']}", headers=auth, json={"config": {"url": "https://other.example.com/hooks/NEW1"}}
    )
    assert r.status_code == 200 and r.json()["target"] == "other.example.com/…/NEW1"
    assert (await client.get(f"/v1/notifiers/{n['id']}", headers=auth)).json()["target"] == "other.example.com/…/NEW1"


UPDATE_ERRORS = [
    ("chat_a", {"config": {"url": "ftp://x.example.com/a"}}, "invalid_field", "config.url"),
    ("chat_a", {"config": {"url": None}}, "missing_field", "config.url"),
    ("chat_a", {"config": {"addresses": ["a@example.com"]}}, "invalid_field", "config.addresses"),
    ("email", {"config": {"addresses": ["not-an-address"]}}, "invalid_field", "config.addresses"),
    ("incident_a", {"config": {"integration_key": ""}}, "invalid_field", "config.integration_key"),
    ("webhook", {"config": {"signing_secret": "whsec_AAAA"}}, "invalid_field", "config.signing_secret"),
    ("chat_a", {"type": "chat_b"}, "invalid_field", "type"),
    ("chat_a", {"name": ""}, "invalid_field", "name"),
    ("chat_a", {"config": "x"}, "invalid_field", "config"),
]


async def test_update_revalidates_and_stores_nothing_on_error(client, auth):
    for i, (type_, patch, code, param) in enumerate(UPDATE_ERRORS):
        n = await create(client, auth, type_, name=f"case {i}")  # names are unique
        before = (await client.get(f"/v1/notifiers/{n['id']}", headers=auth)).json()
        r = await client.patch(f"/v1/notifiers/{n['id']}", headers=auth, json=patch)
        try:
            assert_error(r, 400, code, param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {type_} {patch!r}: {exc}") from None
        assert (await client.get(f"/v1/notifiers/{n['id']}", headers=auth)).json() == before


async def test_delete_then_404(client, auth):
    n = await create(client, auth, "email")
    r = await client.delete(f"/v1/notifiers/{n['id']}", headers=auth)
    assert r.status_code == 204 and r.content == b""
    for call in (client.get, client.delete):
        assert_error(await call(f"/v1/notifiers/{n['id']}", headers=auth), 404, "not_found")
    assert_error(await client.patch(f"/v1/notifiers/{n['id']}", headers=auth, json={"name": "x"}), 404, "not_found")


async def test_list_newest_first_filter_and_walk(client, auth):
    ids = []
    for i in range(12):
        ids.append((await create(client, auth, "chat_a" if i % 3 else "email", name=f"n{i}"))["id"])
    listing = (await client.get("/v1/notifiers", headers=auth)).json()
    assert listing["object"] == "list" and listing["has_more"] is False and listing["next_cursor"] is None
    assert [n["id"] for n in listing["data"]] == ids[::-1]
    emails = (await client.get("/v1/notifiers?type=email", headers=auth)).json()["data"]
    assert [n["id"] for n in emails] == [ids[i] for i in (9, 6, 3, 0)]
    seen, cursor = [], None
    while True:
        page = (
            await client.get("/v1/notifiers?limit=5" + (f"&cursor={cursor}" if cursor else ""), headers=auth)
        ).json()
        seen += [n["id"] for n in page["data"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == ids[::-1]
    assert_error(await client.get("/v1/notifiers?limit=101", headers=auth), 400, "invalid_parameter", param="limit")
    assert_error(
        await client.get(f"/v1/notifiers?type=email&cursor={listing['next_cursor'] or cursor}", headers=auth),
        400,
        "invalid_cursor",
    )


async def test_scopes(client, make_token):
    reader = {"Authorization": f"Bearer {await make_token(['notifiers:read'])}"}
    writer = {"Authorization": f"Bearer {await make_token(['notifiers:write'])}"}
    body = {"name": "n", "type": "email", "config": VALID["email"]}
    assert_error(await client.post("/v1/notifiers", json=body), 401, "missing_token")
    assert_error(await client.post("/v1/notifiers", headers=reader, json=body), 403, "insufficient_scope")
    n = (await client.post("/v1/notifiers", headers=writer, json=body)).json()
    assert_error(await client.get("/v1/notifiers", headers=writer), 403, "insufficient_scope")
    assert (await client.get(f"/v1/notifiers/{n['id']}", headers=reader)).status_code == 200
    assert_error(await client.delete(f"/v1/notifiers/{n['id']}", headers=reader), 403, "insufficient_scope")
    assert_error(await client.post(f"/v1/notifiers/{n['id']}/rotate-secret", headers=reader), 403, "insufficient_scope")


async def test_openapi_describes_the_routes(client):
    doc = (await client.get("/schema/openapi.json")).json()
    for path in ("/v1/notifiers", "/v1/notifiers/{notifier_id}", "/v1/notifiers/{notifier_id}/rotate-secret"):
        assert path in doc["paths"], path
    for path in (
        "/v1/notifiers/{notifier_id}/test",
        "/v1/notifiers/{notifier_id}/preview",
        "/v1/notifiers/{notifier_id}/deliveries",
        "/v1/deliveries",
        "/v1/deliveries/{delivery_id}",
        "/v1/deliveries/{delivery_id}/retry",
        "/v1/annotations",
        "/v1/annotations/{annotation_id}",
    ):
        assert path in doc["paths"], path
