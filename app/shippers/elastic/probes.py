"""The requests shippers make before they send, answered as a one-node Elasticsearch 8 cluster would, enough for
them to go on: the cluster's root (`GET`/`HEAD /`), `_license`, `_cat/health`, `_cluster/health`, and index
templates (`_template`, `_index_template`: a template is acknowledged and not kept, as Beacon has no mappings)."""

from __future__ import annotations

import time
from typing import Any

from litestar import Request, Response, get, head, put

from app.access import requires
from app.shippers import openapi
from app.shippers.elastic.answers import ElasticError, answer, empty

VERSION = "8.11.0"  # the Elasticsearch version announced: shippers pick their request format by its major
CLUSTER = "beacon"
_UUID = "YmVhY29uLWJlYWNvbi1i"  # fixed: the cluster is the same one across restarts
_JSON = {"application/json": openapi.OBJECT}
_ERRORS = openapi.errors("Elasticsearch's error shape.", _JSON, openapi.EVERY_ROUTE)
_PROBE = openapi.operation_class(responses={200: ("As Elasticsearch 8 answers it.", _JSON), **_ERRORS})
_HEAD = openapi.operation_class(
    responses={200: ("The cluster is there.", {}), **{s: ("Refused.", {}) for s in openapi.EVERY_ROUTE}}
)
_TEXT_OR_JSON = openapi.operation_class(
    responses={200: ("As Elasticsearch 8 answers it.", {"text/plain": openapi.TEXT, **_JSON}), **_ERRORS}
)
_TEMPLATE_GET = openapi.operation_class(
    responses={404: ("No template is kept.", _JSON), **_ERRORS},
)
_TEMPLATE_HEAD = openapi.operation_class(
    responses={404: ("No template is kept.", {}), **{s: ("Refused.", {}) for s in openapi.EVERY_ROUTE}}
)
_TEMPLATE_PUT = openapi.operation_class(
    body=("An index template (acknowledged, not kept).", {"application/json": openapi.OBJECT}),
    responses={
        200: ("`{acknowledged: true}`.", _JSON),
        **_ERRORS,
        404: ("The path cannot name a template (it holds a NUL).", _JSON),
        413: ("Too large.", _JSON),
    },
)
_PROBES: dict[str, Any] = {"opt": requires("ingest"), "tags": ["shippers"]}


def _root() -> dict[str, Any]:
    return {
        "name": CLUSTER,
        "cluster_name": CLUSTER,
        "cluster_uuid": _UUID,
        "version": {
            "number": VERSION,
            "build_flavor": "default",
            "build_type": "docker",
            "build_hash": "beacon",
            "build_date": "2023-11-04T10:04:57.184859352Z",
            "build_snapshot": False,
            "lucene_version": "9.8.0",
            "minimum_wire_compatibility_version": "7.17.0",
            "minimum_index_compatibility_version": "7.0.0",
        },
        "tagline": "You Know, for Search",
    }


@get(
    "/v1/elastic",
    operation_class=_PROBE,
    summary="Elasticsearch: the cluster",
    operation_id="getElasticInfo",
    **_PROBES,
)
async def cluster_root(request: Request[Any, Any, Any]) -> Response[bytes]:
    """What Elasticsearch clients read first: a version they accept (8.x). Needs `ingest`."""
    return answer(request, _root())


@head("/v1/elastic", operation_class=_HEAD, summary="Elasticsearch: ping", operation_id="pingElastic", **_PROBES)
async def cluster_ping() -> Response[None]:
    """Elasticsearch clients' ping: 200 when the token is good. Needs `ingest`."""
    return empty(200)


@get(
    "/v1/elastic/_license",
    operation_class=_PROBE,
    summary="Elasticsearch: the license",
    operation_id="getElasticLicense",
    **_PROBES,
)
async def license_info(request: Request[Any, Any, Any]) -> Response[bytes]:
    """An Elasticsearch license, as Beats and Logstash check it before they send. Needs `ingest`."""
    return answer(
        request,
        {
            "license": {
                "status": "active",
                "uid": "beacon",
                "type": "basic",
                "issue_date": "2023-11-04T00:00:00.000Z",
                "issue_date_in_millis": 1699056000000,
                "max_nodes": 1000,
                "max_resource_units": None,
                "issued_to": CLUSTER,
                "issuer": "elasticsearch",
                "start_date_in_millis": -1,
            }
        },
    )


def _health() -> dict[str, Any]:
    return {
        "cluster_name": CLUSTER,
        "status": "green",
        "timed_out": False,
        "number_of_nodes": 1,
        "number_of_data_nodes": 1,
        "active_primary_shards": 0,
        "active_shards": 0,
        "relocating_shards": 0,
        "initializing_shards": 0,
        "unassigned_shards": 0,
        "delayed_unassigned_shards": 0,
        "number_of_pending_tasks": 0,
        "number_of_in_flight_fetch": 0,
        "task_max_waiting_in_queue_millis": 0,
        "active_shards_percent_as_number": 100.0,
    }


@get(
    "/v1/elastic/_cluster/health",
    operation_class=_PROBE,
    summary="Elasticsearch: cluster health",
    operation_id="getElasticClusterHealth",
    **_PROBES,
)
async def cluster_health(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Elasticsearch cluster health: always green (Beacon has no shards). Needs `ingest`."""
    return answer(request, _health())


@get(
    "/v1/elastic/_cat/health",
    operation_class=_TEXT_OR_JSON,
    summary="Elasticsearch: cat health",
    operation_id="getElasticCatHealth",
    **_PROBES,
)
async def cat_health(request: Request[Any, Any, Any], format: str | None = None) -> Response[bytes]:
    """Elasticsearch `_cat/health`, as text or JSON (`format=json`). Needs `ingest`."""
    now = time.time()
    row = {
        "epoch": str(int(now)),
        "timestamp": time.strftime("%H:%M:%S", time.gmtime(now)),
        "cluster": CLUSTER,
        "status": "green",
        "node.total": "1",
        "node.data": "1",
        "shards": "0",
        "pri": "0",
        "relo": "0",
        "init": "0",
        "unassign": "0",
        "pending_tasks": "0",
        "max_task_wait_time": "-",
        "active_shards_percent": "100.0%",
    }
    if format == "json" or "json" in request.headers.get("accept", ""):
        return answer(request, [row])
    text = " ".join(row.values()) + "\n"
    return Response(
        text.encode(), media_type="text/plain; charset=UTF-8", headers={"X-Elastic-Product": "Elasticsearch"}
    )


def _missing(name: str) -> ElasticError:
    return ElasticError(
        "not_found", f"index template matching [{name}] not found", es_type="resource_not_found_exception"
    )


_TEMPLATE_PATHS = ["/v1/elastic/_template/{name:str}", "/v1/elastic/_index_template/{name:str}"]


@get(_TEMPLATE_PATHS, operation_class=_TEMPLATE_GET, summary="Elasticsearch: an index template", **_PROBES)
async def get_template(name: str) -> Response[bytes]:
    """An index template: none is kept, so 404 (shippers then put theirs). Needs `ingest`."""
    raise _missing(name)


@head(_TEMPLATE_PATHS, operation_class=_TEMPLATE_HEAD, summary="Elasticsearch: does an index template exist", **_PROBES)
async def has_template(name: str) -> Response[None]:
    """Whether an index template exists: none is kept, so 404. Needs `ingest`."""
    return empty(404)


@put(_TEMPLATE_PATHS, operation_class=_TEMPLATE_PUT, summary="Elasticsearch: put an index template", **_PROBES)
async def put_template(request: Request[Any, Any, Any], name: str) -> Response[bytes]:
    """Put an index template: acknowledged and not kept (Beacon has no mappings). Needs `ingest`."""
    return answer(request, {"acknowledged": True})
