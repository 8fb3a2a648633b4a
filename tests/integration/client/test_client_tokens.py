"""The client against the real app, for the endpoints that exist from the foundation (tokens), and the
back-off against the app's own 429s."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.settings import RateLimits
from beacon_client import AsyncClient, BeaconAPIError, Client, Token, TokenCreated


async def test_async_client_token_lifecycle(beacon: AsyncClient):
    expires = datetime.now(UTC) + timedelta(days=1)
    made = await beacon.create_token("ci", ["annotations:write", "ingest"], datasets=["web"], expires_at=expires)
    assert isinstance(made, TokenCreated) and made.token.startswith("bcn_") and made.id.startswith("tok_")
    assert made.scopes == ["annotations:write", "ingest"] and made.datasets == ["web"]
    assert abs((made.expires_at or expires) - expires) < timedelta(seconds=1)
    got = await beacon.get_token(made.id)
    assert isinstance(got, Token) and got.name == "ci" and got.revoked_at is None
    assert await beacon.revoke_token(made.id) is None
    assert (await beacon.get_token(made.id)).revoked_at is not None


async def test_async_client_walks_every_page(beacon: AsyncClient):
    for n in range(4):
        await beacon.create_token(f"t{n}", ["query"])
    first = await beacon.list_tokens(limit=2)
    assert len(first.data) == 2 and first.has_more and first.next_cursor
    names = [t.name async for t in beacon.iterate(beacon.list_tokens, limit=2)]
    assert sorted(names) == ["admin", "t0", "t1", "t2", "t3"] and len(set(names)) == 5


async def test_errors_carry_the_envelope(beacon: AsyncClient, client, make_token):
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.get_token("tok_404")
    err = caught.value
    assert (err.status, err.type, err.code) == (404, "invalid_request_error", "not_found")
    assert err.request_id and err.request_id.startswith("req_") and "tok_404" in err.message
    assert err.doc_url and err.doc_url.endswith("/errors#not_found")
    assert err.attempts == 1

    with pytest.raises(BeaconAPIError) as caught:
        await beacon.create_token("bad", ["everything"])
    assert (caught.value.status, caught.value.code, caught.value.param) == (400, "invalid_field", "scopes")

    limited = AsyncClient(str(client.base_url), await make_token(["query"]), http=client)
    with pytest.raises(BeaconAPIError) as caught:
        await limited.list_tokens()
    assert (caught.value.status, caught.value.type, caught.value.code) == (
        403,
        "permission_error",
        "insufficient_scope",
    )

    anonymous = AsyncClient(str(client.base_url), "bcn_" + "x" * 40, http=client)
    with pytest.raises(BeaconAPIError) as caught:
        await anonymous.list_tokens()
    assert (caught.value.status, caught.value.code) == (401, "invalid_token")


async def test_gives_up_after_five_retries_on_the_apps_own_429(app_client, admin_token):
    """The app limits GETs to 2 a minute: the client honours each Retry-After, retries 5 times, then raises."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with app_client(rate_limits=RateLimits(read=2)) as http:
        beacon = AsyncClient(str(http.base_url), admin_token, http=http, sleep=sleep)
        await beacon.list_tokens()
        await beacon.list_tokens()
        with pytest.raises(BeaconAPIError) as caught:
            await beacon.list_tokens()
    err = caught.value
    assert (err.status, err.type, err.code) == (429, "rate_limit_error", "rate_limit_exceeded")
    assert err.attempts == 6 and len(waits) == 5
    # Each wait is the Retry-After the app sent (whole seconds up to the window's end).
    assert all(w == int(w) and 1 <= w <= 60 for w in waits)
    assert err.retry_after is not None and 1 <= float(err.retry_after) <= 60
    assert err.request_id and err.request_id.startswith("req_")


def test_sync_client_against_beacon_serve(served):
    with served.client() as beacon:
        made = beacon.create_token("sync", ["datasets:read"])
        assert beacon.get_token(made.id).name == "sync"
        assert any(t.id == made.id for t in beacon.iterate(beacon.list_tokens, limit=1))
        beacon.revoke_token(made.id)
        with pytest.raises(BeaconAPIError) as caught:
            Client(served.url, made.token).list_tokens()
        assert caught.value.code == "invalid_token" and caught.value.request_id
