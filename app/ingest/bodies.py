"""Reading an ingest body: content type and encoding, the as-sent and decompressed size caps, gzip.

The body as sent (at most 10 MB) is read whole before the request takes a database connection (`receive_body`:
a client that pauses holds nothing but its own request, and app/request_bodies.py times it out). It is then
inflated piece by piece as it is parsed, with `decompressobj(...).decompress(data, max_length)` so that one
small input piece can never produce more than `OUT_CHUNK` bytes at once, and counted on both sides so a gzip
bomb stops at the decompressed cap: the decompressed body (up to 100 MB) is never held whole. Inflating is
ISA-L's (python-isal, the zlib API): about 3x faster than zlib's on log data, a tenth of the server's time per
event at ingest speed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from enum import Enum
from typing import Any, cast

from isal import isal_zlib
from litestar import Request

from app.errors import BeaconError
from app.ingest.limits import IngestLimits, size_text

OUT_CHUNK = 256 * 1024
# isal's stub declares `error` as an instance; at run time it is the exception class (IsalError).
_INFLATE_ERROR = cast(type[Exception], isal_zlib.error)


class Format(Enum):
    JSON = "application/json"
    NDJSON = "application/x-ndjson"


def body_format(content_type: str | None) -> Format:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    for fmt in Format:
        if media == fmt.value:
            return fmt
    shown = f"`{media}`" if media else "no Content-Type"
    raise BeaconError(
        "unsupported_media_type",
        f"Ingest accepts `application/json` (an array of objects) or `application/x-ndjson`, not {shown}.",
    )


def is_gzip(content_encoding: str | None) -> bool:
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return False
    if encoding in ("gzip", "x-gzip"):
        return True
    raise BeaconError(
        "unsupported_media_type", f"Ingest accepts `Content-Encoding: gzip` (or none), not `{content_encoding}`."
    )


def too_large(size_desc: str, limit: int) -> BeaconError:
    return BeaconError(
        "payload_too_large",
        f"The request body is {size_desc}, over the {size_text(limit)} limit ({limit:,} bytes) "
        "for a body as sent; send smaller batches.",
    )


def check_declared_length(content_length: str | None, limits: IngestLimits) -> None:
    """Refuse from Content-Length before reading anything, when the client declared one."""
    if content_length is None:
        return
    try:
        declared = int(content_length)
    except ValueError:
        raise BeaconError("invalid_parameter", "Content-Length is not a number.", param="Content-Length") from None
    if declared > limits.max_body_bytes:
        raise too_large(f"{declared:,} bytes", limits.max_body_bytes)


async def receive_body(stream: AsyncIterator[bytes], limits: IngestLimits) -> list[bytes]:
    """The body as sent, in the pieces it arrived in; 413 as soon as it runs past the as-sent cap."""
    pieces: list[bytes] = []
    received = 0
    async for piece in stream:
        if not piece:
            continue
        received += len(piece)
        if received > limits.max_body_bytes:
            raise too_large(f"more than {limits.max_body_bytes:,} bytes", limits.max_body_bytes)
        pieces.append(piece)
    return pieces


class BodyReader:
    """Yields the decompressed body in chunks; counts `processed` (decompressed bytes)."""

    def __init__(self, pieces: Sequence[bytes], *, gzip: bool, limits: IngestLimits) -> None:
        self._pieces = pieces
        self._gzip = gzip
        self._limits = limits
        self.received = sum(len(p) for p in pieces)
        self.processed = 0

    def _count(self, data: bytes) -> bytes:
        self.processed += len(data)
        if self.processed > self._limits.max_decompressed_bytes:
            cap = self._limits.max_decompressed_bytes
            raise BeaconError(
                "payload_too_large",
                f"The request body inflates to more than the {size_text(cap)} decompressed limit "
                f"({cap:,} bytes); nothing was stored. Send smaller batches.",
            )
        return data

    async def chunks(self) -> AsyncIterator[bytes]:
        inflater = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS) if self._gzip else None
        for piece in self._pieces:
            if inflater is None:
                yield self._count(piece)
                continue
            data = piece
            while True:
                if inflater.eof:  # a gzip stream may hold several members, one after another
                    inflater = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
                try:
                    out = inflater.decompress(data, OUT_CHUNK)
                except _INFLATE_ERROR as exc:
                    raise BeaconError("invalid_body", f"The body is not valid gzip data: {exc}.") from None
                if out:
                    yield self._count(out)
                data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
                if not data and (inflater.eof or len(out) < OUT_CHUNK):
                    break
        if inflater is not None and self.received and not inflater.eof:
            raise BeaconError("invalid_body", "The gzip body is truncated (it ends before its gzip trailer).")


async def read_body(request: Request[Any, Any, Any], *, gzip: bool, limits: IngestLimits) -> bytes:
    """The whole body, decompressed, within the as-sent and decompressed caps of `limits`.

    For the formats that are decoded whole (the shippers' protocols, app/shippers/): it is read here, as ingest's
    is (`receive_body`, bounded in time by app/request_bodies.py), before the request takes a database
    connection, so a slow client holds no connection while it sends.
    """
    check_declared_length(request.headers.get("content-length"), limits)
    reader = BodyReader(await receive_body(request.stream(), limits), gzip=gzip, limits=limits)
    return b"".join([chunk async for chunk in reader.chunks()])
