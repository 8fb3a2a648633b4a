"""POST /v1/loki/api/v1/push: JSON and snappy protobuf -> events, rejected streams and entries, Loki's answers."""

from __future__ import annotations

import base64
import gzip
from datetime import UTC, datetime

import orjson
import snappy

from app.shippers.loki import proto
from tests.integration.ingest.util import stored

URL = "/v1/loki/api/v1/push"
JSON = {"content-type": "application/json"}
PROTOBUF = {"content-type": "application/x-protobuf"}
T0 = 1_795_248_930_123_456_789
T0_DT = datetime(2026, 11, 21, 8, 15, 30, 123456, tzinfo=UTC)


def push_json(*streams: dict) -> bytes:
    return orjson.dumps({"streams": list(streams)})


async def test_json_push(client, auth, db):
    body = push_json(
        {
            "stream": {"job": "api", "dataset": "api-logs"},
            "values": [
                [str(T0), '{"level":"info","msg":"kept as text"}'],
                [str(T0 + 1000), "second", {"trace_id": "abc"}],
            ],
        },
        {"stream": {"job": "worker"}, "values": [[str(T0), "to the default dataset"]]},
    )
    r = await client.post(URL, headers={**auth, **JSON, "content-encoding": "gzip"}, content=gzip.compress(body))
    assert r.status_code == 204, r.text
    assert r.content == b""
    rows = await stored(db, "api-logs")
    assert [(row["time"], row["data"]) for row in rows] == [
        (T0_DT, {"job": "api", "message": '{"level":"info","msg":"kept as text"}'}),
        (T0_DT.replace(microsecond=123457), {"job": "api", "trace_id": "abc", "message": "second"}),
    ]
    assert [row["data"] for row in await stored(db, "loki")] == [{"job": "worker", "message": "to the default dataset"}]


def push_protobuf(streams: list[tuple[str, list[tuple[int, str, dict[str, str]]]]]) -> bytes:
    request = proto.push_request()()
    for labels, entries in streams:
        stream = request.streams.add(labels=labels.encode())
        for time_ns, line, metadata in entries:
            entry = stream.entries.add(line=line.encode())
            entry.timestamp.seconds, entry.timestamp.nanos = divmod(time_ns, 1_000_000_000)
            for name, value in metadata.items():
                entry.structuredMetadata.add(name=name.encode(), value=value.encode())
    return snappy.compress(request.SerializeToString())


async def test_protobuf_push_and_rejected_streams(client, auth, db):
    body = push_protobuf(
        [
            ('{job="api", path="/a\\"b"}', [(T0, "one", {"user": "u1"}), (T0 + 1_000_000_000, "two", {})]),
            ("{}", [(T0, "no labels", {})]),
            ('{job="api"', [(T0, "labels do not parse", {})]),
            ('{job="x", dataset="Bad Name"}', [(T0, "bad dataset", {})]),
            ('{job="api"}', [(T0, "x" * (1024 * 1024 + 1), {}), (T0, "three", {})]),
        ]
    )
    r = await client.post(URL, headers={**auth, **PROTOBUF}, content=body)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("text/plain")
    assert r.text.startswith("4 entries were not stored (the others were):")
    assert "at least one label pair is required per stream" in r.text
    assert "error parsing labels" in r.text and "Bad Name" in r.text and "1 MB" in r.text
    rows = await stored(db, "loki")
    assert [row["data"] for row in rows] == [
        {"job": "api", "message": "three"},  # the same time as "one": ordered by their text
        {"job": "api", "path": '/a"b', "user": "u1", "message": "one"},
        {"job": "api", "path": '/a"b', "message": "two"},
    ]


async def test_header_pins_the_dataset_and_basic_auth(client, admin_token, db):
    basic = base64.b64encode(f"loki:{admin_token}".encode()).decode()
    body = push_json({"stream": {"job": "a", "dataset": "ignored"}, "values": [[str(T0), "x"]]})
    r = await client.post(
        URL, headers={"authorization": f"Basic {basic}", **JSON, "x-beacon-dataset": "pinned"}, content=body
    )
    assert r.status_code == 204, r.text
    assert [row["data"] for row in await stored(db, "pinned")] == [{"job": "a", "dataset": "ignored", "message": "x"}]


async def test_lokis_errors_are_text(client, auth, make_token, db):
    r = await client.post(URL, headers=JSON, content=push_json())
    assert r.status_code == 401 and r.headers["content-type"].startswith("text/plain") and "token" in r.text
    r = await client.post(URL, headers={**auth, **PROTOBUF}, content=b"not snappy")
    assert r.status_code == 400 and "snappy" in r.text
    r = await client.post(URL, headers={**auth, **PROTOBUF}, content=snappy.compress(b"\xff\xff not protobuf"))
    assert r.status_code == 400 and "PushRequest" in r.text
    r = await client.post(URL, headers={**auth, **JSON}, content=b'{"streams": 3}')
    assert r.status_code == 400 and "streams" in r.text
    r = await client.post(URL, headers={**auth, "content-type": "text/plain"}, content=b"x")
    assert r.status_code == 415
    limited = await make_token(["ingest"], datasets=["mine"])
    body = push_json(
        {"stream": {"job": "a", "dataset": "mine"}, "values": [[str(T0), "ok"]]},
        {"stream": {"job": "a", "dataset": "theirs"}, "values": [[str(T0), "no"], ["soon", "bad time"]]},
    )
    r = await client.post(URL, headers={"authorization": f"Bearer {limited}", **JSON}, content=body)
    assert r.status_code == 400 and "may not write to the dataset 'theirs'" in r.text
    assert r.text.startswith("2 entries")
    assert [row["data"]["message"] for row in await stored(db)] == ["ok"]
