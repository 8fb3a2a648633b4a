"""The principals remembered for checks beside the work: least recently used dropped, expired never returned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.auth import Principal
from app.known_tokens import KnownTokens

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _who(name: str, expires_at: datetime | None = None) -> Principal:
    return Principal(token_id=name, scopes=frozenset({"query"}), datasets=None, expires_at=expires_at)


def test_the_least_recently_used_is_dropped_beyond_the_size() -> None:
    known = KnownTokens(size=2)
    known.put(b"a", _who("a"))
    known.put(b"b", _who("b"))
    assert known.get(b"a", NOW) == _who("a")  # a is now the most recently used
    known.put(b"c", _who("c"))
    assert known.get(b"b", NOW) is None
    assert [known.get(d, NOW) for d in (b"a", b"c")] == [_who("a"), _who("c")]


def test_an_expired_token_is_not_returned_and_is_forgotten() -> None:
    known = KnownTokens()
    known.put(b"soon", _who("soon", expires_at=NOW + timedelta(seconds=1)))
    assert known.get(b"soon", NOW) is not None
    assert known.get(b"soon", NOW + timedelta(seconds=1)) is None
    assert known.get(b"soon", NOW) is None  # dropped, not only hidden


def test_drop_forgets() -> None:
    known = KnownTokens()
    known.put(b"x", _who("x"))
    known.drop(b"x")
    known.drop(b"never-there")
    assert known.get(b"x", NOW) is None
