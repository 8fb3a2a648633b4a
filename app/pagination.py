"""Keyset pagination with signed, opaque cursors, used by every list endpoint.

A cursor holds the sort key of the last item of a page, the list it belongs to (name and filters) and when
it was issued, signed with HMAC-SHA256 under the secret key. Keyset (not offset) paging means a walk never
repeats or skips an item while others are inserted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Generic, TypeVar

import msgspec
from litestar.params import Parameter
from sqlalchemy import Select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from app.errors import BeaconError

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_LIMIT = 25
MAX_LIMIT = 100
CURSOR_TTL_SECONDS = 24 * 3600
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# The `limit` query parameter of every list endpoint; range-checked by `check_limit` so the error is ours.
Limit = Annotated[int | None, Parameter(description="Page size, 1 to 100 (default 25).")]


class ListEnvelope(msgspec.Struct, Generic[T]):
    data: list[T]
    has_more: bool
    next_cursor: str | None
    object: str = "list"


def check_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise BeaconError(
            "invalid_parameter", f"`limit` must be between 1 and {MAX_LIMIT}, got {limit}.", param="limit"
        )
    return limit


class _Payload(msgspec.Struct, array_like=True):
    scope: str  # list name and filters: a cursor only fits the list it came from
    issued: int
    key: list[Any]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _encode_value(value: Any) -> Any:
    # Datetimes travel as microseconds since the epoch, tagged, so they come back exact.
    if isinstance(value, datetime):
        return {"t": (value - _EPOCH) // timedelta(microseconds=1)}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"t"}:
        return _EPOCH + timedelta(microseconds=value["t"])
    return value


class CursorCodec:
    def __init__(self, secret_key: str) -> None:
        self._key = hashlib.sha256(b"beacon-cursor:" + secret_key.encode()).digest()

    def _sign(self, data: bytes) -> bytes:
        return hmac.new(self._key, data, hashlib.sha256).digest()[:16]

    def encode(self, scope: str, key: Sequence[Any]) -> str:
        data = msgspec.msgpack.encode(_Payload(scope, int(time.time()), [_encode_value(v) for v in key]))
        return f"{_b64(data)}.{_b64(self._sign(data))}"

    def decode(self, scope: str, cursor: str) -> list[Any]:
        invalid = BeaconError(
            "invalid_cursor",
            "The cursor is not valid for this list; start again without `cursor`.",
            param="cursor",
        )
        try:
            data_part, sig_part = cursor.split(".", 1)
            data, sig = _unb64(data_part), _unb64(sig_part)
        except (ValueError, TypeError):
            raise invalid from None
        if not hmac.compare_digest(sig, self._sign(data)):
            raise invalid
        try:
            payload = msgspec.msgpack.decode(data, type=_Payload)
        except msgspec.DecodeError:
            raise invalid from None
        if payload.scope != scope:
            raise invalid
        if time.time() - payload.issued > CURSOR_TTL_SECONDS:
            raise BeaconError("invalid_cursor", "The cursor has expired; start again without `cursor`.", param="cursor")
        return [_decode_value(v) for v in payload.key]


async def paginate(
    session: AsyncSession,
    stmt: Select[Any],
    *,
    codec: CursorCodec,
    scope: str,
    keys: Sequence[InstrumentedAttribute[Any]],
    render: Callable[[Any], R],
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[R]:
    """One page of `stmt` (whose rows are ORM objects), newest first by `keys` (mapped columns, all descending)."""
    size = check_limit(limit)
    if cursor:
        after = codec.decode(scope, cursor)
        if len(after) != len(keys):
            raise BeaconError("invalid_cursor", "The cursor is not valid for this list.", param="cursor")
        stmt = stmt.where(tuple_(*keys) < tuple_(*after))
    stmt = stmt.order_by(*(k.desc() for k in keys)).limit(size + 1)
    rows = list((await session.execute(stmt)).scalars())
    has_more = len(rows) > size
    rows = rows[:size]
    next_cursor = codec.encode(scope, [getattr(rows[-1], k.key) for k in keys]) if has_more and rows else None
    return ListEnvelope(data=[render(r) for r in rows], has_more=has_more, next_cursor=next_cursor)
