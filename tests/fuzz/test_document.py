"""The OpenAPI document a user reads and generates clients from: not bare, and saying what the server does.

Served by the real app (no request reaches the database to serve it). Every operation has a summary and a
description, every parameter a description, every datetime `format: date-time`, the version is the package's,
NDJSON is described, and the bounds the server checks are in it, from the definitions it checks them with.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from app.asgi import create_app
from app.openapi_document import NOT_DATETIMES, PREVIEW_PARTS, is_datetime_name, operations, request_components
from app.pagination import DEFAULT_LIMIT, MAX_LIMIT
from app.settings import Settings

Doc = dict[str, Any]


@pytest.fixture(scope="module")
def client() -> Any:
    settings = Settings(database_url="postgresql://postgres@127.0.0.1:9/unused", data_dir=Path("/nonexistent"))
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture(scope="module")
def doc(client: Any) -> Doc:
    found: Doc = client.get("/schema/openapi.json").json()
    return found


def test_the_version_is_the_packages(doc: Doc) -> None:
    assert doc["info"]["version"] == version("beacon") == "0.1.0"


def test_every_operation_has_a_summary_and_a_description(doc: Doc) -> None:
    bare = [
        f"{method.upper()} {path}"
        for method, path, op in operations(doc)
        if not (op.get("summary") or "").strip() or not (op.get("description") or "").strip()
    ]
    assert not bare
    # Not Litestar's stand-in, the handler's name title-cased ("Create", "List", "RotateSecret").
    named = [op["summary"] for _m, _p, op in operations(doc) if " " not in op["summary"]]
    assert not named


def test_every_parameter_is_described(doc: Doc) -> None:
    bare = [
        f"{method.upper()} {path} {param['in']} {param['name']}"
        for method, path, op in operations(doc)
        for param in op.get("parameters", ())
        if not (param.get("description") or "").strip()
    ]
    assert not bare


def _strings(schema: Doc) -> list[Doc]:
    found = [schema] if schema.get("type") == "string" else []
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, ()):
            found.extend(_strings(branch))
    return found


def test_every_datetime_is_a_date_time(doc: Doc) -> None:
    requests = set(request_components(doc))
    plain = []
    for name, schema in doc["components"]["schemas"].items():
        if name in NOT_DATETIMES or name in PREVIEW_PARTS:  # a preview's made-up event: text shown as it is
            continue
        for field, value in schema.get("properties", {}).items():
            texts = _strings(value)
            if is_datetime_name(field) and texts and not any(t.get("format") == "date-time" for t in texts):
                if name not in requests or field not in ("time", "start_time", "end_time"):
                    plain.append(f"{name}.{field}")
    assert not plain
    # And the request datetimes the server parses (a preview's made-up event and a query's times aside, which are
    # text as the query language reads them).
    assert any(
        t.get("format") == "date-time"
        for t in _strings(doc["components"]["schemas"]["TokenCreate"]["properties"]["expires_at"]["oneOf"][0])
    )


def test_ndjson_is_described_for_generators(doc: Doc) -> None:
    ingest = doc["paths"]["/v1/ingest/{dataset}"]["post"]["requestBody"]["content"]
    assert ingest["application/x-ndjson"]["schema"]["type"] == "string"
    assert "application/json" in ingest
    export = doc["paths"]["/v1/export"]["post"]["responses"]["200"]["content"]
    assert export["application/x-ndjson"]["schema"]["type"] == "string"


def test_the_servers_bounds_are_in_the_document(doc: Doc) -> None:
    limits = [
        param["schema"]
        for _m, _p, op in operations(doc)
        for param in op.get("parameters", ())
        if param["name"] == "limit"
    ]
    assert limits and all(
        (s.get("minimum"), s.get("maximum"), s.get("default")) == (1, MAX_LIMIT, DEFAULT_LIMIT) for s in limits
    )
    (state,) = [p for p in doc["paths"]["/v1/monitors"]["get"]["parameters"] if p["name"] == "state"]
    assert state["schema"]["enum"] == ["ok", "alerting", "no_data", "error"]


def test_405_lists_the_methods_of_the_path(client: Any) -> None:
    """(OPTIONS needs a token, so the fuzz run checks its `Allow`: schemathesis' allow_header_conformance.)"""
    r = client.request("TRACE", "/v1/annotations")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    assert set(r.headers["allow"].split(", ")) == {"GET", "POST", "OPTIONS"}


def test_operation_ids_are_unique_readable_and_follow_one_rule(doc: Doc) -> None:
    """The names generated clients give their functions (app/operation_ids.py): camelCase, a verb first, unique,
    and what a user would call them."""
    ids = {f"{method.upper()} {path}": op["operationId"] for method, path, op in operations(doc)}
    assert len(set(ids.values())) == len(ids)
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", i) for i in ids.values()), ids
    for label, found in ids.items():
        method, path = label.split(" ")
        item = path.endswith("}")
        if method == "GET" and not item and path.rsplit("/", 1)[-1] in ("tokens", "annotations", "monitors"):
            assert found.startswith("list"), label
        expected_verb = {"PATCH": "update", "PUT": "replace" if path == "/v1/routing" else "put"}.get(method)
        if expected_verb and not path.startswith("/v1/elastic"):
            assert found.startswith(expected_verb), (label, found)
        if method == "DELETE":
            assert found.startswith(("delete", "revoke", "expire")), (label, found)
    assert {
        "GET /v1/tokens": "listTokens",
        "POST /v1/tokens": "createToken",
        "DELETE /v1/tokens/{token_id}": "revokeToken",
        "POST /v1/annotations": "createAnnotation",
        "GET /v1/annotations/{annotation_id}": "getAnnotation",
        "PATCH /v1/annotations/{annotation_id}": "updateAnnotation",
        "DELETE /v1/annotations/{annotation_id}": "deleteAnnotation",
        "POST /v1/notifiers/{notifier_id}/rotate-secret": "rotateNotifierSecret",
        "GET /v1/notifiers/{notifier_id}/deliveries": "listNotifierDeliveries",
        "GET /v1/datasets/{name}/fields": "listDatasetFields",
        "GET /v1/monitors/{monitor_id}/history": "getMonitorHistory",
        "GET /v1/alerts/groups": "listAlertGroups",
        "POST /v1/alerts": "postAlerts",
        "DELETE /v1/silences/{silence_id}": "expireSilence",
        "POST /v1/routing/import": "importRoutingConfig",
        "GET /v1/routing/status": "getRoutingStatus",
        "POST /v1/query": "runQuery",
        "POST /v1/export": "exportQuery",
        "POST /v1/ingest/{dataset}": "ingestEvents",
        "POST /v1/elastic/_bulk": "postElasticBulk",
        "GET /v1/elastic/_index_template/{name}": "getElasticIndexTemplate",
    }.items() <= ids.items()
