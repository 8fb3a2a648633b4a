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


async def test_a_map_body_is_the_events_fields_and_times_fall_back(client, auth, db):
    req = ExportLogsServiceRequest()
    records = req.resource_logs.add().scope_logs.add().log_records
    a = records.add(observed_time_unix_nano=T0)  # no time_unix_nano: the observed time
    a.body.kvlist_value.values.add(key="level", value={"string_value": "warn"})
    a.body.kvlist_value.values.add(
        key="http", value={"kvlist_value": {"values": [{"key": "status", "value": {"int_value": 503}}]}}
    )
    records.add(time_unix_nano=1_000_000_000, body={"int_value": 7})  # 1970: before nanoseconds read by magnitude
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=req.SerializeToString())
    assert r.status_code == 200, r.text
    rows = await stored(db, "otel-logs")
    assert [(row["time"], row["data"]) for row in rows] == [
        (datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC), {"message": 7}),
        (T0_DT, {"level": "warn", "http.status": 503}),
    ]


async def test_rejected_records_are_a_partial_success(client, auth, db):
    req = otlp_request(3)
    records = req.resource_logs[0].scope_logs[0].log_records
    records[1].body.string_value = "x" * (1024 * 1024 + 1)  # over the 1 MB event limit
    records[2].time_unix_nano = 10**19  # year 2286: outside the accepted range
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=req.SerializeToString())
    assert r.status_code == 200, r.text
    partial = ExportLogsServiceResponse.FromString(r.content).partial_success
    assert partial.rejected_log_records == 2
    assert "1 MB" in partial.error_message and "range" in partial.error_message
    assert [row["data"]["message"] for row in await stored(db, "otel-logs")] == ["payment 0 declined"]


async def test_broken_protobuf_keeps_the_records_that_read(client, auth, db):
    whole = otlp_request(3).SerializeToString()
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=whole[:-20])  # truncated
    assert r.status_code == 200, r.text
    partial = ExportLogsServiceResponse.FromString(r.content).partial_success
    assert partial.rejected_log_records == 1
    assert [row["data"]["message"] for row in await stored(db, "otel-logs")] == [
        "payment 0 declined",
        "payment 1 declined",
    ]
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=b"\xff\xff\xff garbage")
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/x-protobuf"
    status = Status.FromString(r.content)
    assert status.code == 3 and "ExportLogsServiceRequest" in status.message
    r = await client.post("/v1/logs", headers={**auth, "content-type": "application/json"}, content=b"{nope")
    assert r.status_code == 400 and r.json()["code"] == 3 and "req_" in r.json()["message"]


async def test_json_records_that_do_not_fit_are_rejected_alone(client, auth, db):
    doc = orjson.loads(otlp_json(otlp_request(3)))
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    records[0]["traceId"] = "not hex"
    records[1]["timeUnixNano"] = "soon"
    r = await client.post("/v1/logs", headers={**auth, "content-type": "application/json"}, content=orjson.dumps(doc))
    assert r.status_code == 200, r.text
    partial = r.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "2"
    assert "traceId" in partial["errorMessage"] and "timeUnixNano" in partial["errorMessage"]
    assert [row["data"]["message"] for row in await stored(db, "otel-logs")] == ["payment 2 declined"]


async def test_dataset_header_auth_forms_and_otlp_errors(client, admin_token, make_token, db):
    body = otlp_request(1).SerializeToString()
    basic = base64.b64encode(f"otel:{admin_token}".encode()).decode()
    r = await client.post(
        "/v1/logs", headers={"authorization": f"Basic {basic}", **PROTOBUF, "x-beacon-dataset": "svc"}, content=body
    )
    assert r.status_code == 200, r.text
    assert len(await stored(db, "svc")) == 1
    r = await client.post("/v1/logs", headers=PROTOBUF, content=body)
    assert r.status_code == 401
    assert Status.FromString(r.content).code == 16
    limited = await make_token(["ingest"], datasets=["svc"])
    r = await client.post("/v1/logs", headers={"authorization": f"Bearer {limited}", **PROTOBUF}, content=body)
    assert r.status_code == 403  # the default dataset is not this token's
    assert Status.FromString(r.content).code == 7
    r = await client.post(
        "/v1/logs",
        headers={"authorization": f"Bearer {limited}", **PROTOBUF, "x-beacon-dataset": "bad name"},
        content=body,
    )
    assert r.status_code == 400
    reader = await make_token(["query"])
    r = await client.post("/v1/logs", headers={"authorization": f"Bearer {reader}", **PROTOBUF}, content=body)
    assert r.status_code == 403
    r = await client.post(
        "/v1/logs", headers={"authorization": f"Bearer {admin_token}", "content-type": "text/plain"}, content=body
    )
    assert r.status_code == 415
    assert len(await stored(db)) == 1


async def test_records_stamped_on_arrival_are_warned_about(client, auth, db):
    req = ExportLogsServiceRequest()
    record = req.resource_logs.add().scope_logs.add().log_records.add()  # no time, no observed time
    record.body.kvlist_value.values.add(key="ts", value={"string_value": "2026-11-21T08:15:30Z"})
    r = await client.post("/v1/logs", headers={**auth, **PROTOBUF}, content=req.SerializeToString())
    assert r.status_code == 200, r.text
    partial = ExportLogsServiceResponse.FromString(r.content).partial_success
    assert partial.rejected_log_records == 0
    assert "stamped with their arrival time" in partial.error_message and "`ts`" in partial.error_message
    (row,) = await stored(db, "otel-logs")
    assert row["data"] == {"ts": "2026-11-21T08:15:30Z"}
