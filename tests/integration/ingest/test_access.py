"""Who may ingest where: the `ingest` scope, dataset-limited tokens, dataset names."""

from __future__ import annotations

from tests.helpers import assert_error
from tests.integration.ingest.util import ndjson, post_events


async def test_needs_ingest_scope(client, make_token):
    token = await make_token(["query", "datasets:read"])
    r = await post_events(client, {"Authorization": f"Bearer {token}"}, "web", ndjson([{"a": 1}]))
    err = assert_error(r, 403, "insufficient_scope")
    assert "ingest" in err["message"]


async def test_dataset_limited_token(client, make_token, db):
    token = await make_token(["ingest"], datasets=["web"])
    h = {"Authorization": f"Bearer {token}"}
    assert (await post_events(client, h, "web", ndjson([{"a": 1}]))).json()["ingested"] == 1
    err = assert_error(await post_events(client, h, "billing", ndjson([{"a": 1}])), 403, "insufficient_scope")
    assert "billing" in err["message"]


async def test_no_token(client):
    assert_error(await post_events(client, {}, "web", ndjson([{"a": 1}])), 401, "missing_token")


async def test_bad_dataset_name(client, auth):
    for name in ("-web", "web logs", "x" * 129, "wéb"):
        assert_error(
            await post_events(client, auth, name, ndjson([{"a": 1}])), 400, "invalid_parameter", param="dataset"
        )


async def test_openapi_describes_the_ingest_body(client):
    doc = (await client.get("/schema/openapi.json")).json()
    operation = doc["paths"]["/v1/ingest/{dataset}"]["post"]
    assert set(operation["requestBody"]["content"]) == {"application/json", "application/x-ndjson"}
    assert {p["name"] for p in operation["parameters"]} == {"dataset", "timestamp-field", "timestamp-format"}
    assert "/v1/datasets/{name}/fields" in doc["paths"]
