"""Schemathesis' hooks for Beacon's document (loaded by the CLI run of tests/fuzz/test_openapi.py through
SCHEMATHESIS_HOOKS): how to write and read the media types JSON Schema does not cover, how to generate the
formats the document names, and the few rules between fields that JSON Schema cannot state.

None of this loosens a check: every check runs on every response. The formats and fix-ups only teach the
generator what a valid request is where the document can say it in words alone (the query language, a label
matcher's regular expression, a server-signed cursor, one field bounded by another); negative cases are left as
they were generated.
"""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import schemathesis
import snappy
from google.protobuf import json_format
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from schemathesis.core.errors import SerializationNotPossible

from app.shippers.loki.proto import push_request

# --- media types --------------------------------------------------------------------------------------------------


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    """NDJSON bodies are text (lone surrogates go out as the bytes they would be, which are not UTF-8). A value of
    another type has no NDJSON form that is not also text: such a case cannot be sent."""
    if not isinstance(value, str):
        raise SerializationNotPossible.for_media_type("application/x-ndjson")
    return value.encode("utf-8", "surrogatepass")


@schemathesis.serializer("application/x-protobuf")
def _protobuf(ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    """OTLP's and Loki's protobuf bodies: the document describes the message by proto3's JSON mapping, so a value
    is encoded as that message (Loki's snappy-compressed, as its clients send it). A value that is no such message
    (not an object, a field of the wrong type) has no protobuf form: that case cannot be sent."""
    if not isinstance(value, dict):  # ParseDict would read a list's items as field names: `[]` as an empty message
        raise SerializationNotPossible.for_media_type("application/x-protobuf")
    loki = ctx.case.operation.path == "/v1/loki/api/v1/push"
    message = push_request()() if loki else ExportLogsServiceRequest()
    try:
        json_format.ParseDict(value, message)
    except (json_format.ParseError, AttributeError, TypeError, ValueError):
        raise SerializationNotPossible.for_media_type("application/x-protobuf") from None
    encoded: bytes = message.SerializeToString()
    return snappy.compress(encoded) if loki else encoded


@schemathesis.deserializer("application/x-ndjson")
def _read_ndjson(ctx: schemathesis.DeserializationContext, response: Any) -> Any:
    """An export's stream is text, one JSON object per line: each line must be one (a JSON decode error fails
    the response), and the body is checked against the document as the text it is."""
    text = response.content.decode("utf-8")
    for line in text.splitlines():
        if line.strip() and not isinstance(json.loads(line), dict):
            raise ValueError(f"an NDJSON line that is not an object: {line[:80]!r}")
    return text


# --- formats ------------------------------------------------------------------------------------------------------

_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_PLAIN = st.from_regex(r"[A-Za-z0-9_.:/-]{1,12}", fullmatch=True)
# Regexes that match no empty value: a silence needs a matcher that does not (or it would silence everything).
_REGEX = st.sampled_from(["a.+", "(x|y)", "[0-9]+", "api-.*"])
_DATASETS = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)


def _matcher() -> st.SearchStrategy[str]:
    plain = st.tuples(_NAMES, _PLAIN).map(lambda t: f"{t[0]}={t[1]}")
    quoted = st.tuples(_NAMES, _PLAIN).map(lambda t: f'{t[0]} = "{t[1]}"')
    regex = st.tuples(_NAMES, _REGEX).map(lambda t: f'{t[0]}=~"{t[1]}"')
    return st.one_of(plain, quoted, regex)


# Match-event queries (where/extend/project only) and threshold queries (ending in summarize): a monitor takes
# the one its `type` names; a query or an export takes either.
MATCHING = ("['{d}'] | where level == 'error'", "['{d}'] | where status >= {n} | project status, path")
SUMMING = ("['{d}'] | summarize count()", "['{d}'] | where status >= {n} | summarize n = count() by bin(_time, 1m)")


def _apl(templates: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(templates), _DATASETS, st.integers(0, 999)).map(
        lambda t: t[0].format(d=t[1], n=t[2])
    )


schemathesis.openapi.format("label-matcher", _matcher())
schemathesis.openapi.format("apl", st.one_of(_apl(MATCHING), _apl(SUMMING)))


# --- rules between fields, and values only the server makes -------------------------------------------------------
# Applied to positive cases only (those the generator means to be valid); each is a rule the document states in
# words (its descriptions) because JSON Schema cannot.

_URL = os.environ.get("BEACON_FUZZ_URL", "")
_TOKEN = os.environ.get("BEACON_FUZZ_TOKEN", "")
# A valid configuration per notifier type, which no schema can say. The run's server allows loopback destinations
# and sends to a closed loopback port only (test_openapi.py NOWHERE): nothing leaves the machine.
_CONFIGS: dict[str, dict[str, Any]] = {
    "email": {"addresses": ["ops@example.com"]},
    "incident_a": {"integration_key": "k" * 32},
    "incident_b": {"integration_key": "k" * 32},
}
_URL_CONFIG = {"url": "http://127.0.0.1:9/hooks/x9Ab"}
_LOKI_JSON = {"streams": [{"stream": {"job": "fuzz"}, "values": [["1764000000000000000", "a line"]]}]}
# The same line as protobuf messages, in proto3's JSON mapping (bytes in base64), which `_protobuf` encodes.
_LOKI_PROTO = {
    "streams": [
        {
            "labels": base64.b64encode(b'{job="fuzz"}').decode(),
            "entries": [{"timestamp": {"seconds": "1764000000"}, "line": base64.b64encode(b"a line").decode()}],
        }
    ]
}
_OTLP_PROTO = {
    "resourceLogs": [
        {"scopeLogs": [{"logRecords": [{"timeUnixNano": "1764000000000000000", "body": {"stringValue": "a line"}}]}]}
    ]
}
_ALERTMANAGER = {"route": {"receiver": "fuzz"}, "receivers": [{"name": "fuzz"}]}


def _instant(value: Any) -> datetime | None:
    """A request datetime as the server reads it: RFC 3339 text, or unix seconds."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _later(value: Any, than: datetime) -> bool:
    found = _instant(value)
    return found is not None and found > than


def _without_nul(value: Any) -> Any:
    """A free-form JSON value (a preview's event) without U+0000, which no text may hold (app/inputs.py): the
    document says it of typed fields with a pattern, and of free-form ones in words."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    return value


def _routing_version() -> str:
    answer = httpx.get(f"{_URL}/v1/routing", headers={"Authorization": f"Bearer {_TOKEN}"}, timeout=10)
    return str(answer.json()["version"])


def _stored(path: str) -> dict[str, Any] | None:
    """A resource as stored (None: there is none, and a 404 is the answer): a PATCH's fields must suit it."""
    answer = httpx.get(f"{_URL}{path}", headers={"Authorization": f"Bearer {_TOKEN}"}, timeout=10)
    found: dict[str, Any] | None = answer.json() if answer.status_code == 200 else None
    return found


def _monitor_type(monitor_id: str) -> str | None:
    """The stored monitor's type, which a PATCH cannot change and whose rules its fields must follow."""
    stored = _stored(f"/v1/monitors/{monitor_id}")
    return str(stored["type"]) if stored else None


def _fix_monitor(body: dict[str, Any], *, creating: bool) -> None:
    body["notifier_ids"] = []  # ids of notifiers that exist, which no schema can say
    if body.get("type") == "match_event":  # threshold monitors only (app/monitors/service.py `_check`)
        for field in ("repeat_interval_seconds", "notify_by_group", "trigger_after", "alert_on_no_data"):
            body.pop(field, None)
    after = body.get("trigger_after")
    if isinstance(after, dict) and after.get("m", 1) > after.get("n", 1):
        after["m"], after["n"] = after.get("n", 1), after.get("m", 1)  # m of the last n runs: m <= n
    kind = body.get("type")
    if kind == "threshold":
        body["apl"] = SUMMING[0].format(d="web")
        body.setdefault("operator", "above")
        body["operator"] = body["operator"] or "above"
        body["threshold"] = 0.0 if body.get("threshold") is None else body["threshold"]
    elif kind == "match_event":
        body["apl"] = MATCHING[0].format(d="web")
        body.pop("operator", None)
        body.pop("threshold", None)
    if not creating:  # a type cannot change, and a query, operator or grouping must suit the stored type
        for field in ("type", "apl", "operator", "threshold", "notify_by_group"):
            body.pop(field, None)
    elif body.get("notify_by_group"):
        body["apl"] = SUMMING[1].format(d="web", n=500).replace("by bin", "by path, bin")


@schemathesis.hook
def map_case(ctx: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return case
    now = datetime.now(UTC)
    label = f"{case.method.upper()} {case.operation.path}"
    if case.query and "cursor" in case.query:
        del case.query["cursor"]  # signed by the server (app/pagination.py): only a page's next_cursor is one
    if case.query and "start_time" in case.query:
        case.query.pop("end_time", None)  # a range's end is not before its start
    body = case.body if isinstance(case.body, dict) else None
    if label == "POST /v1/tokens" and body is not None and not _later(body.get("expires_at"), now):
        body["expires_at"] = None  # "in the future": a rule of the clock
    elif label == "POST /v1/monitors" and body is not None:
        _fix_monitor(body, creating=True)
    elif label == "PATCH /v1/monitors/{monitor_id}" and body is not None:
        body["type"] = _monitor_type(str((case.path_parameters or {}).get("monitor_id", "")))
        _fix_monitor(body, creating=False)
    elif label == "POST /v1/notifiers" and body is not None:
        body["config"] = _CONFIGS.get(body.get("type", ""), _URL_CONFIG)
    elif label == "PATCH /v1/notifiers/{notifier_id}" and body is not None:
        body.pop("config", None)  # its keys depend on the notifier's type, which the request does not say
    elif label in ("POST /v1/query", "POST /v1/export") and body is not None:
        if body.get("start_time") is not None:  # a range's start is before its end (default: now)
            body["start_time"], body["end_time"] = "now-1h", None
        if not str(body.get("apl", "")).startswith("['"):  # coverage cases fill a string's length, not its language
            body["apl"] = MATCHING[0].format(d="web")
    elif label in ("POST /v1/silences", "PATCH /v1/silences/{silence_id}") and body is not None:
        body.pop("starts_at", None)
        if body.get("matchers"):
            body["matchers"][0] = 'alertname="fuzz"'  # one must not match an empty value
        if label.startswith("POST") or "ends_at" in body:
            body["ends_at"] = (now + timedelta(hours=1)).isoformat()
    elif label in ("POST /v1/annotations", "PATCH /v1/annotations/{annotation_id}") and body is not None:
        if body.get("end_time") and not body.get("time"):
            body["time"] = body["end_time"]  # `time` defaults to now, which an end may lie before
        start, end = body.get("time"), body.get("end_time")
        if (_instant(start) or now) > (_instant(end) or now + timedelta(days=1)):
            body["time"], body["end_time"] = end, start  # end_time >= time
        if body.get("silence"):  # a silence needs the span's end, after its start
            body.pop("time", None)
            body["end_time"] = (now + timedelta(hours=1)).isoformat()
        if label.startswith("PATCH") and "time" in body and "end_time" not in body:
            # The stored span's end stays: a new start may not lie after it.
            stored = _stored(f"/v1/annotations/{(case.path_parameters or {}).get('annotation_id', '')}")
            end = _instant((stored or {}).get("end_time"))
            if end is not None and (_instant(body["time"]) or now) > end:
                body.pop("time")
        if isinstance(body.get("silence"), dict) and body["silence"].get("matchers"):
            body["silence"]["matchers"][0] = 'alertname="fuzz"'  # one must not match an empty value
    elif label == "POST /v1/notifiers/{notifier_id}/preview" and body is not None:
        case.body = _without_nul(body)
    elif label == "PUT /v1/routing":
        case.headers = {**(case.headers or {}), "If-Match": _routing_version()}  # again in before_call
        if body is not None:  # notifiers and time intervals are named by reference: they must exist
            body["route"], body["inhibit_rules"], body["time_intervals"] = {"notifier_ids": []}, [], []
    elif label == "POST /v1/alerts" and isinstance(case.body, list):
        for alert in case.body:
            if isinstance(alert, dict) and alert.get("starts_at") is not None:
                alert.pop("ends_at", None)  # an alert ends no earlier than it starts
    elif label == "POST /v1/routing/import":
        case.body = _ALERTMANAGER
    elif label == "POST /v1/loki/api/v1/push":
        case.body = _LOKI_JSON if case.media_type == "application/json" else _LOKI_PROTO
    elif label == "POST /v1/logs" and case.media_type == "application/x-protobuf":
        case.body = _OTLP_PROTO
    return case


@schemathesis.hook
def before_call(ctx: schemathesis.HookContext, case: schemathesis.Case, kwargs: dict[str, Any]) -> None:
    """`If-Match` names the routing document's current version, read just before the request is sent: a version
    read when the case was made is stale once another PUT came first (a replayed case, a stateful step), and the
    412 that then answers is the contract, not a refused valid request."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    label = f"{case.method.upper()} {case.operation.path}"
    if label == "PUT /v1/routing" or (label == "POST /v1/routing/import" and "If-Match" in (case.headers or {})):
        case.headers = {**(case.headers or {}), "If-Match": _routing_version()}
