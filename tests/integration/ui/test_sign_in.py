"""Signing in to the console: the token in an encrypted HttpOnly cookie, never in a URL; CSRF on forms."""

from __future__ import annotations

from tests.integration.ui.conftest import csrf_of, sign_in


async def test_pages_redirect_to_sign_in_without_a_session(client):
    for path in ("/ui/datasets", "/ui/datasets/web", "/ui/notifiers", "/ui/"):
        r = await client.get(path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] in ("/ui/login", "/ui/datasets"), path


async def test_a_wrong_token_is_refused_on_the_form(client):
    r = await client.post("/ui/login", data={"token": "bcn_nope"}, follow_redirects=False)
    assert r.status_code == 401
    assert "unknown, revoked or expired" in r.text and "set-cookie" not in r.headers


async def test_sign_in_sets_a_strict_httponly_cookie_without_the_token_in_it(client, admin_token):
    r = await client.post("/ui/login", data={"token": admin_token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/datasets"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("samesite", "SameSite") and "Path=/ui" in cookie
    assert admin_token not in cookie and admin_token.removeprefix("bcn_") not in cookie  # encrypted
    page = await client.get("/ui/datasets")
    assert page.status_code == 200 and "<h1>Datasets</h1>" in page.text
    assert admin_token not in page.text


async def test_the_api_still_wants_a_bearer_token_with_a_console_session(client, admin_token):
    await sign_in(client, admin_token)
    r = await client.get("/v1/datasets")
    assert r.status_code == 401 and r.json()["error"]["code"] == "missing_token"


async def test_a_revoked_token_signs_the_browser_out(client, auth, make_token):
    token = await make_token(["*"], name="short-lived")
    await sign_in(client, token)
    assert (await client.get("/ui/datasets")).status_code == 200
    listed = (await client.get("/v1/tokens", headers=auth)).json()["data"]
    token_id = next(t["id"] for t in listed if t["name"] == "short-lived")
    assert (await client.delete(f"/v1/tokens/{token_id}", headers=auth)).status_code in (200, 204)
    r = await client.get("/ui/datasets", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"


async def test_sign_out_needs_the_form_token(client, admin_token):
    await sign_in(client, admin_token)
    page = await client.get("/ui/datasets")
    r = await client.post("/ui/logout", data={"csrf": "forged"}, follow_redirects=False)
    assert r.status_code == 403 and "reload the page" in r.text
    assert (await client.get("/ui/datasets")).status_code == 200  # still signed in
    r = await client.post("/ui/logout", data={"csrf": csrf_of(page.text)}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"
    assert (await client.get("/ui/datasets", follow_redirects=False)).status_code == 303


async def test_the_console_is_not_in_the_openapi_document(client):
    paths = (await client.get("/schema/openapi.json")).json()["paths"]
    assert paths and not [p for p in paths if p.startswith("/ui")]


async def test_static_assets_are_served_from_the_package(client):
    r = await client.get("/ui/static/console.js")
    assert r.status_code == 200 and "ann-marker" in r.text
    assert (await client.get("/ui/static/console.css")).status_code == 200
