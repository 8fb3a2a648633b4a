"""Building ingest batches: gzip NDJSON of at most 10,000 events and at most 10 MB as sent.

Pure (no I/O), shared by the sync and async ingesters. Events are compressed as they are added. The exact
compressed size is only known at a flush point, so the builder keeps an upper bound (bytes emitted so far
plus deflate's worst case for the input not yet emitted) and forces a sync flush, which makes the size
exact, only when that bound says the next event might not fit. A batch therefore never exceeds the limit,
and ends within one event of it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

MAX_EVENTS = 10_000
MAX_BYTES = 10_000_000  # the service's body limit is 10 MB as sent; stay below it on either reading of "MB"
_GZIP_OVERHEAD = 18 + 16  # header + trailer, and the final empty block
_FEED_CHUNK = 64 * 1024  # one compressor call per this much input: per-event calls cost a third of the time


def _deflate_bound(n: int) -> int:
    """zlib's conservative worst case for n bytes of input (stored blocks for incompressible data)."""
    return n + (n >> 3) + (n >> 6) + 64


@dataclass(frozen=True)
class Batch:
    events: list[Any]  # as the caller added them
    body: bytes  # gzip NDJSON
    first_index: int  # position of events[0] among all events added to the builder
    raw_bytes: int  # NDJSON size before compression


class BatchBuilder:
    def __init__(
        self,
        *,
        max_events: int = MAX_EVENTS,
        max_bytes: int = MAX_BYTES,
        level: int = 6,
        encode: Callable[[Any], bytes] = msgspec.json.Encoder().encode,
    ) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.level = level
        self._encode = encode
        self._added = 0
        self._reset()

    def _reset(self) -> None:
        self._zip = zlib.compressobj(self.level, zlib.DEFLATED, 31)  # 31: gzip framing
        self._chunks: list[bytes] = []
        self._emitted = 0  # compressed bytes produced so far
        self._pending = 0  # input bytes since the last flush point (their output size unknown)
        self._lines: list[bytes] = []  # input not handed to the compressor yet: fed in chunks, not per event
        self._unfed = 0
        self._raw = 0
        self._events: list[Any] = []
        self._first = self._added

    def __len__(self) -> int:
        return len(self._events)

    @property
    def added(self) -> int:
        """How many events were added in all (sealed batches included)."""
        return self._added

    def add(self, event: Any) -> Batch | None:
        """Add one event; returns a sealed batch when one is full (the event may start the next batch).

        Raises ValueError, changing nothing, for an event that cannot be encoded or that alone exceeds the
        size limit once compressed.
        """
        line = self._encode(event) + b"\n"
        if _deflate_bound(len(line)) + _GZIP_OVERHEAD > self.max_bytes and not self._alone_fits(line):
            raise ValueError(
                f"an event of {len(line):,} bytes does not fit in a request of {self.max_bytes:,} bytes even compressed"
            )
        sealed = None if self._fits(len(line)) else self.seal()
        self._write(line)
        self._events.append(event)
        self._added += 1
        if len(self._events) >= self.max_events:
            sealed = sealed or self.seal()
        return sealed

    def seal(self) -> Batch | None:
        """The events added since the last batch, as a batch (None when there are none)."""
        if not self._events:
            return None
        self._feed()
        self._chunks.append(self._zip.flush(zlib.Z_FINISH))
        batch = Batch(events=self._events, body=b"".join(self._chunks), first_index=self._first, raw_bytes=self._raw)
        self._reset()
        return batch

    def _alone_fits(self, line: bytes) -> bool:
        zip_ = zlib.compressobj(self.level, zlib.DEFLATED, 31)
        return len(zip_.compress(line)) + len(zip_.flush()) + _GZIP_OVERHEAD <= self.max_bytes

    def _fits(self, size: int) -> bool:
        if not self._events:
            return True
        room = self.max_bytes - _GZIP_OVERHEAD - self._emitted
        if _deflate_bound(self._pending + size) <= room:
            return True
        if self._pending:
            self._feed()
            self._emit(self._zip.flush(zlib.Z_SYNC_FLUSH))  # now `_emitted` is exact
            self._pending = 0
            room = self.max_bytes - _GZIP_OVERHEAD - self._emitted
        return _deflate_bound(size) <= room

    def _write(self, line: bytes) -> None:
        self._raw += len(line)
        self._pending += len(line)
        self._lines.append(line)
        self._unfed += len(line)
        if self._unfed >= _FEED_CHUNK:
            self._feed()

    def _feed(self) -> None:
        if self._lines:
            out = self._zip.compress(b"".join(self._lines))
            self._lines.clear()
            self._unfed = 0
            if out:
                self._emit(out)

    def _emit(self, out: bytes) -> None:
        self._chunks.append(out)
        self._emitted += len(out)
