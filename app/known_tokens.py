"""Principals of tokens that passed a check lately, for routes that check the token beside their work.

A route that opts in (`opt={"token_check": "beside"}`, only read-only ones: /v1/query) starts its work with
the principal remembered here while the token is checked again in the database, and sends nothing until
that check has passed: a revoked or expired token never gets an answer other than 401, and the check's
round trip is off the request's path (0.35 ms less per query in bench/query.py, measured side by side).
Every other route checks the token before its work, and for a token known here counts the request against the
token's rate limit (keyed by the token's id, fixed for its hash) beside that check rather than after it (0.9 ms
less per `POST /api/v2/alerts`: bench/alerts_post.py). The entries are only a hint, keyed by the token's hash
(never its text), the least recently used dropped beyond `size`.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.auth import Principal


class KnownTokens:
    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, Principal] = OrderedDict()

    def get(self, digest: bytes, now: datetime) -> Principal | None:
        who = self._entries.get(digest)
        if who is None:
            return None
        if who.expires_at is not None and who.expires_at <= now:
            del self._entries[digest]
            return None
        self._entries.move_to_end(digest)
        return who

    def put(self, digest: bytes, who: Principal) -> None:
        self._entries[digest] = who
        self._entries.move_to_end(digest)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def drop(self, digest: bytes) -> None:
        self._entries.pop(digest, None)
