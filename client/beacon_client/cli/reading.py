"""Events for `beacon ingest`: NDJSON or a JSON array, from a file or stdin, gzip-compressed or not."""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, cast

import msgspec

from beacon_client.cli.status_line import StatusLine


class SourceError(Exception):
    """The input cannot be read as events at all; nothing was sent."""


@dataclass(frozen=True)
class BadLine:
    position: int
    error: str


@dataclass
class EventSource:
    """Iterates (position, event): position is the line number (NDJSON) or the item number (JSON array)."""

    path: str
    unit: str = "line"
    bad: list[BadLine] = field(default_factory=list)  # NDJSON lines that are not JSON: never sent
    size: int | None = None  # bytes in the input (as stored, gzip or not) when it is a regular file
    _raw: IO[bytes] | None = None

    def bytes_read(self) -> int | None:
        """How far into the input reading has got (compressed bytes for gzip); None for a pipe."""
        if self._raw is None or self.size is None:
            return None
        if self._raw.closed:  # read to the end
            return self.size
        try:
            return min(self._raw.tell(), self.size)
        except (OSError, ValueError):
            return None

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        raw: IO[bytes] = sys.stdin.buffer if self.path == "-" else open(self.path, "rb")
        self._raw = raw
        try:
            info = os.fstat(raw.fileno())
            self.size = info.st_size if stat.S_ISREG(info.st_mode) else None
        except (OSError, ValueError):
            self.size = None
        try:
            head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
            stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw)) if head == b"\x1f\x8b" else raw
            first = True
            for number, line in enumerate(stream, start=1):
                text = line.strip()
                if not text:
                    continue
                if first and text[:1] == b"[":
                    yield from self._array(text + stream.read())
                    return
                first = False
                try:
                    yield number, msgspec.json.decode(text)
                except msgspec.DecodeError as exc:
                    self.bad.append(BadLine(number, str(exc)))
        except (OSError, EOFError, zlib.error) as exc:
            raise SourceError(f"cannot read {self.path}: {exc}") from exc
        finally:
            if raw is not sys.stdin.buffer:
                raw.close()

    def _array(self, data: bytes) -> Iterator[tuple[int, Any]]:
        self.unit = "item"
        try:
            items = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            raise SourceError(f"{self.path} is not a JSON array of events: {exc}") from exc
        if not isinstance(items, list):
            raise SourceError(f"{self.path}: expected a JSON array of events")
        yield from enumerate(items, start=1)


def read_events(path: str) -> EventSource:
    return EventSource(path)


class IngestProgress(StatusLine):
    """The ingest's status line. With the input's size known (a file, or stdin redirected from one) it is a bar with
    the percentage read, the rate and the time left; from a pipe, the counts and the rate.
    """

    BAR = 24

    def update(
        self,
        read: int,
        ingested: int,
        sent_bytes: int,
        *,
        done_bytes: int | None = None,
        total_bytes: int | None = None,
        force: bool = False,
    ) -> None:
        seconds = self.due(force=force)
        if seconds is not None:
            self.show(self.line(seconds, read, ingested, sent_bytes, done_bytes, total_bytes))

    @classmethod
    def line(
        cls,
        seconds: float,
        read: int,
        ingested: int,
        sent_bytes: int,
        done_bytes: int | None = None,
        total_bytes: int | None = None,
    ) -> str:
        seconds = max(seconds, 1e-6)
        rate = f"{read / seconds:,.0f} events/s"
        if done_bytes is None or not total_bytes:
            return f"{read:,} events read, {ingested:,} ingested, {rate}, {sent_bytes / 1e6:,.1f} MB sent "
        share = min(done_bytes / total_bytes, 1.0)
        filled = round(share * cls.BAR)
        left = (total_bytes - done_bytes) / (done_bytes / seconds) if done_bytes else None
        eta = "--:--" if left is None else f"{int(left) // 60}:{int(left) % 60:02d}"
        return (
            f"{share:4.0%} [{'#' * filled}{'.' * (cls.BAR - filled)}] {done_bytes / 1e6:,.1f}/{total_bytes / 1e6:,.1f}"
            f" MB, {read:,} events read, {ingested:,} ingested, {rate}, ETA {eta} "
        )
