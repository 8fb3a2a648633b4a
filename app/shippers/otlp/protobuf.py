"""OTLP logs as protobuf (`ExportLogsServiceRequest`, from `opentelemetry-proto`) -> events.

The body is decoded by the `protobuf` runtime (upb) in one call. One that does not decode whole (truncated,
corrupt) is taken apart at the wire level (`salvage`): each resource's, scope's and log record's bytes are
decoded alone, the records that decode are kept, and the others are counted as rejected, as OTLP's partial
success reports them. A body in which no record can be read is refused.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from app.errors import BeaconError
from app.ingest.batches import SLICE, runs_of
from app.shippers.common import ns_time
from app.shippers.wire import fields

try:
    from app.shippers.otlp._otlpfast import Reader as _Reader
except ImportError:  # setup.py builds it where a C compiler is at hand; without it, upb's messages serve alone
    _Reader = None  # type: ignore[misc,assignment]

MAX_ERRORS = 5  # reasons kept for the answer's message
_encode = msgspec.json.Encoder().encode


@dataclass
class Decoded:
    request: ExportLogsServiceRequest
    rejected: int = 0  # log records that could not be read
    errors: list[str] = field(default_factory=list)
    reader: Any = None  # the compiled reader (_otlpfast.c), when it reads the body: `request` is then empty

    def runs(self, dataset: str) -> Iterator[tuple[str, list[bytes]]]:
        """Each log record's event as JSON, in order, in runs for the ingest path (app/ingest/batches.py)."""
        if self.reader is None:
            yield from runs_of(dataset, map(_encode, events(self.request)))
            return
        while batch := self.reader.take(SLICE):
            yield dataset, batch

    def reject(self, count: int, error: str) -> None:
        self.rejected += count
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)


def decode(body: bytes, *, compiled: bool = True) -> Decoded:
    """The body's log records. The compiled reader takes the bodies it reads exactly as upb does (the same events,
    about 5 times faster); any other, and every body when `compiled` is false, is decoded by upb."""
    if compiled and _Reader is not None:
        try:
            return Decoded(ExportLogsServiceRequest(), reader=_Reader(body))
        except ValueError:
            pass
    try:
        return Decoded(ExportLogsServiceRequest.FromString(body))
    except DecodeError:
        pass
    decoded = Decoded(ExportLogsServiceRequest())
    _salvage(body, decoded)
    if not any(sl.log_records for rl in decoded.request.resource_logs for sl in rl.scope_logs):
        raise BeaconError(
            "invalid_body", "The body is not a valid protobuf ExportLogsServiceRequest: no log record could be read."
        )
    return decoded


def events(request: ExportLogsServiceRequest) -> Iterator[dict[str, Any]]:
    """One event per log record, in order (docs/shippers.md has the mapping)."""
    for resource_logs in request.resource_logs:
        resource = {"resource." + kv.key: value(kv.value) for kv in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            context = scope_fields(scope_logs.scope)
            context.update(resource)
            for record in scope_logs.log_records:
                yield _event(record, context)


def scope_fields(scope: InstrumentationScope) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if scope.name:
        found["scope.name"] = scope.name
    if scope.version:
        found["scope.version"] = scope.version
    for kv in scope.attributes:
        found["scope.attributes." + kv.key] = value(kv.value)
    return found


def _event(record: LogRecord, context: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {}
    if record.HasField("body"):
        body = value(record.body)
        if type(body) is dict:
            event = body  # a map is the event's own fields (flattened by ingest), as an NDJSON event's would be
        elif body is not None:
            event["message"] = body
    time_ns = record.time_unix_nano or record.observed_time_unix_nano
    if time_ns:
        event["_time"] = ns_time(time_ns)
    if record.severity_text:
        event["severity_text"] = record.severity_text
    if record.severity_number:
        event["severity_number"] = record.severity_number
    if record.trace_id:
        event["trace_id"] = record.trace_id.hex()
    if record.span_id:
        event["span_id"] = record.span_id.hex()
    if record.flags:
        event["flags"] = record.flags
    if record.event_name:
        event["event_name"] = record.event_name
    for kv in record.attributes:
        event["attributes." + kv.key] = value(kv.value)
    event.update(context)
    return event


_SCALARS = frozenset(("string_value", "bool_value", "int_value", "double_value"))


def value(v: AnyValue) -> Any:
    """An AnyValue as JSON: scalars as they are, an array as a list, a map as an object, bytes as base64."""
    kind = v.WhichOneof("value")
    if kind in _SCALARS:
        return getattr(v, kind)
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    if kind == "array_value":
        return [value(item) for item in v.array_value.values]
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return None


# --- salvage ---------------------------------------------------------------------------------------------------


def _salvage(body: bytes, out: Decoded) -> None:
    parts, corrupt = fields(body)
    for number, payload, cut in parts:
        if number == 1:
            _resource(payload, cut, out)
    if corrupt:
        out.reject(1, "the body ends in bytes that are not protobuf")


def _resource(payload: bytes, cut: bool, out: Decoded) -> None:
    if not cut:
        try:
            out.request.resource_logs.append(ResourceLogs.FromString(payload))
            return
        except DecodeError:
            pass
    parts, corrupt = fields(payload)
    kept = ResourceLogs()
    for number, part, part_cut in parts:
        if number == 1:
            try:
                if part_cut:
                    raise DecodeError("cut short")
                kept.resource.CopyFrom(Resource.FromString(part))
            except DecodeError:
                # Its records would lose their resource's attributes: they are refused with it.
                lost = sum(_records_in(p) for n, p, _ in parts if n == 2)
                out.reject(max(lost, 1), "a resource is not valid protobuf; its log records were not stored")
                return
    for number, part, part_cut in parts:
        if number == 2:
            _scope(part, part_cut, kept, out)
    if corrupt:
        out.reject(1, "a resource's bytes end in bytes that are not protobuf")
    elif cut and not any(part_cut for _, _, part_cut in parts):
        out.reject(1, "the body is cut short after a resource's last complete part")
    out.request.resource_logs.append(kept)


def _scope(payload: bytes, cut: bool, into: ResourceLogs, out: Decoded) -> None:
    if not cut:
        try:
            into.scope_logs.append(ScopeLogs.FromString(payload))
            return
        except DecodeError:
            pass
    parts, corrupt = fields(payload)
    kept = ScopeLogs()
    for number, part, part_cut in parts:
        if number == 1:
            try:
                if part_cut:
                    raise DecodeError("cut short")
                kept.scope.CopyFrom(InstrumentationScope.FromString(part))
            except DecodeError:
                lost = sum(1 for n, _, _ in parts if n == 2)
                out.reject(max(lost, 1), "a scope is not valid protobuf; its log records were not stored")
                return
    for number, part, part_cut in parts:
        if number == 2:
            try:
                if part_cut:
                    raise DecodeError("cut short")
                kept.log_records.append(LogRecord.FromString(part))
            except DecodeError:
                out.reject(1, "a log record is not valid protobuf (truncated or corrupt)")
    if corrupt:
        out.reject(1, "a scope's bytes end in bytes that are not protobuf")
    elif cut and not any(part_cut for _, _, part_cut in parts):
        out.reject(1, "the body is cut short after a scope's last complete log record")
    into.scope_logs.append(kept)


def _records_in(scope_logs: bytes) -> int:
    parts, _ = fields(scope_logs)
    return sum(1 for n, _, _ in parts if n == 2)
