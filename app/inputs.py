"""Text no route accepts: NUL characters, and request bodies that are not UTF-8.

PostgreSQL's text cannot hold U+0000, so a NUL that reached a statement as a value or a lookup key failed it
with a 500. Rather than guard each field, `refuse_unstorable_text` runs as the app's `before_request` hook:
once per request, after routing and authentication, before Litestar parses the handler's parameters and
body. It sees every path parameter, every query parameter, and the JSON or form body of every route that
takes one.

- A NUL in the path (so in a path parameter): 404 (an id or name with a NUL names nothing that can exist).
- A NUL in a query parameter (name or value): 400 `invalid_parameter` naming it.
- A NUL in a JSON body (any string or key, at any depth): 400 `invalid_field` naming its dotted path.
- A NUL in a console form (URL-encoded, `%00`): 400 `invalid_field` naming the field.
- A JSON body that is not UTF-8: 400 `invalid_json` (msgspec raised UnicodeDecodeError, which became a 500).
- A boolean or a number given as another JSON type (`"continue": 0`, `"limit": "5"`): 400 `invalid_field` naming
  it (app/json_types.py: Litestar's conversion would take it, where the OpenAPI document says it is invalid).
- A JSON body nested deeper than MAX_JSON_DEPTH arrays and objects: 400 `invalid_json` (decoders recurse per
  level: 970 `[` raised RecursionError, a 500, on every JSON route; no route takes anything near that deep).

Invalid UTF-8 in the path or the query string needs nothing here: the server and Litestar decode those with
replacement characters. Lone surrogates cannot arrive either: msgspec refuses `"\\ud800"` as malformed JSON.
The ingest route reads its own body (NUL and invalid UTF-8 fail one event there) and is not checked here; the
deploy tools' routes read theirs too and check it with `check_json_body` (app/deploymarkers/common.py).
"""

from __future__ import annotations

import re
from functools import cache
from itertools import accumulate
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import msgspec.inspect as mi
from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.handlers import HTTPRouteHandler
from litestar.params import BodyKwarg

from app import json_types
from app.errors import BeaconError

NUL = "\x00"
MAX_JSON_DEPTH = 256
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # brackets inside a string do not nest
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_ESCAPED_NUL = b"\\u0000"  # the only way valid JSON can carry U+0000 (a raw 0x00 byte is malformed JSON)


async def refuse_unstorable_text(request: Request[Any, Any, Any]) -> None:
    # Scans of the raw path and query string first: nearly every request passes them without parsing anything.
    if NUL in request.scope["path"]:
        raise BeaconError("not_found", "No such resource: the path holds a NUL character.")
    query = request.scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        for name, value in request.query_params.multi_items():
            if NUL in name or NUL in value:
                raise BeaconError(
                    "invalid_parameter",
                    f"`{name}` contains a NUL character (U+0000), which is not allowed.",
                    param=name,
                )
    kind = _body_kind(request.route_handler)
    if kind == "json":
        body = await request.body()
        _check_json_body(body)
        _check_json_types(request.route_handler, body)
    elif kind == "form":
        _check_form_body(await request.body())


def _body_kind(handler: HTTPRouteHandler) -> str | None:
    """ "json" or "form" for a handler that takes a body (`data`) of that encoding; None otherwise. Not cached by
    the handler: each app has copies of its handlers (and they lead to their app), so such a cache kept every app
    built in the process alive (the test suite builds hundreds; each full pass of the collector walked them all).
    Litestar keeps the handler's parsed signature, so this is a dictionary look-up and two comparisons."""
    data = handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return None
    kwarg = data.kwarg_definition
    if not isinstance(kwarg, BodyKwarg) or kwarg.media_type == RequestEncodingType.JSON:
        return "json"
    return "form" if kwarg.media_type == RequestEncodingType.URL_ENCODED else None


@cache
def _body_type(annotation: Any) -> mi.Type | None:
    """The body type as msgspec describes it, when it holds a boolean or a number (app/json_types.py). Cached by
    the handler's annotation, the same in every app's copy of the handler (see `_body_kind`)."""
    found = json_types.info(annotation)
    return found if found is not None and json_types.holds_typed(found) else None


def _check_json_types(handler: HTTPRouteHandler, body: bytes) -> None:
    """400 for a boolean or a number given as another JSON type (`"continue": 0`), which Litestar would convert."""
    body_type = _body_type(handler.parsed_fn_signature.parameters["data"].annotation)
    if body_type is None or not body:
        return
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return  # malformed: Litestar's decoding answers invalid_json
    found = json_types.wrong_type(data, body_type)
    if found is not None:
        path, problem = found
        where = f"`{path}`" if path else "The request body"
        raise BeaconError("invalid_field", f"{where} {problem}.", param=path or None)


def _check_form_body(body: bytes) -> None:
    if b"%00" not in body and b"\x00" not in body:
        return
    for name, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        if NUL in name or NUL in value:
            raise BeaconError(
                "invalid_field", f"`{name}` contains a NUL character (U+0000), which is not allowed.", param=name
            )


def check_json_body(body: bytes) -> None:
    """400 for a JSON body that is not UTF-8 or holds a NUL (for routes that read their body themselves)."""
    _check_json_body(body)


def _check_json_body(body: bytes) -> None:
    # Both tests are scans of bytes: a body that passes them (nearly all) is not decoded twice.
    if not body.isascii():
        try:
            body.decode()
        except UnicodeDecodeError as exc:
            raise BeaconError("invalid_json", f"The request body is not valid UTF-8 (at byte {exc.start}).") from None
    if too_deep(body, MAX_JSON_DEPTH):
        raise BeaconError(
            "invalid_json", f"The request body is nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects."
        )
    if _ESCAPED_NUL not in body:
        return
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return  # malformed: Litestar's decoding answers invalid_json
    path = nul_path(data)
    if path is not None:
        where = f"`{path}`" if path else "The request body"
        raise BeaconError(
            "invalid_field", f"{where} contains a NUL character (U+0000), which is not allowed.", param=path or None
        )


def too_deep(body: bytes, limit: int) -> bool:
    """Whether the JSON text nests arrays and objects deeper than `limit`. Counting the brackets first is enough
    for nearly every body; one with more than `limit` of them has its strings taken out and its brackets summed
    (C loops but for the last step: 10,000 alerts, 750 kB, in about 9 ms)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    # Outside the strings: every other piece between quotes, when no quote is escaped (nearly always).
    outside = _STRING.sub(b"", body) if b'\\"' in body else b"".join(body.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets))) > limit


def nul_path(value: Any, path: str = "") -> str | None:
    """The dotted path (list positions left out, as in other `param`s) of the first string or key holding a
    NUL in a decoded JSON value; None when there is none."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else key
            if NUL in key:
                return inner
            found = nul_path(item, inner)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = nul_path(item, path)
            if found is not None:
                return found
    return None
