"""The compiled OTLP reader (app/shippers/otlp/_otlpfast.c) writes exactly the events upb's messages give
(protobuf.py), as the row builder reads them, for any bytes: well-formed requests of every shape, and the same
requests damaged at random (where it must leave the body to upb, whose answer, events or refusal, is then the only
one)."""

from __future__ import annotations

import math
import random

import msgspec
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from app.errors import BeaconError
from app.shippers.otlp import protobuf

pytestmark = pytest.mark.skipif(protobuf._Reader is None, reason="the compiled reader is not built")
TEXTS = ["", "a", "é ü", "line\nbreak", 'quote " and \\', "\x00nul", "日本語", "\U0001f600", "x" * 300]


def any_value(rng: random.Random, v: AnyValue, depth: int = 0) -> None:
    kind = rng.choice(["s", "b", "i", "d", "bytes", "none"] + (["a", "kv"] if depth < 3 else []))
    if kind == "s":
        v.string_value = rng.choice(TEXTS)
    elif kind == "b":
        v.bool_value = rng.random() < 0.5
    elif kind == "i":
        v.int_value = rng.choice([0, 1, -1, 2**63 - 1, -(2**63), rng.randint(-(10**12), 10**12)])
    elif kind == "d":
        v.double_value = rng.choice([0.0, -0.0, 1.5, 1e100, -2.5e-300, math.inf, -math.inf, math.nan, rng.random()])
    elif kind == "bytes":
        v.bytes_value = rng.randbytes(rng.randint(0, 7))
    elif kind == "a":
        v.array_value.SetInParent()
        for _ in range(rng.randint(0, 3)):
            any_value(rng, v.array_value.values.add(), depth + 1)
    elif kind == "kv":
        v.kvlist_value.SetInParent()
        for _ in range(rng.randint(0, 3)):
            kv = v.kvlist_value.values.add(key=rng.choice(["k", "k", "n.m", ""]))
            any_value(rng, kv.value, depth + 1)


def request(rng: random.Random) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    for _ in range(rng.randint(0, 3)):
        rl = req.resource_logs.add()
        for _ in range(rng.randint(0, 2)):
            any_value(rng, rl.resource.attributes.add(key=rng.choice(["service.name", "host", ""])).value)
        for _ in range(rng.randint(0, 3)):
            sl = rl.scope_logs.add()
            if rng.random() < 0.7:
                sl.scope.name, sl.scope.version = rng.choice(TEXTS), rng.choice(["", "1.0"])
                for _ in range(rng.randint(0, 2)):
                    any_value(rng, sl.scope.attributes.add(key="lib").value)
            for _ in range(rng.randint(0, 4)):
                r = sl.log_records.add()
                when = rng.choice([0, 1_795_248_930_123_456_789, 10**17, 2**64 - 1, 5])
                if rng.random() < 0.5:
                    r.time_unix_nano = when
                else:
                    r.observed_time_unix_nano = when
                r.severity_number = rng.choice([0, 9, 17, 24, 1000, -5])
                r.severity_text = rng.choice(TEXTS[:3])
                if rng.random() < 0.8:
                    any_value(rng, r.body)
                r.trace_id = rng.choice([b"", rng.randbytes(16)])
                r.span_id = rng.choice([b"", rng.randbytes(8)])
                r.flags = rng.choice([0, 1, 2**32 - 1])
                r.event_name = rng.choice(["", "login"])
                for _ in range(rng.randint(0, 4)):
                    any_value(rng, r.attributes.add(key=rng.choice(["http.status", "a", "a", "user.id"])).value)
    return req


def outcome(data: bytes, *, compiled: bool) -> tuple[str, object]:
    try:
        decoded = protobuf.decode(data, compiled=compiled)
        # The JSON as the row builder reads it (a repeated key: its first place, its last value), written anew.
        lines = [msgspec.json.encode(msgspec.json.decode(line)) for _, run in decoded.runs("d") for line in run]
        return "events", (lines, decoded.rejected)
    except BeaconError as exc:
        return "refused", exc.code


def test_well_formed_requests_read_the_same_and_mostly_compiled():
    rng = random.Random(20261127)
    for _ in range(400):
        req = request(rng)
        data = req.SerializeToString()
        assert outcome(data, compiled=True) == outcome(data, compiled=False)
        # Only a time before 1973 (written as text) leaves a well-formed body to upb.
        early = any(
            0 < (r.time_unix_nano or r.observed_time_unix_nano) < 10**17
            for rl in req.resource_logs
            for sl in rl.scope_logs
            for r in sl.log_records
        )
        assert (protobuf.decode(data).reader is None) == early


def test_damaged_requests_read_the_same():
    rng = random.Random(7)
    for _ in range(1500):
        data = bytearray(request(rng).SerializeToString())
        if not data:
            continue
        for _ in range(rng.randint(1, 3)):
            if not data:
                break
            at = rng.randrange(len(data))
            action = rng.random()
            if action < 0.5:
                data[at] = rng.randrange(256)
            elif action < 0.75:
                del data[at : at + rng.randint(1, 4)]
            else:
                data[at:at] = rng.randbytes(rng.randint(1, 4))
        assert outcome(bytes(data), compiled=True) == outcome(bytes(data), compiled=False)


def test_a_field_given_twice_is_left_to_upb():
    req = ExportLogsServiceRequest()
    record = req.resource_logs.add().scope_logs.add().log_records.add(time_unix_nano=1_795_248_930_000_000_000)
    record.body.string_value = "first"
    # The same record with a second body appended: upb keeps the last (a merge), the compiled reader steps aside.
    second = AnyValue(string_value="second").SerializeToString()
    tail = b"\x2a" + bytes([len(second)]) + second
    record_bytes = record.SerializeToString()
    patched = _fix_lengths(record_bytes, record_bytes + tail, req)
    assert protobuf.decode(patched).reader is None
    assert outcome(patched, compiled=True) == outcome(patched, compiled=False)
    events = [msgspec.json.decode(line) for _, run in protobuf.decode(patched).runs("d") for line in run]
    assert events[0]["message"] == "second"


def _fix_lengths(old: bytes, new: bytes, req: ExportLogsServiceRequest) -> bytes:
    """The request re-serialized with one log record's bytes replaced (the enclosing lengths recomputed)."""
    scope = req.resource_logs[0].scope_logs[0]
    scope_bytes = b"\x12" + _varint(len(new)) + new
    scope_msg = scope.scope.SerializeToString()
    scope_logs = (b"\x0a" + _varint(len(scope_msg)) + scope_msg if scope.HasField("scope") else b"") + scope_bytes
    resource_logs = b"\x12" + _varint(len(scope_logs)) + scope_logs
    return b"\x0a" + _varint(len(resource_logs)) + resource_logs


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
