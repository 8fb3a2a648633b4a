"""The console's own defences: sign-out ends the session on the server, failed sign-ins are throttled, pages
forbid framing and scripts from elsewhere, and a token limited to datasets sees nothing of the others."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx

from app.cli import uvicorn_options
from app.settings import RateLimits, Settings
from tests.integration.monitors.test_dataset_limits import MATCH
from tests.integration.ui.conftest import csrf_of, sign_in
from tests.integration.ui.test_monitor_pages import h  # noqa: F401  (the monitors harness, as a fixture)
from tests.servers import served_app


async def test_a_cookie_copied_before_sign_out_is_dead_after_it(client, admin_token):
    await sign_in(client, admin_token)
    page = await client.get("/ui/datasets")
    copied = dict(client.cookies)
    r = await client.post("/ui/logout", data={"csrf": csrf_of(page.text)}, follow_redirects=False)
    assert r.status_code == 303
    client.cookies.clear()
    client.cookies.update(copied)  # replayed, as an attacker who copied it would
    r = await client.get("/ui/datasets", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login?next=%2Fui%2Fdatasets"
    # Signing in again starts a new session, which works.
    await sign_in(client, admin_token)
    assert (await client.get("/ui/datasets")).status_code == 200


async def test_failed_sign_ins_are_throttled_per_address(make_app, admin_token):
    from litestar.testing import AsyncTestClient

    app = make_app(rate_limits=RateLimits(sign_in_per_address=5, sign_in=1000))
    async with AsyncTestClient(app=app) as client:
        answers = await asyncio.gather(
            *(client.post("/ui/login", data={"token": f"bcn_wrong{i}"}, follow_redirects=False) for i in range(40))
        )
        statuses = [r.status_code for r in answers]
        assert statuses.count(401) == 5 and statuses.count(429) == 35, statuses
        throttled = next(r for r in answers if r.status_code == 429)
        assert "Too many sign-in attempts" in throttled.text and int(throttled.headers["retry-after"]) >= 1
        # While throttled, even the right token waits: the answer says nothing about it.
        r = await client.post("/ui/login", data={"token": admin_token}, follow_redirects=False)
        assert r.status_code == 429 and "set-cookie" not in r.headers


async def test_failed_sign_ins_are_throttled_in_total(app_client):

    async with app_client(rate_limits=RateLimits(sign_in_per_address=1000, sign_in=3)) as client:
        statuses = [
            (await client.post("/ui/login", data={"token": "bcn_wrong"}, follow_redirects=False)).status_code
            for _ in range(5)
        ]
        assert statuses == [401, 401, 401, 429, 429]


async def test_failures_of_others_never_lock_out_a_valid_token(make_app, admin_token):
    """A real server, clients on two real loopback addresses: one floods bad sign-ins, each with a new
    X-Forwarded-For (believed only from BEACON_TRUSTED_PROXIES, unset here), past its own and the global budget;
    the admin's valid sign-in from the other address still passes."""
    app = make_app(rate_limits=RateLimits(sign_in_per_address=10, sign_in=15))
    async with served_app(app, uvicorn_options(Settings())) as url:
        async with _client_from("127.0.0.1", url) as attacker, _client_from("127.0.0.2", url) as other:
            statuses = []
            for i in range(30):
                forwarded = {"x-forwarded-for": f"10.9.0.{i}"}
                r = await attacker.post("/ui/login", data={"token": "bcn_wrong"}, headers=forwarded)
                statuses.append(r.status_code)
            # All counted as 127.0.0.1: forwarded headers from an untrusted peer are not believed.
            assert statuses == [401] * 10 + [429] * 20, statuses
            wrong = [(await other.post("/ui/login", data={"token": "bcn_wrong"})).status_code for _ in range(6)]
            assert wrong == [401] * 5 + [429], wrong  # the budget of all addresses (15) is used up
            r = await other.post("/ui/login", data={"token": "bcn_wrong"})
            assert r.status_code == 429 and "on this server" in r.text
            r = await other.post("/ui/login", data={"token": admin_token})
            assert r.status_code == 303 and "set-cookie" in r.headers, r.text


async def test_forwarded_addresses_are_believed_from_trusted_proxies_only(make_app):
    app = make_app(rate_limits=RateLimits(sign_in_per_address=2, sign_in=1000))
    async with served_app(app, uvicorn_options(Settings(trusted_proxies="127.0.0.1"))) as url:
        async with _client_from("127.0.0.1", url) as proxy:
            for client_address in ("10.0.0.1", "10.0.0.2"):  # two clients behind the proxy: a budget each
                statuses = [
                    (
                        await proxy.post(
                            "/ui/login", data={"token": "bcn_wrong"}, headers={"x-forwarded-for": client_address}
                        )
                    ).status_code
                    for _ in range(3)
                ]
                assert statuses == [401, 401, 429], (client_address, statuses)


def _client_from(address: str, url: str) -> httpx.AsyncClient:
    """A client whose connections leave from `address` (any 127.x.y.z is loopback on Linux)."""
    return httpx.AsyncClient(base_url=url, transport=httpx.AsyncHTTPTransport(local_address=address), timeout=30)


async def test_pages_forbid_framing_and_foreign_scripts(client, admin_token):
    login = await client.get("/ui/login")
    await sign_in(client, admin_token)
    for r in (login, await client.get("/ui/datasets"), await client.get("/ui/datasets/nope")):
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "default-src 'none'" in csp, csp
        assert "unsafe-inline" not in csp
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert " style=" not in r.text and "<script>" not in r.text  # nothing inline the policy would block


async def test_console_pages_show_nothing_of_other_datasets(h, make_token):  # noqa: F811
    hook = await h.client.post(
        "/v1/notifiers",
        headers=h.auth,
        json={"name": "n", "type": "incident_a", "config": {"integration_key": "k" * 32}},
    )
    await h.ingest("secret", [{"status": 503}])
    await h.ingest("pub", [{"status": 500}])
    hidden = await h.monitor(
        name="hidden-monitor", type="match_event", apl=MATCH.format("secret"), notifier_ids=[hook.json()["id"]]
    )
    shown = await h.monitor(name="shown-monitor", type="match_event", apl=MATCH.format("pub"))
    await h.run(datetime.now(UTC) + timedelta(seconds=30))  # past the match settle time
    (delivery,) = await h.deliveries(hidden["id"])
    for datasets, title in ((["pub"], "pub-only"), (["pub", "secret"], "pub-and-secret")):
        r = await h.client.post(
            "/v1/annotations",
            headers=h.auth,
            json={"type": "deploy", "title": title, "datasets": datasets, "time": h.at(100).isoformat()},
        )
        assert r.status_code == 201
    await sign_in(h.client, await make_token(["*"], datasets=["pub"]))

    monitors = (await h.client.get("/ui/monitors", params={"range": "1h"})).text
    assert shown["id"] in monitors and hidden["id"] not in monitors and "hidden-monitor" not in monitors
    page = (await h.client.get("/ui/datasets/pub", params={"range": "1h"})).text
    assert "pub-only" in page and "pub-and-secret" not in page
    notifiers = (await h.client.get("/ui/notifiers")).text
    assert delivery["id"] not in notifiers
    r = await h.client.get("/ui/notifiers", params={"tested": delivery["id"]})
    assert r.status_code == 404 and "Test message to" not in r.text
