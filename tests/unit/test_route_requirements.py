"""Every route says what it needs of a token in one way (`opt=requires(...)`, app/access.py), checked by one guard:
the API's routes by the auth middleware, the console's pages by the console's guard, which lets through only what
declares nothing. So a console page that forgot to declare would be open to any signed-in token: none may."""

from __future__ import annotations

from pathlib import Path

from litestar.handlers import HTTPRouteHandler

from app.access import REQUIREMENT, Requirement, admit, may, requires
from app.asgi import create_app
from app.auth import Principal
from app.errors import BeaconError
from app.settings import Settings

OPEN_PAGES = {"/ui/login", "/ui/logout", "/ui"}  # signing in and out; the console's home redirects by the token


def _handlers(tmp_path: Path) -> list[tuple[str, HTTPRouteHandler]]:
    app = create_app(Settings(database_url="postgresql://127.0.0.1/unused", secret_key="k", data_dir=tmp_path))
    return [
        (route.path, handler)
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        # Not the OPTIONS handlers Litestar adds to every path (they answer with the methods allowed).
        if isinstance(handler, HTTPRouteHandler) and handler.http_methods != {"OPTIONS"}
    ]


def test_every_console_page_declares_what_it_needs(tmp_path):
    pages = [(path, h) for path, h in _handlers(tmp_path) if path.startswith("/ui") and "/static" not in path]
    assert len(pages) > 15
    undeclared = {path for path, h in pages if REQUIREMENT not in h.opt} - OPEN_PAGES
    assert not undeclared


def test_no_route_declares_a_scope_the_old_way(tmp_path):
    for path, handler in _handlers(tmp_path):
        assert "scope" not in handler.opt and "shared" not in handler.opt, path
        assert isinstance(handler.opt.get(REQUIREMENT, Requirement(())), Requirement), path


def test_the_guard_and_its_question_agree():
    limited = Principal("tok_l", frozenset({"notifiers:write"}), ("web",))
    unlimited = Principal("tok_u", frozenset({"notifiers:write"}), None)
    change = requires("notifiers:write", unlimited="notifiers")
    for who, allowed in ((limited, False), (unlimited, True)):
        assert may(who, change) is allowed
        try:
            admit(who, change)
        except BeaconError as exc:
            assert not allowed and exc.code == "insufficient_scope"
            assert exc.message == "A token limited to datasets cannot change notifiers."
    assert not may(unlimited, requires("notifiers:write", "routing:write"))
    assert not may(unlimited, {})  # a route that declares nothing needs `*`
    assert may(Principal("tok_a", frozenset({"*"}), None), {})
