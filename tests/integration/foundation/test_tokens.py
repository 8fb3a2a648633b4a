"""The /v1/tokens endpoints: the token text once, scopes, datasets, expiry, no privilege escalation."""

from __future__ import annotations

import re

from tests.helpers import assert_error


async def test_create_shows_token_once(client, auth):
    r = await client.post(
        "/v1/tokens",
        headers=auth,
        json={
            "name": "ci",
            "scopes": ["ingest", "annotations:write"],
            "datasets": ["web"],
            "expires_at": "2099-01-01T00:00:00+02:00",
        },
    )
    assert r.status_code == 201
    body = r.json()
    assert body["object"] == "token"
    assert re.fullmatch(r"tok_[0-9a-f]+", body["id"])
    assert re.fullmatch(r"bcn_[A-Za-z0-9_-]{40}", body["token"])
    assert body["scopes"] == ["annotations:write", "ingest"]
    assert body["datasets"] == ["web"]
    assert body["expires_at"] == "2098-12-31T22:00:00.000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["created_at"])
    shown = await client.get(f"/v1/tokens/{body['id']}", headers=auth)
    assert shown.status_code == 200
    assert "token" not in shown.json()
    listing = (await client.get("/v1/tokens", headers=auth)).text
    assert body["token"] not in listing and body["token"] not in shown.text
    # The new token works, within its scopes.
    h = {"Authorization": f"Bearer {body['token']}"}
    assert_error(await client.get("/v1/tokens", headers=h), 403, "insufficient_scope")


async def test_stored_as_hash_only(client, auth, db):
    from sqlalchemy import text

    token = (await client.post("/v1/tokens", headers=auth, json={"name": "h", "scopes": ["*"]})).json()["token"]
    async with db() as s:
        rows = (await s.execute(text("SELECT t::text FROM tokens t"))).scalars().all()
    assert rows and all(token not in row for row in rows)


async def test_unknown_scope_is_refused(client, auth):
    r = await client.post("/v1/tokens", headers=auth, json={"name": "x", "scopes": ["root"]})
    err = assert_error(r, 400, "invalid_field", param="scopes")
    assert "root" in err["message"]


async def test_empty_scopes_refused(client, auth):
    assert_error(
        await client.post("/v1/tokens", headers=auth, json={"name": "x", "scopes": []}),
        400,
        "invalid_field",
        param="scopes",
    )


async def test_past_expiry_refused(client, auth):
    r = await client.post(
        "/v1/tokens", headers=auth, json={"name": "x", "scopes": ["*"], "expires_at": "2001-01-01T00:00:00Z"}
    )
    assert_error(r, 400, "invalid_field", param="expires_at")


async def test_bad_dataset_name_refused(client, auth):
    r = await client.post("/v1/tokens", headers=auth, json={"name": "x", "scopes": ["*"], "datasets": ["no spaces"]})
    assert_error(r, 400, "invalid_field", param="datasets")


async def test_a_token_cannot_grant_more_than_it_holds(client, make_token):
    limited = {"Authorization": f"Bearer {await make_token(['tokens:write', 'ingest'], datasets=['web'])}"}
    r = await client.post("/v1/tokens", headers=limited, json={"name": "x", "scopes": ["*"], "datasets": ["web"]})
    assert_error(r, 403, "insufficient_scope")
    r = await client.post("/v1/tokens", headers=limited, json={"name": "x", "scopes": ["ingest"]})
    assert_error(r, 403, "insufficient_scope")
    r = await client.post("/v1/tokens", headers=limited, json={"name": "x", "scopes": ["ingest"], "datasets": ["web"]})
    assert r.status_code == 201


async def test_revoke_is_idempotent_and_unknown_is_404(client, auth):
    tid = (await client.post("/v1/tokens", headers=auth, json={"name": "r", "scopes": ["*"]})).json()["id"]
    assert (await client.delete(f"/v1/tokens/{tid}", headers=auth)).status_code == 204
    assert (await client.delete(f"/v1/tokens/{tid}", headers=auth)).status_code == 204
    assert_error(await client.delete("/v1/tokens/tok_00", headers=auth), 404, "not_found")
