"""Tokens never outgrow the token that made them: a token that is not an unrestricted `*` sees and revokes only
the tokens it issued (and theirs); a child expires no later than its issuer and ends with it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text

from tests.helpers import assert_error


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def issue(client: Any, headers: dict[str, str], name: str, **fields: Any) -> dict[str, Any]:
    r = await client.post("/v1/tokens", headers=headers, json={"name": name, "scopes": ["*"], **fields})
    assert r.status_code == 201, r.text
    return r.json()


async def names(client: Any, headers: dict[str, str]) -> set[str]:
    r = await client.get("/v1/tokens", headers=headers, params={"limit": 100})
    assert r.status_code == 200, r.text
    return {t["name"] for t in r.json()["data"]}


async def test_a_limited_token_sees_and_revokes_only_its_descendants(client, auth, make_token):
    admin_id = next(t["id"] for t in (await client.get("/v1/tokens", headers=auth)).json()["data"])
    limited = bearer(await make_token(["tokens:write", "ingest"], datasets=["pub"], name="limited"))
    await make_token(["ingest"], name="unrelated")
    assert await names(client, limited) == set()
    # Not the admin token, not itself, not a stranger: 404, as for an id that does not exist.
    for method in ("GET", "DELETE"):
        assert_error(await client.request(method, f"/v1/tokens/{admin_id}", headers=limited), 404, "not_found")
    assert (await client.get("/v1/datasets", headers=auth)).status_code == 200  # the admin token lives on

    child = await issue(client, limited, "child", scopes=["tokens:write", "ingest"], datasets=["pub"])
    assert child["issuer_id"] is not None
    grandchild = await issue(client, bearer(child["token"]), "grandchild", scopes=["ingest"], datasets=["pub"])
    assert grandchild["issuer_id"] == child["id"]
    assert await names(client, limited) == {"child", "grandchild"}
    assert await names(client, bearer(child["token"])) == {"grandchild"}
    assert (await client.get(f"/v1/tokens/{grandchild['id']}", headers=limited)).status_code == 200
    # The child cannot reach up to the one that made it.
    assert_error(await client.delete(f"/v1/tokens/{child['id']}", headers=bearer(child["token"])), 404, "not_found")
    assert (await client.delete(f"/v1/tokens/{grandchild['id']}", headers=limited)).status_code == 204
    assert_error(await client.get("/v1/datasets/pub", headers=bearer(grandchild["token"])), 401, "invalid_token")
    # The unrestricted admin token sees every token.
    assert {"admin", "limited", "unrelated", "child", "grandchild"} <= await names(client, auth)


async def test_a_star_token_limited_to_datasets_is_not_an_admin(client, auth, make_token):
    scoped_star = bearer(await make_token(["*"], datasets=["pub"], name="star-pub"))
    assert await names(client, scoped_star) == set()


async def test_a_child_expires_no_later_than_its_issuer(client, make_token):
    ends = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
    issuer = bearer(await make_token(["*"], name="expiring", expires_at=ends))
    inherited = await issue(client, issuer, "inherits")
    assert inherited["expires_at"] == ends.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    earlier = await issue(client, issuer, "earlier", expires_at=(ends - timedelta(hours=1)).isoformat())
    assert earlier["expires_at"] == (ends - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    r = await client.post(
        "/v1/tokens",
        headers=issuer,
        json={"name": "later", "scopes": ["*"], "expires_at": (ends + timedelta(seconds=1)).isoformat()},
    )
    err = assert_error(r, 400, "invalid_field", param="expires_at")
    assert "issuer" in err["message"] or "issuing" in err["message"]


async def test_revoking_an_issuer_ends_its_children_and_theirs(client, auth, make_token):
    parent = await issue(client, auth, "parent")
    child = await issue(client, bearer(parent["token"]), "child")
    grandchild = await issue(client, bearer(child["token"]), "grandchild")
    assert (await client.get("/v1/datasets", headers=bearer(grandchild["token"]))).status_code == 200
    assert (await client.delete(f"/v1/tokens/{parent['id']}", headers=auth)).status_code == 204
    for t in (parent, child, grandchild):
        assert_error(await client.get("/v1/datasets", headers=bearer(t["token"])), 401, "invalid_token")
        shown = (await client.get(f"/v1/tokens/{t['id']}", headers=auth)).json()
        assert shown["revoked_at"] is not None, shown


async def test_an_issuer_ended_elsewhere_ends_its_children_at_authentication(client, auth, db):
    """The issuer revoked or expired by another process (the CLI, a race with the child's creation): the child's
    own row still looks alive, and the authentication refuses it all the same."""
    for change in (
        "UPDATE tokens SET revoked_at = now() WHERE id = :id",
        "UPDATE tokens SET expires_at = now() - interval '1 second' WHERE id = :id",
    ):
        parent = await issue(client, auth, "parent")
        child = await issue(client, bearer(parent["token"]), "child")
        grandchild = await issue(client, bearer(child["token"]), "grandchild")
        for t in (child, grandchild):
            assert (await client.get("/v1/datasets", headers=bearer(t["token"]))).status_code == 200
        async with db() as session:
            await session.execute(text(change), {"id": parent["id"]})
            await session.commit()
        for t in (child, grandchild):
            assert_error(await client.get("/v1/datasets", headers=bearer(t["token"])), 401, "invalid_token")
            # Also on the query route, which checks a token it knows beside the query.
            assert_error(
                await client.post("/v1/query", headers=bearer(t["token"]), json={"apl": "['x'] | count"}),
                401,
                "invalid_token",
            )


async def test_tokens_made_outside_the_api_have_no_issuer(client, auth, make_token):
    await make_token(["ingest"], name="from-cli")
    listed = (await client.get("/v1/tokens", headers=auth)).json()["data"]
    assert {t["name"]: t["issuer_id"] for t in listed}["from-cli"] is None
