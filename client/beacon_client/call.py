"""Sans-IO requests: an endpoint is a function returning a `Call[T]` (what to send and how to read the answer).

Nothing here does I/O. `binding.py` turns each endpoint function into a method of `Client` (returns T) and
of `AsyncClient` (returns an awaitable of T); the two clients differ only in how they send.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from beacon_client.errors import BeaconAPIError

T = TypeVar("T")

ParamValue = str | int | float | bool | datetime | Iterable[str] | None
TimeArg = datetime | str  # a datetime with a timezone, or text the service reads (RFC 3339, `now-1h`)

_encoder = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Mapping[str, str] | tuple[tuple[str, str], ...] = field(default_factory=dict)  # pairs: a repeated name
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


def segment(value: str) -> str:
    """One path segment, escaped: an id or name never changes the route."""
    return quote(value, safe="")


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str | int | float):
        return str(value)
    return ",".join(names(value))


def names(value: str | Iterable[str]) -> list[str]:
    """One name or several: a lone string is one name, never its characters."""
    return [value] if isinstance(value, str) else list(value)


def query_string(**values: ParamValue) -> dict[str, str]:
    """Query-string parameters, leaving out the ones not given (None)."""
    return {name: _param(value) for name, value in values.items() if value is not None}


def json_body(**fields: Any) -> tuple[bytes, dict[str, str]]:
    """A JSON body of the fields given; `msgspec.UNSET` leaves a field out (None sends `null`)."""
    body = {name: value for name, value in fields.items() if value is not msgspec.UNSET}
    return _encoder.encode(body), {"Content-Type": "application/json"}


def json_call(method: str, path: str, parse: Callable[[httpx.Response], T], **fields: Any) -> Call[T]:
    content, headers = json_body(**fields)
    return Call(method, path, parse, content=content, headers=headers)


def gzip_ndjson(events: Iterable[Any]) -> bytes:
    return gzip.compress(b"".join(_encoder.encode(e) + b"\n" for e in events), compresslevel=6)


_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def decode(kind: type[T]) -> Callable[[httpx.Response], T]:
    """A parser of a 2xx response body into `kind` (extra fields the service adds are ignored)."""
    decoder: msgspec.json.Decoder[T] | None = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)

    def parse(response: httpx.Response) -> T:
        return decoder.decode(response.content)

    return parse


def no_content(response: httpx.Response) -> None:
    return None


class _ErrorFields(msgspec.Struct):
    type: str
    code: str
    message: str
    request_id: str | None = None
    param: str | None = None
    doc_url: str | None = None


class _Envelope(msgspec.Struct):
    error: _ErrorFields


def api_error(response: httpx.Response, attempts: int = 1) -> BeaconAPIError:
    """The exception for a non-2xx response: its envelope, or what can be said without one (e.g. a proxy page)."""
    headers = {k.lower(): v for k, v in response.headers.items()}
    try:
        err = msgspec.json.decode(response.content, type=_Envelope).error
        envelope = msgspec.json.decode(response.content, type=dict[str, Any])
    except msgspec.DecodeError:
        text = response.content.decode("utf-8", "replace").strip()
        return BeaconAPIError(
            status=response.status_code,
            type="api_error",
            code=f"http_{response.status_code}",
            message=(text[:300] or response.reason_phrase or "no body"),
            request_id=headers.get("x-request-id"),
            headers=headers,
            attempts=attempts,
        )
    return BeaconAPIError(
        status=response.status_code,
        type=err.type,
        code=err.code,
        message=err.message,
        request_id=err.request_id or headers.get("x-request-id"),
        param=err.param,
        doc_url=err.doc_url,
        envelope=envelope,
        headers=headers,
        attempts=attempts,
    )
