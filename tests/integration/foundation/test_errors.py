"""Every error the foundation can produce leaves in the one envelope, with a doc_url that resolves."""

from __future__ import annotations

import re

from litestar import get
from litestar.testing import AsyncTestClient

from app.auth_middleware import shipper_path
from app.errors import ERRORS
from tests.helpers import assert_error


async def test_unknown_route_is_not_found_envelope(client, auth):
    err = assert_error(
        await client.get("/v1/nothing-here", headers=auth), 404, "not_found", type_="invalid_request_error"
    )
    assert "route" in err["message"]
    # Also outside /v1 and without a token.
    assert_error(await client.get("/nowhere"), 404, "not_found")


async def test_method_not_allowed_envelope(client, auth):
    assert_error(await client.put("/v1/tokens", headers=auth, json={}), 405, "method_not_allowed")


async def test_unknown_resource_id_is_not_found(client, auth):
    err = assert_error(await client.get("/v1/tokens/tok_ffff", headers=auth), 404, "not_found")
    assert "tok_ffff" in err["message"]


async def test_body_that_is_not_json(client, auth):
    r = await client.post("/v1/tokens", headers={**auth, "content-type": "application/json"}, content=b"{nope")
    assert_error(r, 400, "invalid_json")


async def test_body_that_is_not_an_object(client, auth):
    r = await client.post("/v1/tokens", headers=auth, json=[1, 2])
    assert_error(r, 400, "invalid_json")


async def test_missing_field_names_param(client, auth):
    assert_error(
        await client.post("/v1/tokens", headers=auth, json={"scopes": ["*"]}), 400, "missing_field", param="name"
    )


async def test_unknown_field_is_invalid_field(client, auth):
    r = await client.post("/v1/tokens", headers=auth, json={"name": "x", "scopes": ["*"], "scopse": ["*"]})
    err = assert_error(r, 400, "invalid_field", param="scopse")
    assert "scopse" in err["message"]


async def test_wrong_type_is_invalid_field(client, auth):
    r = await client.post("/v1/tokens", headers=auth, json={"name": 5, "scopes": ["*"]})
    assert_error(r, 400, "invalid_field", param="name")


async def test_naive_datetime_is_refused(client, auth):
    r = await client.post(
        "/v1/tokens", headers=auth, json={"name": "x", "scopes": ["*"], "expires_at": "2030-01-01T00:00:00"}
    )
    assert_error(r, 400, "invalid_field", param="expires_at")


async def test_invalid_query_parameter(client, auth):
    for value in ("0", "101", "-1"):
        assert_error(
            await client.get(f"/v1/tokens?limit={value}", headers=auth), 400, "invalid_parameter", param="limit"
        )
    assert_error(await client.get("/v1/tokens?limit=ten", headers=auth), 400, "invalid_parameter", param="limit")


async def test_internal_error_has_no_stack_trace(make_app, auth):
    @get("/v1/boom", opt={"scope": "*"})
    async def boom() -> None:
        raise RuntimeError("secret internals")

    app = make_app()
    app.register(boom)
    async with AsyncTestClient(app=app) as c:
        r = await c.get("/v1/boom", headers=auth)
    err = assert_error(r, 500, "internal_error", type_="api_error")
    assert "secret internals" not in r.text and "Traceback" not in r.text
    assert err["message"] == "Internal server error."


async def test_database_unreachable_is_503_with_retry_after(app_client):
    closed = "postgresql+asyncpg://postgres@127.0.0.1:9/nothing"
    async with app_client(database_url=closed) as c:
        r = await c.get("/readyz")
        assert_error(r, 503, "service_unavailable", type_="api_error")
        assert int(r.headers["retry-after"]) >= 1
        r = await c.get("/v1/tokens", headers={"Authorization": "Bearer bcn_x"})
        assert_error(r, 503, "service_unavailable")
        assert int(r.headers["retry-after"]) >= 1
        assert (await c.get("/healthz")).status_code == 200


async def test_error_docs_page_has_an_anchor_per_code(client):
    r = await client.get("/docs/errors")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    anchors = set(re.findall(r'id="([a-z_]+)"', r.text))
    assert set(ERRORS) <= anchors
    for code in ("missing_token", "payload_too_large", "rate_limit_exceeded"):
        assert f'id="{code}"' in r.text
    # Names in the descriptions read as code, never between raw backticks.
    assert "`" not in r.text
    assert "<code>param</code> names it" in r.text and "<code>Retry-After</code>" in r.text


async def test_doc_url_uses_docs_setting(app_client):
    async with app_client(docs_url="https://docs.example.test") as c:
        err = assert_error(await c.get("/v1/tokens"), 401, "missing_token")
    assert err["doc_url"] == "https://docs.example.test/errors#missing_token"


async def test_request_id_on_every_response(client, auth):
    seen = set()
    for r in (await client.get("/healthz"), await client.get("/v1/tokens", headers=auth), await client.get("/x")):
        rid = r.headers["x-request-id"]
        assert re.fullmatch(r"req_[0-9a-f]+", rid)
        seen.add(rid)
    assert len(seen) == 3


async def test_openapi_describes_every_v1_route(client):
    r = await client.get("/schema/openapi.json")
    assert r.status_code == 200
    paths = r.json()["paths"]
    app_paths = {route.path for route in client.app.routes if route.path.startswith("/v1")}
    assert app_paths
    for path in app_paths:
        normalized = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
        assert normalized in paths, f"{path} missing from OpenAPI"


async def test_openapi_documents_the_error_envelope_for_every_status_a_route_answers(client, auth):
    doc = (await client.get("/schema/openapi.json")).json()
    envelope = doc["components"]["schemas"]["ErrorEnvelope"]
    assert envelope["required"] == ["error"]
    detail = doc["components"]["schemas"]["ErrorDetail"]
    assert set(detail["required"]) == {"type", "code", "message", "doc_url", "request_id"}
    assert set(detail["properties"]) == {"type", "code", "message", "doc_url", "request_id", "param"}
    operations = [
        (m.upper(), p, op) for p, item in doc["paths"].items() for m, op in item.items() if p.startswith("/v1")
    ]
    assert len(operations) > 30
    for method, path, op in operations:
        responses = op["responses"]
        errors = {status for status in responses if int(status) >= 400}
        assert {"400", "401", "403", "429", "503"} <= errors, (method, path)
        if "{" in path:
            assert "404" in errors, (method, path)
        if shipper_path(path):  # errors in their protocol's shape, documented as such (tests/integration/shippers)
            continue
        for status in errors:
            schema = responses[status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path, status)
            assert "`" in responses[status]["description"]  # names the codes behind the status
    statuses = {(m, p): set(op["responses"]) for m, p, op in operations}
    assert {"409", "413", "415"} <= statuses[("POST", "/v1/ingest/{dataset}")]
    assert "409" in statuses[("POST", "/v1/deliveries/{delivery_id}/retry")]
    assert "404" in statuses[("POST", "/v1/query")]
    assert "413" in statuses[("POST", "/v1/annotations")]
    # The framework's own error schema is gone.
    assert '"status_code"' not in (await client.get("/schema/openapi.json")).text
