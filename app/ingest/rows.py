"""Decoded events -> binary COPY rows: the per-event hot loop of ingestion.

For each event: check it is an object within the size bound, take out its timestamp, flatten it (skipped
when nothing in it is an object), note its shape (field names and value types) for field discovery, encode
the rest as JSON, and append one binary COPY row. Rows collect into chunks that the service writes with one
`COPY` each, so the memory held is one chunk's bytes, never the whole request's Python objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from app.ingest import copyfmt
from app.ingest.flatten import JSON_TYPES, TooDeep, flatten, has_nul
from app.ingest.limits import size_text
from app.ingest.timestamps import DAY_US, BadTimestamp, TimeReader

MAX_FAILURES_SHOWN = 10
_MISSING: Any = object()

Shape = tuple[tuple[str, ...], tuple[type, ...]]


class _Element:
    """Stand-in type for the elements of a JSON array, so that the decoder hands each one to a hook."""


_ELEMENT = _Element()


class TooManyEvents(Exception):  # not a ValueError: msgspec would turn that into a validation error
    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} events")
        self.limit = limit


class Failure(msgspec.Struct):
    index: int
    error: str


class RowBuilder:
    def __init__(
        self,
        *,
        dataset_id: int,
        arrival_us: int,
        timestamp_field: str,
        read_time: TimeReader,
        max_event_bytes: int,
        max_array_events: int = 10_000,
    ) -> None:
        self.dataset_id = dataset_id
        self.arrival_us = arrival_us
        self.timestamp_field = timestamp_field
        self.read_time = read_time
        self.max_event_bytes = max_event_bytes
        self.max_array_events = max_array_events
        self.index = 0  # index of the next event in the request (blank NDJSON lines do not count)
        self.failed = 0
        self.failures: list[Failure] = []
        self.shapes: set[Shape] = set()
        self.rows = 0  # rows in the current chunk
        self.chunk_bytes = 0
        self.chunk_days: set[int] = set()
        self._parts: list[bytes] = []
        self._decode = msgspec.json.Decoder().decode
        self._encode = msgspec.json.Encoder().encode

    # --- failures ----------------------------------------------------------------------------------------

    def fail(self, index: int, error: str) -> None:
        self.failed += 1
        if len(self.failures) < MAX_FAILURES_SHOWN:
            self.failures.append(Failure(index=index, error=error))

    def fail_next(self, error: str) -> None:
        """The next event is bad before it could even be read (a line over the size bound)."""
        self.fail(self.index, error)
        self.index += 1

    # --- input -------------------------------------------------------------------------------------------

    def add_lines(self, lines: Iterable[bytes]) -> None:
        """NDJSON lines (without their newline); blank lines are skipped and not counted."""
        decode = self._decode
        limit = self.max_event_bytes
        for line in lines:
            if len(line) > limit:
                self.fail_next(f"event is larger than the {size_text(limit)} limit")
                continue
            try:
                event = decode(line)
            except (msgspec.DecodeError, RecursionError) as exc:
                if not line.strip():
                    continue
                self.fail_next(f"line is not valid JSON: {_reason(exc)}")
                continue
            self.add(event)

    def array_decoder(self) -> msgspec.json.Decoder[Any]:
        """A decoder for a JSON-array body that hands each element to `add` as soon as it is decoded.

        So an array is never held as a list of events, and decoding stops at element 10,001 (TooManyEvents)
        instead of building millions of objects first.
        """
        limit = self.max_array_events

        def hook(kind: type, value: Any) -> _Element:
            if self.index >= limit:
                raise TooManyEvents(limit)
            self.add(value)
            return _ELEMENT

        return msgspec.json.Decoder(list[_Element], dec_hook=hook)

    def object_decoder(self) -> msgspec.json.Decoder[Any]:
        """A decoder for a body that is one JSON object: that one event."""

        def hook(kind: type, value: Any) -> _Element:
            self.add(value)
            return _ELEMENT

        return msgspec.json.Decoder(_Element, dec_hook=hook)

    def add(self, event: Any) -> None:
        index = self.index
        self.index = index + 1
        if type(event) is not dict:
            self.fail(index, "event is not a JSON object")
            return
        raw_time = event.pop(self.timestamp_field, _MISSING)
        types = tuple(map(type, event.values()))
        if dict in types:
            try:
                event = flatten(event)
            except TooDeep as exc:
                self.fail(index, str(exc))
                return
            types = tuple(map(type, event.values()))
            if raw_time is _MISSING:  # a dotted timestamp field names a nested value
                raw_time = event.pop(self.timestamp_field, _MISSING)
                if raw_time is not _MISSING:
                    types = tuple(map(type, event.values()))
        if raw_time is _MISSING:
            time_us = self.arrival_us
        else:
            try:
                time_us = self.read_time(raw_time)
            except BadTimestamp as exc:
                self.fail(index, str(exc))
                return
        data = self._encode(event)
        if len(data) > self.max_event_bytes:
            self.fail(index, f"event is larger than the {size_text(self.max_event_bytes)} limit")
            return
        if b"\\u0000" in data and has_nul(event):
            self.fail(index, "event holds the character U+0000, which cannot be stored")
            return
        self.shapes.add((tuple(event), types))
        self.chunk_days.add(time_us // DAY_US)
        self._parts.append(copyfmt.row_prefix(self.dataset_id, time_us, self.arrival_us, len(data)))
        self._parts.append(data)
        self.rows += 1
        self.chunk_bytes += len(data)

    # --- output ------------------------------------------------------------------------------------------

    def take_chunk(self) -> tuple[bytes, set[int], int]:
        """(binary COPY payload, days it touches, row count) of the rows added since the last call."""
        payload = b"".join([copyfmt.HEADER, *self._parts, copyfmt.TRAILER])
        result = (payload, self.chunk_days, self.rows)
        self._parts = []
        self.chunk_days = set()
        self.rows = 0
        self.chunk_bytes = 0
        return result


def field_types(shapes: Iterable[Shape]) -> dict[str, set[str]]:
    """Field name -> JSON type names seen, over a set of event shapes."""
    found: dict[str, set[str]] = {}
    for names, types in shapes:
        for name, kind in zip(names, types, strict=True):
            found.setdefault(name, set()).add(JSON_TYPES[kind])
    return found


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)
