"""Reading bodies: gzip (several members, truncated, corrupt), the as-sent and decompressed caps."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator

import pytest

from app.errors import BeaconError
from app.ingest.bodies import OUT_CHUNK, BodyReader, body_format, check_declared_length, is_gzip, receive_body
from app.ingest.limits import IngestLimits


async def stream(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


async def read_all(data: bytes, *, gz: bool, limits: IngestLimits | None = None) -> tuple[bytes, BodyReader]:
    limits = limits or IngestLimits()
    reader = BodyReader(await receive_body(stream(data), limits), gzip=gz, limits=limits)
    out = bytearray()
    async for chunk in reader.chunks():
        assert len(chunk) <= max(OUT_CHUNK, 1000)
        out += chunk
    return bytes(out), reader


async def test_gzip_round_trip_and_counts() -> None:
    text = b'{"a": 1}\n' * 100_000
    out, reader = await read_all(gzip.compress(text), gz=True)
    assert out == text
    assert reader.processed == len(text)
    assert reader.received < len(text) // 10


async def test_several_gzip_members() -> None:
    out, _ = await read_all(gzip.compress(b"one\n") + gzip.compress(b"two\n"), gz=True)
    assert out == b"one\ntwo\n"


async def test_truncated_and_corrupt_gzip() -> None:
    data = gzip.compress(b"x" * 10_000)
    with pytest.raises(BeaconError, match="truncated") as err:
        await read_all(data[:-10], gz=True)
    assert err.value.code == "invalid_body"
    with pytest.raises(BeaconError, match="not valid gzip") as err:
        await read_all(b"this is not gzip at all", gz=True)
    assert err.value.code == "invalid_body"


async def test_gzip_bomb_stops_at_the_cap() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = b"".join(compressor.compress(b"\0" * (1 << 20)) for _ in range(64)) + compressor.flush()
    limits = IngestLimits(max_decompressed_bytes=8 * 1024 * 1024)
    reader = BodyReader(await receive_body(stream(bomb), limits), gzip=True, limits=limits)
    with pytest.raises(BeaconError, match="decompressed limit") as err:
        async for _ in reader.chunks():
            pass
    assert err.value.code == "payload_too_large"
    assert reader.processed <= limits.max_decompressed_bytes + OUT_CHUNK  # never inflated much past the cap


async def test_as_sent_cap_while_receiving() -> None:
    limits = IngestLimits(max_body_bytes=5000)
    with pytest.raises(BeaconError, match="over the 5,000 bytes limit") as err:
        await read_all(b"x" * 6000, gz=False, limits=limits)
    assert err.value.code == "payload_too_large"


def test_declared_length_is_refused_before_reading() -> None:
    with pytest.raises(BeaconError, match=r"12,000,000 bytes, over the 10 MB limit") as err:
        check_declared_length("12000000", IngestLimits())
    assert err.value.code == "payload_too_large"
    check_declared_length(str(10 * 1024 * 1024), IngestLimits())


@pytest.mark.parametrize("value", ["text/plain", "application/xml", None, "multipart/form-data"])
def test_other_content_types(value: str | None) -> None:
    with pytest.raises(BeaconError) as err:
        body_format(value)
    assert err.value.code == "unsupported_media_type"


def test_content_type_parameters_and_encodings() -> None:
    assert body_format("application/json; charset=utf-8").value == "application/json"
    assert body_format("Application/X-NDJSON").value == "application/x-ndjson"
    assert is_gzip("gzip") and is_gzip("x-gzip") and not is_gzip("identity") and not is_gzip(None)
    for bad in ("br", "deflate", "gzip, br"):
        with pytest.raises(BeaconError):
            is_gzip(bad)
