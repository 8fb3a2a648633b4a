"""Where signing in may lead back to (only the console's own pages), and what the navigation offers a token."""

from __future__ import annotations

import pytest

from app.auth import Principal
from app.ui.nav import home_of, nav_for, safe_next, sign_in_url


@pytest.mark.parametrize(
    "target", ["/ui/monitors/mon_1", "/ui/datasets/web?range=1h&fn=avg", "/ui/datasets/a%2Fb", "/ui/notifiers#n_1"]
)
def test_console_pages_are_kept(target):
    assert safe_next(target) == target


@pytest.mark.parametrize(
    "target",
    [
        None,
        "",
        "https://evil.example/ui/x",
        "//evil.example/ui/x",
        "/\\evil.example/ui/x",
        "/ui\\..\\x",
        "http:/ui/x",
        "javascript:alert(1)",
        "/v1/tokens",
        "/ui",
        "/ui/login?next=/ui/x",
        "/ui/x\r\nSet-Cookie: a=b",
        "/ui/x y",
        "/ui/" + "a" * 2001,
    ],
)
def test_anything_else_is_dropped(target):
    assert safe_next(target) is None


def test_the_sign_in_address_carries_the_page_encoded():
    assert sign_in_url("/ui/datasets/web?range=1h") == "/ui/login?next=%2Fui%2Fdatasets%2Fweb%3Frange%3D1h"
    assert sign_in_url("//evil.example") == "/ui/login"


def test_navigation_follows_the_scopes():
    only_monitors = Principal("t", frozenset({"monitors:read", "query"}), None)
    assert [i.key for i in nav_for(only_monitors)] == ["monitors"]
    assert home_of(only_monitors) == "/ui/monitors"
    admin = Principal("t", frozenset({"*"}), None)
    assert [i.key for i in nav_for(admin)] == ["datasets", "monitors", "notifiers", "alerts", "silences", "routing"]
    assert nav_for(None) == []
    assert home_of(Principal("t", frozenset({"ingest"}), None)) == "/ui/datasets"  # which says what is missing
