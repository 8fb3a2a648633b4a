"""What the sign-in page says the browser keeps is what it keeps: a random session id (and the session's CSRF
token) in an encrypted cookie, never the API token; docs/console.md says the same."""

from __future__ import annotations

import html
import re
from pathlib import Path

from litestar.middleware.session.client_side import ClientSideSessionBackend

from app.ui.session import COOKIE, session_config

DOCS = Path(__file__).resolve().parents[3] / "docs" / "console.md"


async def test_the_sign_in_page_says_what_the_cookie_holds(client, settings, admin_token):
    page = (await client.get("/ui/login")).text
    said = " ".join(html.unescape(re.search(r'id="what-is-kept">(.*?)</p>', page, re.S).group(1)).split())
    assert "keeps only the session's random id, in an encrypted, HttpOnly cookie, never the token" in said
    assert "random id in an encrypted, signed, HttpOnly cookie" in " ".join(DOCS.read_text().split())

    await client.post("/ui/login", data={"token": admin_token}, follow_redirects=False)
    backend = ClientSideSessionBackend(config=session_config(settings.with_secret_key()))
    kept = backend.load_data([client.cookies[COOKIE].encode()])
    assert set(kept) == {"sid", "csrf"} and admin_token not in kept.values()
    assert len(kept["sid"]) >= 40  # 32 random bytes, URL-safe base64
