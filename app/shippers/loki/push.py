"""A Loki push (JSON, or snappy-compressed protobuf) -> events.

Each entry is one event: its stream's labels and its structured metadata as fields, the line as `message`
(verbatim, never parsed: Loki keeps lines as text too), the timestamp (unix nanoseconds) as `_time`. The
dataset: `X-Beacon-Dataset` when given, else the stream's `dataset` label (which then is not also a field),
else `loki`. A stream Beacon cannot take (no labels, labels that do not parse, a dataset that is not a valid
name or not the token's) or an entry that does not fit is rejected alone, and the rest is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import snappy
from google.protobuf.message import DecodeError

from app.datasets.names import is_dataset_name
from app.errors import BeaconError
from app.ingest.batches import SLICE
from app.ingest.limits import size_text
from app.shippers.common import ns_time
from app.shippers.loki import labels as label_sets
from app.shippers.loki import proto
from app.shippers.wire import fields

DEFAULT_DATASET = "loki"
DATASET_LABEL = "dataset"
MAX_ERRORS = 5
_encode = msgspec.json.Encoder().encode

# An entry as both forms give it: (unix nanoseconds, the line, structured metadata pairs), or why it cannot be read.
Entry = tuple[int, str, list[tuple[str, str]]]
EntryReader = Callable[[Any], Entry | str]


@dataclass
class Push:
    """A decoded push: its streams as (labels as shown in messages, labels or why not, raw entries, the reader of
    one entry), and what was rejected while reading them. Entries are read as they are iterated (`events`), so
    that a large push is read in the ingest path's slices."""

    streams: list[tuple[str, dict[str, str] | str, list[Any], EntryReader]] = field(default_factory=list)
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def reject(self, count: int, error: str) -> None:
        self.rejected += count
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)

    def runs(self, *, pinned: str | None, may_use: Callable[[str], bool]) -> Iterator[tuple[str, list[bytes]]]:
        """The events of every entry that can be stored, as JSON, in order, in runs for the ingest path
        (app/ingest/batches.py)."""
        for shown, found, entries, read in self.streams:
            if isinstance(found, str):
                self.reject(max(len(entries), 1), f"stream {shown}: {found}")
                continue
            stream_fields = dict(found)
            dataset = pinned
            if dataset is None:
                dataset = stream_fields.pop(DATASET_LABEL, DEFAULT_DATASET)
            problem = _dataset_problem(dataset, may_use)
            if problem is not None:
                self.reject(max(len(entries), 1), f"stream {shown}: {problem}")
                continue
            run: list[bytes] = []
            for index, raw in enumerate(entries):
                entry = read(raw)
                if isinstance(entry, str):
                    self.reject(1, f"stream {shown}, entry {index}: {entry}")
                    continue
                time_ns, line, metadata = entry
                event: dict[str, Any] = dict(stream_fields)
                event.update(metadata)
                event["message"] = line
                event["_time"] = ns_time(time_ns)
                run.append(_encode(event))
                if len(run) >= SLICE:
                    yield dataset, run
                    run = []
            if run:
                yield dataset, run


def _dataset_problem(name: str, may_use: Callable[[str], bool]) -> str | None:
    if not is_dataset_name(name):
        return f"the dataset {name!r} is not a valid dataset name (1-128 letters, digits, '.', '_' or '-')"
    if not may_use(name):
        return f"this token may not write to the dataset {name!r}"
    return None


def _labels(found: dict[str, str]) -> dict[str, str] | str:
    if not found:
        return "error at least one label pair is required per stream"
    return found


# --- JSON ------------------------------------------------------------------------------------------------------


def from_json(body: bytes) -> Push:
    try:
        document = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise BeaconError("invalid_json", f"The body is not valid JSON: {exc}.") from None
    streams = document.get("streams") if isinstance(document, dict) else None
    if not isinstance(streams, list):
        raise BeaconError("invalid_json", 'The body is not a Loki push: an object with a "streams" array.')
    push = Push()
    for i, stream in enumerate(streams):
        values = stream.get("values") if isinstance(stream, dict) else None
        entries: list[Any] = values if isinstance(values, list) else []
        labels = stream.get("stream") if isinstance(stream, dict) else None
        shown = msgspec.json.encode(labels).decode() if isinstance(labels, dict) else f"#{i}"
        found: dict[str, str] | str
        if not isinstance(stream, dict) or not isinstance(values, list):
            found = 'a stream is an object with "stream" (labels) and "values" (entries)'
        elif not isinstance(labels, dict) or not all(
            isinstance(k, str) and label_sets.NAME.fullmatch(k) and isinstance(v, str) for k, v in labels.items()
        ):
            found = '"stream" must map label names ([a-zA-Z_][a-zA-Z0-9_]*) to strings'
        else:
            found = _labels(labels)
        push.streams.append((shown, found, entries, _json_entry))
    return push


def _json_entry(value: Any) -> Entry | str:
    if not isinstance(value, list) or len(value) not in (2, 3):
        return 'an entry is ["<unix nanoseconds>", "<line>"], or with a third item, structured metadata'
    stamp, line = value[0], value[1]
    if not isinstance(stamp, str) or not stamp.isascii() or not stamp.lstrip("-").isdigit():
        return "the timestamp is not a string of unix nanoseconds"
    if not isinstance(line, str):
        return "the line is not a string"
    metadata: list[tuple[str, str]] = []
    if len(value) == 3:
        extra = value[2]
        if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
            return "structured metadata is an object of strings"
        metadata = list(extra.items())
    return int(stamp), line, metadata


# --- protobuf --------------------------------------------------------------------------------------------------


def uncompress(body: bytes, cap: int) -> bytes:
    """Snappy's block format, as Loki's protobuf push is sent; its declared size is checked before inflating."""
    size, shift = 0, 0
    for byte in body[:10]:
        size |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    else:
        raise BeaconError("invalid_body", "The body is not snappy-compressed protobuf.")
    if size > cap:
        raise BeaconError(
            "payload_too_large",
            f"The body inflates to {size:,} bytes, over the {size_text(cap)} decompressed limit; nothing was stored.",
        )
    try:
        return bytes(snappy.uncompress(body))
    except snappy.UncompressError:
        raise BeaconError("invalid_body", "The body is not snappy-compressed protobuf.") from None


def from_protobuf(data: bytes) -> Push:
    request_class = proto.push_request()
    try:
        streams = [(stream, 0) for stream in request_class.FromString(data).streams]
    except DecodeError:
        salvaged = _salvage(data)
        if salvaged is None:
            raise BeaconError("invalid_body", "The body is not a protobuf logproto.PushRequest.") from None
        streams = salvaged
    push = Push()
    for stream, lost in streams:
        if stream is None:
            push.reject(max(lost, 1), "a stream is not valid protobuf; its entries were not stored")
            continue
        shown, found = _stream_labels(stream.labels)
        push.streams.append((shown, found, list(stream.entries), _proto_entry))
    return push


def _stream_labels(raw: bytes) -> tuple[str, dict[str, str] | str]:
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return repr(raw), "the labels are not valid UTF-8"
    try:
        return text, _labels(label_sets.parse(text))
    except label_sets.BadLabels as exc:
        if text.strip() in ("", "{}"):
            return text, "error at least one label pair is required per stream"
        return text, f"error parsing labels {text!r}: {exc}"


def _proto_entry(entry: Any) -> Entry | str:
    try:
        line = entry.line.decode()
        metadata = [(pair.name.decode(), pair.value.decode()) for pair in entry.structuredMetadata]
    except UnicodeDecodeError:
        return "the line or its structured metadata is not valid UTF-8"
    stamp = entry.timestamp
    return stamp.seconds * 1_000_000_000 + stamp.nanos, line, metadata


def _salvage(data: bytes) -> list[tuple[Any, int]] | None:
    """Each stream decoded alone: (stream, 0), or (None, entries lost) for one that does not decode."""
    parts, corrupt = fields(data)
    if corrupt and not parts:
        return None
    stream_class = proto.stream_adapter()
    found: list[tuple[Any, int]] = []
    for number, payload, cut in parts:
        if number != 1:
            continue
        try:
            if cut:
                raise DecodeError("cut short")
            found.append((stream_class.FromString(payload), 0))
        except DecodeError:
            entries, _ = fields(payload)
            found.append((None, sum(1 for n, _, _ in entries if n == 2)))
    if corrupt:
        found.append((None, 1))
    return found if any(stream is not None for stream, _ in found) else None
