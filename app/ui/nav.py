"""The console's navigation: which pages a token can open, where signing in leads, and where it may come back.

The navigation offers only the pages the signed-in token has the scope for (a link that answers "not allowed"
is a dead end), and the console's home is the first of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from app.auth import Principal

MAX_NEXT = 2000  # a longer "come back to" address is not one the console made


@dataclass(frozen=True)
class NavItem:
    key: str
    label: str
    href: str
    scope: str  # the scope the page needs


NAV: tuple[NavItem, ...] = (
    NavItem("datasets", "Datasets", "/ui/datasets", "datasets:read"),
    NavItem("monitors", "Monitors", "/ui/monitors", "monitors:read"),
    NavItem("notifiers", "Notifiers", "/ui/notifiers", "notifiers:read"),
    NavItem("alerts", "Alerts", "/ui/alerts", "alerts:read"),
    NavItem("silences", "Silences", "/ui/silences", "silences:read"),
    NavItem("routing", "Routing", "/ui/routing", "routing:read"),
)


def nav_for(who: Principal | None) -> list[NavItem]:
    return [item for item in NAV if who is not None and who.has_scope(item.scope)]


def home_of(who: Principal) -> str:
    """The first page the token can open (the datasets page, which explains what is missing, when none)."""
    allowed = nav_for(who)
    return allowed[0].href if allowed else NAV[0].href


def safe_next(value: str | None) -> str | None:
    """`value` when it is a page of this console (`/ui/...`, a relative path with no host), else None: the
    sign-in form must not become a redirect to another site (`//evil.example`, `/\\evil.example`, `https://…`)."""
    if not value or len(value) > MAX_NEXT or any(ord(c) < 0x21 or c in "\\\x7f" for c in value):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui/") or parts.path.startswith("/ui/login"):
        return None
    return value


def sign_in_url(next_page: str | None) -> str:
    target = safe_next(next_page)
    return f"/ui/login?next={quote(target, safe='')}" if target else "/ui/login"
