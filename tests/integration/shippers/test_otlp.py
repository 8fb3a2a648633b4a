"""POST /v1/logs: OTLP/HTTP logs as protobuf and JSON -> events, partial success, OTLP's error shapes."""

from __future__ import annotations

import base64
import gzip
from datetime import UTC, datetime

import orjson
import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from tests.integration.ingest.util import fields_of, stored

PROTOBUF = {"content-type": "application/x-protobuf"}
T0 = 1_795_248_930_123_456_789  # 2026-11-21T08:15:30.123456789Z
T0_DT = datetime(2026, 11, 21, 8, 15, 30, 123456, tzinfo=UTC)


def otlp_request(records: int = 2) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    attr = rl.resource.attributes.add()
    attr.key, attr.value.string_value = "service.name", "checkout"
    sl = rl.scope_logs.add()
    sl.scope.name, sl.scope.version = "app.payments", "1.4.2"
    for i in range(records):
        r = sl.log_records.add()
        r.time_unix_nano = T0 + i * 1_000_000_000
        r.severity_number, r.severity_text = 17, "ERROR"
        r.body.string_value = f"payment {i} declined"
        r.trace_id = bytes(range(16))
        r.span_id = bytes(range(8))
        r.flags = 1
        a = r.attributes.add()
        a.key, a.value.int_value = "http.status_code", 402
        a = r.attributes.add()
        a.key = "retry"
        a.value.kvlist_value.values.add(key="count", value={"int_value": i})
        a.value.kvlist_value.values.add(key="ok", value={"bool_value": False})
        a = r.attributes.add()
        a.key = "tags"
        a.value.array_value.values.add(string_value="a")
        a.value.array_value.values.add(double_value=1.5)
        a = r.attributes.add()
        a.key, a.value.bytes_value = "raw", b"\x00\xff"
    return req


EXPECTED_0 = {
    "message": "payment 0 declined",
    "severity_text": "ERROR",
    "severity_number": 17,
    "trace_id": "000102030405060708090a0b0c0d0e0f",
    "span_id": "0001020304050607",
    "flags": 1,
    "attributes.http.status_code": 402,
    "attributes.retry.count": 0,
    "attributes.retry.ok": False,
    "attributes.tags": ["a", 1.5],
    "attributes.raw": base64.b64encode(b"\x00\xff").decode(),
    "scope.name": "app.payments",
    "scope.version": "1.4.2",
    "resource.service.name": "checkout",
}


def otlp_json(req: ExportLogsServiceRequest) -> bytes:
    """OTLP/JSON of a request: proto3 JSON with hex trace and span ids."""
    doc = json_format.MessageToDict(req)
    for rl in doc["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in r:
                        r[key] = base64.b64decode(r[key]).hex()
    return orjson.dumps(doc)


async def test_protobuf_records_become_events(client, auth, db):
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=otlp_request().SerializeToString())
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/x-protobuf"
    answer = ExportLogsServiceResponse.FromString(r.content)
    assert not answer.HasField("partial_success")
    rows = await stored(db, "otel-logs")
    assert [row["time"] for row in rows] == [T0_DT, T0_DT.replace(second=31)]
    assert rows[0]["data"] == EXPECTED_0
    assert rows[1]["data"]["attributes.retry.count"] == 1
    fields = await fields_of(db, "otel-logs")
    assert fields["attributes.http.status_code"] == ["number"]


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
async def test_json_gives_the_same_events_as_protobuf(client, auth, db, compress):
    req = otlp_request()
    r = await client.post(
        "/v1/logs", headers={**auth, **PROTOBUF, "x-beacon-dataset": "from-proto"}, content=req.SerializeToString()
    )
    assert r.status_code == 200
    body = otlp_json(req)
    headers = {**auth, "content-type": "application/json", "x-beacon-dataset": "from-json"}
    if compress:
        body = gzip.compress(body)
        headers["content-encoding"] = "gzip"
    r = await client.post("/v1/logs", headers=headers, content=body)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {}
    from_proto = await stored(db, "from-proto")
    from_json = await stored(db, "from-json")
    assert [(x["time"], x["data"]) for x in from_json] == [(x["time"], x["data"]) for x in from_proto]
    assert from_json[0]["data"] == EXPECTED_0
