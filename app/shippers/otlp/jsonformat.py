"""OTLP logs as JSON (OTLP/JSON: proto3's JSON mapping with hex trace and span ids, enums as integers) -> events.

The same events as the protobuf form gives (protobuf.py). Field names are taken in lowerCamelCase, as OTLP/JSON
writes them, and in the proto's snake_case, as proto3 JSON parsers also accept; 64-bit integers as strings or
numbers; unknown fields are ignored, as OTLP asks of receivers. A log record that does not fit the schema is
rejected alone (counted in the partial success); a body that is not an ExportLogsServiceRequest is refused.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterator
from typing import Any

import msgspec
from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber

from app.errors import BeaconError
from app.ingest.batches import runs_of
from app.shippers.common import ns_time
from app.shippers.otlp.protobuf import MAX_ERRORS

_MAX_INT64 = 2**63
_encode = msgspec.json.Encoder().encode


class _Bad(Exception):
    """A log record (or its scope or resource) that does not fit the schema: the message says where."""


class JsonLogs:
    """A decoded OTLP/JSON body: `events()` yields the events of the records that fit, counting the others."""

    def __init__(self, body: bytes) -> None:
        try:
            document = msgspec.json.decode(body)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise BeaconError("invalid_json", f"The body is not valid JSON: {exc}.") from None
        if not isinstance(document, dict):
            raise BeaconError("invalid_json", "The body is not an OTLP/JSON ExportLogsServiceRequest (an object).")
        resource_logs = _get(document, "resourceLogs", "resource_logs")
        if resource_logs is None:
            resource_logs = []
        if not isinstance(resource_logs, list):
            raise BeaconError("invalid_json", "`resourceLogs` is not an array.")
        self._resource_logs = resource_logs
        self.rejected = 0
        self.errors: list[str] = []

    def _reject(self, count: int, error: str) -> None:
        self.rejected += count
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)

    def runs(self, dataset: str) -> Iterator[tuple[str, list[bytes]]]:
        """Each log record's event as JSON, in order, in runs for the ingest path (app/ingest/batches.py)."""
        return runs_of(dataset, map(_encode, self.events()))

    def events(self) -> Iterator[dict[str, Any]]:
        for i, resource_logs in enumerate(self._resource_logs):
            where = f"resourceLogs[{i}]"
            scopes = _get(resource_logs, "scopeLogs", "scope_logs") if isinstance(resource_logs, dict) else None
            try:
                if not isinstance(resource_logs, dict):
                    raise _Bad(f"{where} is not an object")
                resource = _get(resource_logs, "resource", "resource") or {}
                if not isinstance(resource, dict):
                    raise _Bad(f"{where}.resource is not an object")
                resource_fields = {f"resource.{k}": v for k, v in _attributes(resource, f"{where}.resource")}
                scopes = _list(scopes, f"{where}.scopeLogs")
            except (_Bad, RecursionError) as exc:
                self._reject(max(_count_records(scopes), 1), f"{_reason(exc)}; its log records were not stored")
                continue
            for j, scope_logs in enumerate(scopes):
                yield from self._scope_events(scope_logs, resource_fields, f"{where}.scopeLogs[{j}]")

    def _scope_events(self, scope_logs: Any, resource: dict[str, Any], where: str) -> Iterator[dict[str, Any]]:
        records = _get(scope_logs, "logRecords", "log_records") if isinstance(scope_logs, dict) else None
        try:
            if not isinstance(scope_logs, dict):
                raise _Bad(f"{where} is not an object")
            context = _scope_fields(_get(scope_logs, "scope", "scope") or {}, f"{where}.scope")
            records = _list(records, f"{where}.logRecords")
        except (_Bad, RecursionError) as exc:
            self._reject(max(_count_records([scope_logs]), 1), f"{_reason(exc)}; its log records were not stored")
            return
        context.update(resource)
        for k, record in enumerate(records):
            try:
                yield _event(record, context, f"{where}.logRecords[{k}]")
            except (_Bad, RecursionError) as exc:
                self._reject(1, _reason(exc))


def _reason(exc: BaseException) -> str:
    return "a value is nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _count_records(scopes: Any) -> int:
    if not isinstance(scopes, list):
        return 0
    found = 0
    for scope_logs in scopes:
        records = _get(scope_logs, "logRecords", "log_records") if isinstance(scope_logs, dict) else None
        found += len(records) if isinstance(records, list) else 0
    return found


def _get(d: dict[str, Any], camel: str, snake: str) -> Any:
    found = d.get(camel)
    return d.get(snake) if found is None else found


def _list(v: Any, where: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _Bad(f"{where} is not an array")
    return v


def _scope_fields(scope: Any, where: str) -> dict[str, Any]:
    if not isinstance(scope, dict):
        raise _Bad(f"{where} is not an object")
    found: dict[str, Any] = {}
    name = _string(scope.get("name"), f"{where}.name")
    version = _string(scope.get("version"), f"{where}.version")
    if name:
        found["scope.name"] = name
    if version:
        found["scope.version"] = version
    for key, v in _attributes(scope, where):
        found["scope.attributes." + key] = v
    return found


def _attributes(holder: dict[str, Any], where: str) -> Iterator[tuple[str, Any]]:
    for i, kv in enumerate(_list(holder.get("attributes"), f"{where}.attributes")):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise _Bad(f"{where}.attributes[{i}] is not a key-value object with a string key")
        yield kv["key"], value(kv.get("value"), f"{where}.attributes[{i}].value")


def _event(record: Any, context: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise _Bad(f"{where} is not an object")
    event: dict[str, Any] = {}
    body = record.get("body")
    if body is not None:
        found = value(body, f"{where}.body")
        if type(found) is dict:
            event = found
        elif found is not None:
            event["message"] = found
    time_ns = _uint(_get(record, "timeUnixNano", "time_unix_nano"), f"{where}.timeUnixNano", 64) or _uint(
        _get(record, "observedTimeUnixNano", "observed_time_unix_nano"), f"{where}.observedTimeUnixNano", 64
    )
    if time_ns:
        event["_time"] = ns_time(time_ns)
    severity_text = _string(_get(record, "severityText", "severity_text"), f"{where}.severityText")
    if severity_text:
        event["severity_text"] = severity_text
    severity = _severity(_get(record, "severityNumber", "severity_number"), f"{where}.severityNumber")
    if severity:
        event["severity_number"] = severity
    for camel, snake, size in (("traceId", "trace_id", 16), ("spanId", "span_id", 8)):
        ident = _hex(_get(record, camel, snake), f"{where}.{camel}", size)
        if ident:
            event[snake] = ident
    flags = _uint(record.get("flags"), f"{where}.flags", 32)
    if flags:
        event["flags"] = flags
    event_name = _string(_get(record, "eventName", "event_name"), f"{where}.eventName")
    if event_name:
        event["event_name"] = event_name
    for key, v in _attributes(record, where):
        event["attributes." + key] = v
    event.update(context)
    return event


def _string(v: Any, where: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise _Bad(f"{where} is not a string")
    return v


def _uint(v: Any, where: str, bits: int) -> int:
    """A proto uint64/uint32/fixed64 in JSON: a number or a decimal string."""
    if v is None:
        return 0
    if isinstance(v, str) and v.isascii() and v.isdigit():
        v = int(v)
    elif isinstance(v, float) and v.is_integer():
        v = int(v)
    if type(v) is not int or not 0 <= v < 2**bits:
        raise _Bad(f"{where} is not an unsigned {bits}-bit integer")
    return v


def _severity(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, str) and not v.lstrip("-").isdigit():
        try:
            return int(SeverityNumber.Value(v))
        except ValueError:
            raise _Bad(f"{where} is not a severity number") from None
    if isinstance(v, str):
        v = int(v)
    if type(v) is not int or not -(2**31) <= v < 2**31:
        raise _Bad(f"{where} is not a severity number")
    return v


def _hex(v: Any, where: str, size: int) -> str:
    if v is None or v == "":
        return ""
    if not isinstance(v, str):
        raise _Bad(f"{where} is not a hex string")
    try:
        raw = bytes.fromhex(v)
    except ValueError:
        raise _Bad(f"{where} is not a hex string") from None
    if len(raw) != size:
        raise _Bad(f"{where} is not {size} bytes of hex")
    return raw.hex()


_KINDS = {
    "stringValue": "string",
    "string_value": "string",
    "boolValue": "bool",
    "bool_value": "bool",
    "intValue": "int",
    "int_value": "int",
    "doubleValue": "double",
    "double_value": "double",
    "arrayValue": "array",
    "array_value": "array",
    "kvlistValue": "kvlist",
    "kvlist_value": "kvlist",
    "bytesValue": "bytes",
    "bytes_value": "bytes",
}
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def value(v: Any, where: str) -> Any:
    """An AnyValue in JSON, as protobuf.value gives the same value."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _Bad(f"{where} is not an AnyValue object")
    for key, found in v.items():
        kind = _KINDS.get(key)
        if kind is None:
            continue  # an unknown field
        if kind == "string":
            return _string(found, where)
        if kind == "bool":
            if not isinstance(found, bool):
                raise _Bad(f"{where}.boolValue is not a boolean")
            return found
        if kind == "int":
            return _int64(found, where)
        if kind == "double":
            return _double(found, where)
        if kind == "array":
            values = found.get("values") if isinstance(found, dict) else None
            return [value(item, f"{where}.values") for item in _list(values, f"{where}.arrayValue.values")]
        if kind == "kvlist":
            values = found.get("values") if isinstance(found, dict) else None
            return dict(_attributes({"attributes": values}, f"{where}.kvlistValue"))
        return _bytes(found, where)
    return None


def _int64(v: Any, where: str) -> int:
    if isinstance(v, str) and v.lstrip("-").isascii() and v.lstrip("-").isdigit():
        v = int(v)
    elif isinstance(v, float) and v.is_integer():
        v = int(v)
    if type(v) is not int or not -_MAX_INT64 <= v < _MAX_INT64:
        raise _Bad(f"{where}.intValue is not a 64-bit integer")
    return v


def _double(v: Any, where: str) -> float:
    if isinstance(v, str) and v in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[v]
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise _Bad(f"{where}.doubleValue is not a number") from None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Bad(f"{where}.doubleValue is not a number")
    return float(v)


def _bytes(v: Any, where: str) -> str:
    """Base64 (standard or URL-safe, padded or not, as proto3 JSON allows) -> standard base64, as from protobuf."""
    if not isinstance(v, str):
        raise _Bad(f"{where}.bytesValue is not a base64 string")
    text = v.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _Bad(f"{where}.bytesValue is not base64") from None
    return base64.b64encode(raw).decode()
