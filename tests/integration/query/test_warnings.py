"""Query results warn about fields the dataset has never had (they read as null: a typo answers 0 silently)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.services import services_of
from tests.integration.ingest.util import ndjson, post_events
from tests.integration.query.conftest import WEB_EVENTS
from tests.integration.query.loader import load_events

Client = AsyncTestClient[Litestar]

EVENTS = [
    {"_time": 1795248930 + i, "status": 200 if i % 2 else 503, "http": {"path": "/a"}, "Service": "api"}
    for i in range(6)
]


async def _query(client: Client, auth: dict[str, str], apl: str) -> dict[str, Any]:
    resp = await client.post("/v1/query", json={"apl": apl, "start_time": "2026-11-20T00:00:00Z"}, headers=auth)
    assert resp.status_code == 200, resp.text
    out: dict[str, Any] = resp.json()
    return out


async def _ingest(client: Client, auth: dict[str, str]) -> None:
    resp = await post_events(client, auth, "web", ndjson(EVENTS))
    assert resp.status_code == 200, resp.text


async def test_a_misspelt_field_is_named_with_the_closest_known_one(client: Client, auth: dict[str, str]) -> None:
    await _ingest(client, auth)
    out = await _query(client, auth, "['web'] | where statuss >= 500 | count")
    assert out["rows"] == [[0]]  # the answer is what it was: only the warning is new
    assert out["warnings"] == [
        {
            "code": "unknown_field",
            "message": "No event of dataset 'web' has ever had a field `statuss`: it reads as null in every event; "
            "did you mean `status`?",
            "field": "statuss",
            "suggestion": "status",
            "param": None,
        }
    ]


async def test_fields_the_dataset_has_give_no_warning(client: Client, auth: dict[str, str]) -> None:
    await _ingest(client, auth)
    apl = (
        "['web'] | where status >= 500 and ['http.path'] == '/a' | extend s = status * 2 "
        "| summarize n = count(), total = sum(s) by Service, bin(_time, 1m) | where n > 0"
    )
    out = await _query(client, auth, apl)
    assert out["warnings"] == []
    assert out["rows"][0][2:] == [3, 3018]


async def test_every_place_a_field_is_named_is_checked_once(client: Client, auth: dict[str, str]) -> None:
    await _ingest(client, auth)
    apl = (
        "['web'] | extend x = lenght | where service == 'api' or service == 'web' | project-away nothing_here "
        "| summarize sum(bytes) by Status"
    )
    out = await _query(client, auth, apl)
    warned = [(w["field"], w["suggestion"]) for w in out["warnings"]]
    # In the order the query names them; case differences point at the field as written in the events.
    assert warned == [
        ("lenght", None),
        ("service", "Service"),
        ("nothing_here", None),
        ("bytes", None),
        ("Status", "status"),
    ]
    assert out["warnings"][0]["message"].endswith("it reads as null in every event.")


async def test_a_computed_column_is_not_a_field(client: Client, auth: dict[str, str]) -> None:
    await _ingest(client, auth)
    out = await _query(client, auth, "['web'] | extend statuss = status | where statuss >= 500 | count")
    assert out["warnings"] == []
    assert out["rows"] == [[3]]


async def test_a_dataset_without_recorded_fields_is_not_judged(client: Client, auth: dict[str, str]) -> None:
    """Rows written other than by ingest (no fields recorded): nothing to compare against, no warnings."""
    await load_events(services_of(client.app).settings.database_url, "raw", WEB_EVENTS)
    resp = await client.post("/v1/query", json={"apl": "['raw'] | where statuss > 1 | count"}, headers=auth)
    assert resp.json()["warnings"] == []


async def test_the_openapi_document_describes_the_warnings(client: Client) -> None:
    doc = (await client.get("/schema/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    code = schemas["ResultWarning"]["properties"]["code"]
    assert (
        code["enum"]
        == [
            "unknown_field",
            "unknown_dataset",
            "time_from_arrival",
            "too_many_fields",
            "too_many_cells",
        ]
        and code["description"]
    )
    for answer in ("QueryResult", "IngestResult", "MonitorSaved"):
        warnings = schemas[answer]["properties"]["warnings"]
        assert warnings["items"] == {"$ref": "#/components/schemas/ResultWarning"} and warnings["description"]
    for method, path, status in (("post", "/v1/monitors", "201"), ("patch", "/v1/monitors/{monitor_id}", "200")):
        content = doc["paths"][path][method]["responses"][status]["content"]["application/json"]
        assert content["schema"] == {"$ref": "#/components/schemas/MonitorSaved"}


async def test_an_unknown_dataset_names_the_closest_one_the_token_may_read(
    client: Client, auth: dict[str, str], make_token: Any
) -> None:
    await _ingest(client, auth)  # into 'web'
    resp = await post_events(client, auth, "web-secret", ndjson([{"a": 1}]))
    assert resp.status_code == 200
    for path in ("/v1/query", "/v1/export"):
        resp = await client.post(path, json={"apl": "['wbe'] | count"}, headers=auth)
        assert resp.status_code == 404
        assert resp.json()["error"]["message"] == "No dataset named 'wbe'. Did you mean 'web'?"
    # A token limited to datasets hears only of its own.
    limited = {"Authorization": f"Bearer {await make_token(['query'], datasets=['web-secrets'])}"}
    resp = await client.post("/v1/query", json={"apl": "['web-secrets'] | count"}, headers=limited)
    assert resp.status_code == 404 and resp.json()["error"]["message"] == "No dataset named 'web-secrets'."
