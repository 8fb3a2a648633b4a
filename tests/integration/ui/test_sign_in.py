"""Signing in to the console: the token in an encrypted HttpOnly cookie, never in a URL; CSRF on forms."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.integration.ui.conftest import csrf_of, sign_in


async def test_pages_redirect_to_sign_in_without_a_session(client):
    for path in ("/ui/datasets", "/ui/datasets/web?range=1h", "/ui/notifiers", "/ui/monitors/mon_0123"):
        r = await client.get(path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/ui/login?next={quote(path, safe='')}", path
    r = await client.get("/ui/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"


async def test_signing_in_comes_back_to_the_page_that_asked(client, admin_token):
    r = await client.get("/ui/monitors?range=1h", follow_redirects=False)
    form = await client.get(r.headers["location"])
    assert '<input type="hidden" name="next" value="/ui/monitors?range=1h">' in form.text
    r = await client.post(
        "/ui/login", data={"token": admin_token, "next": "/ui/monitors?range=1h"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"] == "/ui/monitors?range=1h"


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/ui/datasets",
        "/\\evil.example/ui/",
        "https://evil.example/ui/datasets",
        "http:/ui/datasets",
        "/v1/tokens",
        "/ui/login?next=//evil.example",
        "/ui/datasets\r\nLocation: https://evil.example",
        "ui/datasets",
        "",
    ],
)
async def test_signing_in_never_leaves_the_console(client, admin_token, target):
    form = await client.get("/ui/login", params={"next": target})
    assert form.status_code == 200 and 'name="next"' not in form.text
    r = await client.post("/ui/login", data={"token": admin_token, "next": target}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/datasets"


async def test_a_wrong_token_keeps_the_page_to_come_back_to(client):
    r = await client.post("/ui/login", data={"token": "bcn_nope", "next": "/ui/notifiers"}, follow_redirects=False)
    assert r.status_code == 401 and '<input type="hidden" name="next" value="/ui/notifiers">' in r.text


async def test_home_is_the_first_page_the_token_can_open(client, make_token):
    await sign_in(client, await make_token(["monitors:read"], name="monitors only"))
    r = await client.get("/ui/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/monitors"
    page = await client.get("/ui/monitors")
    nav = page.text.split('<nav aria-label="Console">')[1].split("</nav>")[0]
    assert 'href="/ui/monitors"' in nav and "/ui/datasets" not in nav and "/ui/notifiers" not in nav


async def test_the_front_door_and_the_api_reference(client):
    r = await client.get("/", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == "/ui/"
    r = await client.get("/docs", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == "/schema/swagger"
    reference = await client.get("/schema/swagger")
    assert reference.status_code == 200 and "SwaggerUIBundle" in reference.text and "/v1/query" in reference.text
    errors = await client.get("/docs/errors")
    assert errors.status_code == 200 and "missing_token" in errors.text


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


async def test_a_sign_in_form_posted_from_another_site_is_refused(client, admin_token):
    r = await client.post(
        "/ui/login", data={"token": admin_token}, headers={"origin": "https://evil.example"}, follow_redirects=False
    )
    assert r.status_code == 403 and "from another site" in r.text and "set-cookie" not in r.headers
    r = await client.post(
        "/ui/login", data={"token": admin_token}, headers={"origin": "http://testserver.local"}, follow_redirects=False
    )
    assert r.status_code == 303  # the console's own address


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
    assert r.status_code == 303 and r.headers["location"] == "/ui/login?next=%2Fui%2Fdatasets"


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


async def test_the_api_reference_loads_swagger_ui_from_the_service_itself(client):
    """Swagger UI's scripts, style and icon come from Beacon (they came from a CDN: a blank page offline)."""
    for path in ("/schema/swagger", "/schema"):
        page = await client.get(path)
        assert page.status_code == 200 and "SwaggerUIBundle(" in page.text
        urls = re.findall(r'<(?:script|link)[^>]* (?:src|href)=["\']([^"\']+)["\']', page.text)
        assert sorted(urls) == [
            "/ui/static/swagger-ui/favicon-32x32.png",
            "/ui/static/swagger-ui/swagger-ui-bundle.js",
            "/ui/static/swagger-ui/swagger-ui-standalone-preset.js",
            "/ui/static/swagger-ui/swagger-ui.css",
        ]
    for url, kind, holds in (
        ("swagger-ui-bundle.js", "javascript", "SwaggerUIBundle"),
        ("swagger-ui-standalone-preset.js", "javascript", "SwaggerUIStandalonePreset"),
        ("swagger-ui.css", "text/css", ".swagger-ui"),
        ("LICENSE", "", "Apache License"),
    ):
        r = await client.get(f"/ui/static/swagger-ui/{url}")
        assert r.status_code == 200 and kind in r.headers["content-type"] and holds in r.text, url
    assert "\nopenapi: 3." in (await client.get("/schema/openapi.yaml")).text  # still served
