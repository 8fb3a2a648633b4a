"""Per-token rate limits: groups, headers, 429 + Retry-After, and a budget shared through Redis or PostgreSQL."""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import Counter

import pytest
from litestar.testing import AsyncTestClient

from app.ratelimit import group_for
from app.settings import RateLimits
from tests.helpers import assert_error

SMALL = RateLimits(ingest=5, query=4, read=3, other=2)


def test_groups_of_the_specification():
    assert group_for("POST", "/v1/ingest/web") == "ingest"
    assert group_for("POST", "/v1/query") == "query"
    assert group_for("POST", "/v1/export") == "query"
    assert group_for("GET", "/v1/annotations") == "read"
    assert group_for("GET", "/v1/datasets/web") == "read"
    assert group_for("POST", "/v1/annotations") == "other"
    assert group_for("DELETE", "/v1/tokens/tok_1") == "other"
    assert group_for("PATCH", "/v1/notifiers/ntf_1") == "other"


async def test_headers_on_every_authenticated_response(client, auth):
    before = int(time.time())
    ok = await client.get("/v1/tokens", headers=auth)
    missing = await client.get("/v1/tokens/tok_0", headers=auth)  # a 404 carries them too
    after = math.ceil(time.time())
    for r in (ok, missing):
        assert r.headers["x-ratelimit-limit"] == "2000"
        assert 0 <= int(r.headers["x-ratelimit-remaining"]) < 2000
        # The window resets 60 s after the oldest counted request.
        assert before + 60 <= int(r.headers["x-ratelimit-reset"]) <= after + 60
        assert "retry-after" not in r.headers
    assert int(missing.headers["x-ratelimit-remaining"]) == int(ok.headers["x-ratelimit-remaining"]) - 1


async def test_read_group_limit_then_429(app_client, auth):
    async with app_client(rate_limits=SMALL) as c:
        remaining = [int((await c.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"]) for _ in range(3)]
        assert remaining == [2, 1, 0]
        r = await c.get("/v1/tokens", headers=auth)
        err = assert_error(r, 429, "rate_limit_exceeded", type_="rate_limit_error")
        assert "3" in err["message"]
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert r.headers["x-ratelimit-limit"] == "3"
        assert r.headers["x-ratelimit-remaining"] == "0"
        # Another group of the same token still has its own budget.
        created = await c.post("/v1/tokens", headers=auth, json={"name": "n", "scopes": ["ingest"]})
        assert created.status_code == 201
        assert created.headers["x-ratelimit-limit"] == "2"


async def test_limits_are_per_token(app_client, auth, make_token):
    other = {"Authorization": f"Bearer {await make_token(['*'], name='other')}"}
    async with app_client(rate_limits=SMALL) as c:
        for _ in range(3):
            assert (await c.get("/v1/tokens", headers=auth)).status_code == 200
        assert (await c.get("/v1/tokens", headers=auth)).status_code == 429
        r = await c.get("/v1/tokens", headers=other)
        assert r.status_code == 200
        assert r.headers["x-ratelimit-remaining"] == "2"


async def test_rejected_requests_do_not_run(app_client, auth):
    async with app_client(rate_limits=SMALL) as c:
        for i in range(2):
            assert (
                await c.post("/v1/tokens", headers=auth, json={"name": f"t{i}", "scopes": ["ingest"]})
            ).status_code == 201
        r = await c.post("/v1/tokens", headers=auth, json={"name": "t-late", "scopes": ["ingest"]})
        assert r.status_code == 429
        names = [t["name"] for t in (await c.get("/v1/tokens", headers=auth)).json()["data"]]
    assert "t-late" not in names


@pytest.mark.redis
async def test_two_instances_share_one_budget_through_redis(make_app, auth, redis_url):
    prefix = f"beacon-test-{uuid.uuid4().hex}"
    app_a = make_app(rate_limits=SMALL, redis_url=redis_url, redis_key_prefix=prefix)
    app_b = make_app(rate_limits=SMALL, redis_url=redis_url, redis_key_prefix=prefix)
    async with AsyncTestClient(app=app_a) as a, AsyncTestClient(app=app_b) as b:
        assert (await a.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"] == "2"
        assert (await b.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"] == "1"
        assert (await a.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"] == "0"
        r = await b.get("/v1/tokens", headers=auth)
        assert_error(r, 429, "rate_limit_exceeded")
        assert int(r.headers["retry-after"]) >= 1
        assert (await a.get("/v1/tokens", headers=auth)).status_code == 429


async def test_separate_instances_without_redis_do_not_share(app_client, auth):
    async with (
        app_client(rate_limits=SMALL) as a,
        app_client(rate_limits=SMALL) as b,
    ):
        for _ in range(3):
            assert (await a.get("/v1/tokens", headers=auth)).status_code == 200
        assert (await b.get("/v1/tokens", headers=auth)).status_code == 200


async def test_two_instances_share_one_budget_through_postgres(make_app, auth):
    app_a = make_app(rate_limits=SMALL, rate_limit_store="postgres")
    app_b = make_app(rate_limits=SMALL, rate_limit_store="postgres")
    async with AsyncTestClient(app=app_a) as a, AsyncTestClient(app=app_b) as b:
        before = int(time.time())
        assert (await a.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"] == "2"
        assert (await b.get("/v1/tokens", headers=auth)).headers["x-ratelimit-remaining"] == "1"
        ok = await a.get("/v1/tokens", headers=auth)
        assert ok.headers["x-ratelimit-remaining"] == "0"
        assert before + 59 <= int(ok.headers["x-ratelimit-reset"]) <= math.ceil(time.time()) + 60
        r = await b.get("/v1/tokens", headers=auth)
        assert_error(r, 429, "rate_limit_exceeded")
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert (await a.get("/v1/tokens", headers=auth)).status_code == 429
        # Another group has its own budget there too.
        assert (await b.post("/v1/query", headers=auth, json={"apl": "x y"})).headers["x-ratelimit-remaining"] == "3"


async def test_the_postgres_budget_holds_under_concurrent_requests(make_app, auth):
    limits = RateLimits(read=20)
    apps = [make_app(rate_limits=limits, rate_limit_store="postgres") for _ in range(2)]
    async with AsyncTestClient(app=apps[0]) as a, AsyncTestClient(app=apps[1]) as b:
        answers = await asyncio.gather(*(c.get("/v1/tokens", headers=auth) for _ in range(30) for c in (a, b)))
    assert Counter(r.status_code for r in answers) == {200: 20, 429: 40}
