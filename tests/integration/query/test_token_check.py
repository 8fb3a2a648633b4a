"""POST /v1/query checks a token it has seen before beside the query (app/known_tokens.py): whatever the
query does meanwhile, a token revoked or expired since its last request gets 401 and never a row."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.settings import RateLimits
from tests.conftest import TokenFactory
from tests.helpers import assert_error

Client = AsyncTestClient[Litestar]
pytestmark = pytest.mark.usefixtures("web")

COUNT = {"apl": "['web'] | count"}


async def _known_token(client: Client, make_token: TokenFactory, name: str) -> dict[str, str]:
    """A query token that has answered one query, so that the app knows it."""
    headers = {"Authorization": f"Bearer {await make_token(['query'], name=name)}"}
    resp = await client.post("/v1/query", json=COUNT, headers=headers)
    assert resp.status_code == 200 and resp.json()["rows"] == [[8]]
    return headers


async def _in_database(db: async_sessionmaker[AsyncSession], statement: str, name: str) -> None:
    """Change the token as another process would (the CLI, a second app instance): not through this app."""
    async with db() as session:
        await session.execute(text(statement), {"name": name})
        await session.commit()


async def test_a_token_revoked_through_the_api_gets_401_not_rows(client: Client, make_token, auth) -> None:
    headers = await _known_token(client, make_token, "known")
    listing = (await client.get("/v1/tokens", headers=auth)).json()["data"]
    token_id = next(t["id"] for t in listing if t["name"] == "known")
    assert (await client.delete(f"/v1/tokens/{token_id}", headers=auth)).status_code == 204
    for _ in range(2):  # the first answer after the revocation, and every one after it
        resp = await client.post("/v1/query", json=COUNT, headers=headers)
        assert_error(resp, 401, "invalid_token", type_="authentication_error")
        assert "rows" not in resp.text


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE tokens SET revoked_at = now() WHERE name = :name",  # revoked by the CLI or another server
        "UPDATE tokens SET expires_at = now() - interval '1 second' WHERE name = :name",  # expired since
        "DELETE FROM tokens WHERE name = :name",
    ],
    ids=["revoked", "expired", "deleted"],
)
async def test_a_token_changed_by_another_process_gets_401(client: Client, make_token, db, change: str) -> None:
    headers = await _known_token(client, make_token, "elsewhere")
    await _in_database(db, change, "elsewhere")
    assert_error(await client.post("/v1/query", json=COUNT, headers=headers), 401, "invalid_token")


async def test_a_revoked_token_gets_401_even_when_its_query_fails(client: Client, make_token, db) -> None:
    # The failed check answers in place of the query's own error: a revoked token learns nothing.
    headers = await _known_token(client, make_token, "failing")
    await _in_database(db, "UPDATE tokens SET revoked_at = now() WHERE name = :name", "failing")
    for body in (
        {"apl": "['web'] | where"},  # a parse error
        {"apl": "['nowhere'] | count"},  # no such dataset
        {"apl": "['web'] | where status matches regex '('"},  # fails in PostgreSQL
        {"apl": 5},  # a body that does not validate
    ):
        assert_error(await client.post("/v1/query", json=body, headers=headers), 401, "invalid_token")


async def test_a_rate_limited_revoked_token_gets_401(app_client, make_token, db) -> None:
    async with app_client(rate_limits=RateLimits(query=1)) as client:
        headers = await _known_token(client, make_token, "limited")
        await _in_database(db, "UPDATE tokens SET revoked_at = now() WHERE name = :name", "limited")
        assert_error(await client.post("/v1/query", json=COUNT, headers=headers), 401, "invalid_token")


async def test_a_known_token_keeps_working(client: Client, make_token) -> None:
    headers = await _known_token(client, make_token, "steady")
    for _ in range(3):
        resp = await client.post("/v1/query", json=COUNT, headers=headers)
        assert resp.status_code == 200 and resp.json()["rows"] == [[8]]
