"""Events as raw JSON (NDJSON lines, JSON-array elements) -> binary COPY rows: the hot loop of ingestion.

For each event: decode it, check it is an object within the size bound, take out its timestamp, flatten it (skipped
when nothing in it is an object), note its shape (field names and value types) for field discovery, encode
the rest as JSON, and append one binary COPY row. Events that repeat the shape of an earlier one take the
shortcut in plans.py, which gives the same rows. Rows collect into chunks that the service writes with one
`COPY` each, so the memory held is one chunk's bytes, never the whole request's Python objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from app.ingest import copyfmt
from app.ingest.flatten import JSON_TYPES, TooDeep, flatten, has_nul
from app.ingest.limits import size_text
from app.ingest.partitions import day_date
from app.ingest.plans import ShapePlan, plan_for
from app.ingest.timestamps import DAY_US, MAX_US, MINUTE_US, BadTimestamp, TimeReader, default_reader

try:
    from app.ingest._fastrows import FastRows as _FastRows
except ImportError:  # setup.py builds it where a C compiler is at hand; without it, the general path serves alone
    _FastRows = None  # type: ignore[assignment,misc]

MAX_FAILURES_SHOWN = 10
# Each new day is a new partition of `events` (tens of ms to create, and a table every query over that day
# plans): what one request may touch is bounded, and the events of further days fail alone.
_TOO_MANY_DAYS = "a request may hold events of at most {:,} different days (UTC); send it in another request"
# A shape plan is dropped after this many lines in a row that do not fit it, and the next line's shape
# learned, at most this many times per request (a stream of ever-new shapes then just takes the general path).
PLAN_MISSES = 4
PLANS_PER_REQUEST = 8
_MISSING: Any = object()
# Field names that usually hold an event's time, in the order a warning names them.
TIME_LIKE = ("@timestamp", "timestamp", "time", "ts")
# What decoding one event's JSON may raise: msgspec's own errors, UnicodeDecodeError for bytes that are not
# UTF-8 (in a key or a string; msgspec raises it as it is, not as a DecodeError), RecursionError for nesting.
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

Shape = tuple[tuple[str, ...], tuple[type, ...]]


class InvalidEvent(Exception):
    """An event of a JSON array that is not valid JSON (`strict`): the whole body is refused."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"event {index}: {reason}")
        self.index = index
        self.reason = reason


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
        max_days: int = 100,
        shape_plans: bool = True,
        compiled: bool = True,
        failures_shown: int = MAX_FAILURES_SHOWN,
    ) -> None:
        self.dataset_id = dataset_id
        self.arrival_us = arrival_us
        self.timestamp_field = timestamp_field
        self.read_time = read_time
        self.max_event_bytes = max_event_bytes
        self.max_days = max_days
        self.index = 0  # index of the next event in the request (blank NDJSON lines do not count)
        self.failed = 0
        self.failures: list[Failure] = []
        self.failures_shown = failures_shown  # failures kept in `failures` (all are counted in `failed`)
        self.shapes: set[Shape] = set()
        self.stamped = 0  # events stored with their arrival time (no timestamp field)
        self.stamped_keys: set[tuple[str, ...]] = set()  # their field names, for time_fields_ignored()
        self.rows = 0  # rows in the current chunk
        self.chunk_bytes = 0
        self.days: set[int] = set()  # the UTC days (since 1970) of the request's rows so far
        self.minutes: dict[int, int] = {}  # rows per UTC minute (since 1970), for the rollup (app/ingest/rollups.py)
        self._buf = bytearray(copyfmt.HEADER)  # binary COPY data of the current chunk
        self._decode = msgspec.json.Decoder().decode
        self._nested = False  # seen an event with a nested object in this request
        self._plan: ShapePlan | None = None  # see plans.py
        self._plans_left = PLANS_PER_REQUEST if shape_plans else 0
        self._misses = 0  # lines in a row that did not fit the plan, across calls
        self.planned = 0  # events read through a shape plan
        self.compiled = 0  # events read by the compiled row builder
        # The compiled row builder (app/ingest/_fastrows.c) reads the events it can prove it reads exactly as the
        # general path below does, and hands every other one back to it; it knows only the default time reader.
        self._fast = (
            _FastRows(
                dataset_id=dataset_id,
                arrival_us=arrival_us,
                max_us=MAX_US,
                timestamp_field=timestamp_field,
                max_event_bytes=max_event_bytes,
                max_days=max_days,
                days=self.days,
                minutes=self.minutes,
                shapes=self.shapes,
                stamped_keys=self.stamped_keys,
            )
            if compiled and _FastRows is not None and read_time is default_reader
            else None
        )

    # --- failures ----------------------------------------------------------------------------------------

    def fail(self, index: int, error: str) -> None:
        self.failed += 1
        if len(self.failures) < self.failures_shown:
            self.failures.append(Failure(index=index, error=error))

    def fail_next(self, error: str) -> None:
        """The next event is bad before it could even be read (a line over the size bound)."""
        self.fail(self.index, error)
        self.index += 1

    # --- input -------------------------------------------------------------------------------------------

    def add_lines(self, lines: Iterable[Any], *, may_hold_nul: bool = True, strict: bool = False) -> None:
        """NDJSON lines (without their newline) or the elements of a JSON array, as raw JSON (bytes-like).

        Blank lines are skipped and not counted. See `_add_general` for the flags.
        """
        fast = self._fast
        if fast is None:
            self._add_general(lines, may_hold_nul=may_hold_nul, strict=strict)
            return
        items = lines if type(lines) is list else list(lines)
        pos, count = 0, len(items)
        while pos < count:
            pos, rows, size, stamped = fast.add(items, pos, self._buf)
            self.index += rows
            self.rows += rows
            self.compiled += rows
            self.chunk_bytes += size
            self.stamped += stamped
            if pos < count:  # an event the compiled builder does not serve: read (or failed) the general way
                self._add_general(items[pos : pos + 1], may_hold_nul=may_hold_nul, strict=strict)
                pos += 1

    def _add_general(self, lines: Iterable[Any], *, may_hold_nul: bool, strict: bool) -> None:
        """The general path, in Python, for any event. `may_hold_nul=False` says the bytes these lines came from hold
        no `\\u0000` escape, which spares a per-event check (the caller scans a whole chunk at once, far
        cheaper than event by event). `strict`: an item that is not valid JSON raises InvalidEvent instead of
        failing alone (a JSON array that does not parse is refused whole).
        """
        # The hot loop: everything it touches per event is a local, and each step is one C call where it can
        # be (decode, flatten's dict building aside, encode, pack).
        limit = self.max_event_bytes
        field = self.timestamp_field
        read_time = self.read_time
        arrival = self.arrival_us
        decode = self._decode
        encode = _encode
        fail = self.fail
        add_shape = self.shapes.add
        days = self.days
        add_day = days.add
        max_days = self.max_days
        minutes = self.minutes
        minutes_get = minutes.get
        # Counted in runs: events mostly come in time order, so most events only compare and add.
        run_minute = -1
        run = 0
        buf = self._buf
        pack = copyfmt.ROW_PACK
        dataset_id = self.dataset_id
        sys_time = arrival - copyfmt.PG_EPOCH_OFFSET_US
        offset = copyfmt.PG_EPOCH_OFFSET_US
        index = self.index
        nested = self._nested
        rows = 0
        size = 0
        last_keys: tuple[str, ...] = ()
        last_types: tuple[type, ...] = ()
        stamped = 0
        add_stamped = self.stamped_keys.add
        last_stamped: tuple[str, ...] = ()
        plan = self._plan
        plans_left = self._plans_left
        misses = self._misses
        planned = 0
        try:
            for item in lines:
                if not item:
                    continue  # a blank line: skipped for the cost of this test
                out: Any = None  # what to encode: the flattened event
                if len(item) > limit:
                    fail(index, f"event is larger than the {size_text(limit)} limit")
                    index += 1
                    continue
                if plan is not None:
                    try:
                        obj = plan.decode(item)
                    except DECODE_ERRORS:
                        obj = None  # another shape, or not JSON: the general path tells which
                    if obj is None:
                        misses += 1
                        if misses >= PLAN_MISSES:
                            plan = None  # the stream has moved on: learn its next shape
                    else:
                        misses = 0
                        planned += 1
                        this = index
                        index += 1
                        raw_time = plan.time(obj) if plan.time is not None else _MISSING
                        values = plan.values(obj)
                        out = plan.flat(*values)
                        keys = plan.keys
                        types = plan.types
                        probe: Any = values  # where a U+0000 would be
                if out is None:
                    try:
                        event = decode(item)
                    except DECODE_ERRORS as exc:
                        if strict:
                            raise InvalidEvent(index, _reason(exc)) from None
                        if item.strip():
                            fail(index, f"line is not valid JSON: {_reason(exc)}")
                            index += 1
                        continue
                    if plan is None and plans_left and type(event) is dict:
                        plans_left -= 1
                        plan = plan_for(event, field)
                        misses = 0
                if out is None:
                    this = index
                    index += 1
                    if type(event) is not dict:
                        fail(this, "event is not a JSON object")
                        continue
                    raw_time = event.pop(field, _MISSING)
                    # Once a request has shown nested events, later ones are flattened without looking first
                    # (a flat event comes out as it went in); until then, a look at the value types decides.
                    if nested or dict in (types := tuple(map(type, event.values()))):
                        nested = True
                        try:
                            event = flatten(event)
                        except TooDeep as exc:
                            fail(this, str(exc))
                            continue
                        if raw_time is _MISSING:  # a dotted timestamp field names a nested value
                            raw_time = event.pop(field, _MISSING)
                        types = tuple(map(type, event.values()))
                    out = probe = event
                    keys = tuple(event)
                if raw_time is _MISSING:
                    time_us = arrival
                    # For time_fields_ignored(); an event that fails below is counted too (rare, and only
                    # the warning's count is off by it: the service caps it at the events ingested).
                    stamped += 1
                    if keys and keys is not last_stamped and keys != last_stamped:
                        add_stamped(keys)
                        last_stamped = keys
                else:
                    try:
                        time_us = read_time(raw_time)
                    except BadTimestamp as exc:
                        fail(this, str(exc))
                        continue
                data = encode(out)
                if len(data) > limit:
                    fail(this, f"event is larger than the {size_text(limit)} limit")
                    continue
                if may_hold_nul and b"\\u0000" in data and has_nul(probe):
                    fail(this, "event holds the character U+0000, which cannot be stored")
                    continue
                # Most streams repeat one shape: comparing with the last one costs less than hashing the pair.
                # An event with no fields has no shape to record.
                if keys and (types != last_types or keys != last_keys):
                    add_shape((keys, types))
                    last_keys, last_types = keys, types
                day = time_us // DAY_US
                if day not in days:
                    if len(days) >= max_days:
                        fail(this, f"event falls on {day_date(day)}: {_TOO_MANY_DAYS.format(max_days)}")
                        continue
                    add_day(day)
                minute = time_us // MINUTE_US
                if minute == run_minute:
                    run += 1
                else:
                    if run:
                        minutes[run_minute] = minutes_get(run_minute, 0) + run
                    run_minute, run = minute, 1
                buf += pack(4, 4, dataset_id, 8, time_us - offset, 8, sys_time, len(data) + 1, 1)
                buf += data
                rows += 1
                size += len(data)
        finally:
            if run:
                minutes[run_minute] = minutes_get(run_minute, 0) + run
            self._nested = nested
            self._plan = plan
            self._plans_left = plans_left
            self._misses = misses
            self.planned += planned
            self.stamped += stamped
            self.index = index
            self.rows += rows
            self.chunk_bytes += size

    def time_fields_ignored(self) -> list[str]:
        """Fields that look like the event time, in events that were stamped with their arrival time instead
        (no `_time`, and no `timestamp-field` naming them): most likely a forgotten `timestamp-field`."""
        seen = set().union(*self.stamped_keys) if self.stamped_keys else set()
        return [name for name in TIME_LIKE if name in seen and name != self.timestamp_field]

    # --- output ------------------------------------------------------------------------------------------

    def take_chunk(self) -> tuple[bytearray, set[int], int]:
        """(binary COPY payload, days of the request so far, row count) of the rows added since the last call."""
        self._buf += copyfmt.TRAILER
        result = (self._buf, self.days, self.rows)
        self._buf = bytearray(copyfmt.HEADER)
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


# msgspec rather than orjson: orjson is faster on a warm dict in isolation, but slower on fresh events in
# this loop (measured), and it refuses integers beyond 64 bits, which JSON allows.
_encode = msgspec.json.Encoder().encode


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 (byte 0x{exc.object[exc.start]:02x})"
    return str(exc)
