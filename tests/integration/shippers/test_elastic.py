"""The Elasticsearch-compatible API: `_bulk` -> events with per-item results, the probes, Elasticsearch's errors."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import orjson

from tests.integration.ingest.util import fields_of, stored

NDJSON = {"content-type": "application/x-ndjson"}
T1 = "2026-11-21T08:15:30.123+00:00"
T1_DT = datetime(2026, 11, 21, 8, 15, 30, 123000, tzinfo=UTC)


def bulk_body(*lines: object) -> bytes:
    return b"".join((line if isinstance(line, bytes) else orjson.dumps(line)) + b"\n" for line in lines)


async def test_bulk_stores_documents_with_their_timestamp(client, auth, db):
    body = bulk_body(
        {"index": {"_index": "web"}},
        {"@timestamp": T1, "MESSAGE": "GET /", "http": {"status": 200}},
        {"create": {"_index": "web", "_id": "abc"}},
        {"@timestamp": T1, "MESSAGE": "GET /x"},
    )
    r = await client.post("/v1/elastic/_bulk", headers={**auth, **NDJSON}, content=body)
    assert r.status_code == 200, r.text
    assert r.headers["x-elastic-product"] == "Elasticsearch"
    answer = r.json()
    assert answer["errors"] is False
    assert [list(item) for item in answer["items"]] == [["index"], ["create"]]
    first, second = answer["items"][0]["index"], answer["items"][1]["create"]
    assert first["status"] == 201 and first["result"] == "created" and first["_index"] == "web" and first["_id"]
    assert second["_id"] == "abc"
    rows = await stored(db, "web")
    assert [(row["time"], row["data"]) for row in rows] == [
        (T1_DT, {"MESSAGE": "GET /", "http.status": 200}),
        (T1_DT, {"MESSAGE": "GET /x"}),
    ]
    assert (await fields_of(db, "web"))["http.status"] == ["number"]


async def test_bad_items_fail_alone_and_the_rest_is_stored(client, auth, db, make_token):
    token = await make_token(["ingest"], datasets=["web", "app"])
    body = bulk_body(
        {"index": {"_index": "web"}},
        {"message": "one"},
        b'{"index": {"_index": "web"',  # a bad action line: its document is skipped with it
        {"message": "lost with its action"},
        {"delete": {"_index": "web", "_id": "1"}},
        {"update": {"_index": "web", "_id": "1"}},
        {"doc": {"message": "x"}},
        {"index": {"_index": "Bad Name!"}},
        {"message": "bad index"},
        {"index": {"_index": "other"}},
        {"message": "not this token's dataset"},
        {"index": {"_index": "app"}},
        b"[1, 2]",  # not an object
        {"index": {}},  # no index: the path's
        {"message": "two", "@timestamp": "yesterday at noon"},  # a timestamp that does not parse
        {"index": {"_index": "web"}},
        {"message": "three"},
    )
    r = await client.put(
        "/v1/elastic/app/_bulk",
        headers={"authorization": f"Bearer {token}", **NDJSON},
        content=b"\n" + body.replace(b"\n", b"\n\n"),  # blank lines between, as rsyslog sends
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["errors"] is True
    results = [
        (action, item["status"], item.get("error", {}).get("type"))
        for i in answer["items"]
        for action, item in i.items()
    ]
    assert results == [
        ("index", 201, None),
        ("index", 400, "illegal_argument_exception"),
        ("delete", 400, "illegal_argument_exception"),
        ("update", 400, "illegal_argument_exception"),
        ("index", 400, "invalid_index_name_exception"),
        ("index", 403, "security_exception"),
        ("index", 400, "document_parsing_exception"),
        ("index", 400, "document_parsing_exception"),
        ("index", 201, None),
    ]
    assert "not a JSON object" in answer["items"][6]["index"]["error"]["reason"]
    assert answer["items"][7]["index"]["_index"] == "app"
    assert [row["data"]["message"] for row in await stored(db, "web")] == ["one", "three"]
    assert await stored(db, "app") == []
    assert await stored(db, "other") == []


async def test_elastic_clients_media_type_and_basic_auth(client, admin_token, db):
    basic = base64.b64encode(f"elastic:{admin_token}".encode()).decode()
    body = bulk_body({"index": {"_index": "es"}}, {"message": "hi"})
    r = await client.put(
        "/v1/elastic/_bulk",
        headers={
            "authorization": f"Basic {basic}",
            "content-type": "application/vnd.elasticsearch+x-ndjson; compatible-with=8",
            "accept": "application/vnd.elasticsearch+json; compatible-with=8",
        },
        content=body,
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/vnd.elasticsearch+json;compatible-with=8"
    api_key = base64.b64encode(f"beacon:{admin_token}".encode()).decode()
    r = await client.post("/v1/elastic/_bulk", headers={"authorization": f"ApiKey {api_key}", **NDJSON}, content=body)
    assert r.status_code == 200, r.text
    assert len(await stored(db, "es")) == 2


async def test_errors_have_elasticsearchs_shape(client, auth):
    r = await client.get("/v1/elastic/")
    assert r.status_code == 401
    assert r.headers["x-elastic-product"] == "Elasticsearch"
    assert "Basic" in r.headers["www-authenticate"]
    error = r.json()
    assert error["status"] == 401
    assert error["error"]["type"] == "security_exception"
    assert error["error"]["root_cause"][0]["type"] == "security_exception"
    wrong = base64.b64encode(b"elastic:bcn_nope").decode()
    r = await client.get("/v1/elastic/", headers={"authorization": f"Basic {wrong}"})
    assert r.status_code == 401 and r.json()["error"]["type"] == "security_exception"
    r = await client.post("/v1/elastic/_bulk", headers={**auth, **NDJSON}, content=b"\n\n")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "parse_exception"
    r = await client.post("/v1/elastic/_bulk", headers={**auth, "content-type": "text/csv"}, content=b"a,b")
    assert r.status_code == 415 and r.json()["error"]["type"] == "media_type_header_exception"
    r = await client.get("/v1/elastic/_nodes", headers=auth)
    assert r.status_code == 404 and r.json()["status"] == 404
    assert r.headers["x-elastic-product"] == "Elasticsearch"


async def test_probes_answer_as_elasticsearch_8(client, auth):
    root = await client.get("/v1/elastic/", headers=auth)
    assert root.status_code == 200
    assert root.json()["version"]["number"].startswith("8.")
    assert root.json()["tagline"] == "You Know, for Search"
    assert (await client.head("/v1/elastic", headers=auth)).status_code == 200
    assert (await client.get("/v1/elastic/_license", headers=auth)).json()["license"]["status"] == "active"
    assert (await client.get("/v1/elastic/_cluster/health", headers=auth)).json()["status"] == "green"
    assert " green " in (await client.get("/v1/elastic/_cat/health", headers=auth)).text
    cat = await client.get("/v1/elastic/_cat/health", headers=auth, params={"format": "json"})
    assert cat.json()[0]["status"] == "green"
    for kind in ("_template", "_index_template"):
        assert (await client.head(f"/v1/elastic/{kind}/logs", headers=auth)).status_code == 404
        assert (await client.get(f"/v1/elastic/{kind}/logs", headers=auth)).json()["status"] == 404
        put = await client.put(f"/v1/elastic/{kind}/logs", headers=auth, json={"index_patterns": ["logs-*"]})
        assert put.json() == {"acknowledged": True}


async def test_openapi_documents_each_protocols_own_shapes(client):
    doc = (await client.get("/schema/openapi.json")).json()
    shippers = {(m, p): op for p, item in doc["paths"].items() for m, op in item.items() if "shippers" in op["tags"]}
    assert {("post", "/v1/logs"), ("put", "/v1/elastic/_bulk"), ("post", "/v1/loki/api/v1/push")} <= set(shippers)
    for (method, path), op in shippers.items():
        for status, response in op["responses"].items():
            assert "ErrorEnvelope" not in str(response), (method, path, status)
    logs = shippers[("post", "/v1/logs")]["responses"]
    assert set(logs["400"]["content"]) == {"application/x-protobuf", "application/json"}
    assert set(shippers[("post", "/v1/loki/api/v1/push")]["responses"]["400"]["content"]) == {"text/plain"}


async def test_documents_stamped_on_arrival_are_warned_about(client, auth, db):
    body = bulk_body({"index": {"_index": "web"}}, {"timestamp": "2026-11-21T08:15:30Z", "message": "no @timestamp"})
    r = await client.post("/v1/elastic/_bulk", headers={**auth, **NDJSON}, content=body)
    assert r.status_code == 200 and r.json()["errors"] is False
    assert r.headers["warning"].startswith('299 Beacon "web: events without `@timestamp`')
    assert "`timestamp`" in r.headers["warning"]
    (row,) = await stored(db, "web")
    assert row["time"] == row["sys_time"]
