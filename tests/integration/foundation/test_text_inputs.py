"""Text PostgreSQL cannot store or compare is refused before it reaches a statement: a NUL in any path
parameter (404), query parameter or JSON body field (400 naming it), a body that is not UTF-8, and numbers
too large for their column. Before, each of these was a 500 (`invalid byte sequence for encoding "UTF8": 0x00`).
"""

from __future__ import annotations

import json
import re

import pytest

from app.auth_middleware import shipper_path
from tests.helpers import assert_error

NUL = "\x00"
MONITOR = {
    "name": "errors",
    "type": "threshold",
    "apl": "['web'] | summarize count()",
    "operator": "above",
    "threshold": 1,
    "notifier_ids": [],
}


async def _operations(client) -> list[tuple[str, str, dict]]:
    doc = (await client.get("/schema/openapi.json")).json()
    return [
        (method.upper(), path, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in {"get", "post", "patch", "delete"}
    ]


async def test_a_nul_in_any_path_parameter_is_not_found(client, auth):
    checked = 0
    for method, path, _ in await _operations(client):
        if "{" not in path:
            continue
        url = re.sub(r"\{\w+\}", "%00", path)
        r = await client.request(method, url, headers=auth, json={})
        if shipper_path(path):  # the shippers' endpoints answer in their protocol's shape (tests/integration/shippers)
            assert r.status_code == 404 and "NUL" in r.text, (path, r.text)
        else:
            assert_error(r, 404, "not_found")
        checked += 1
    # Every resource with an id, and its sub-resources (history, deliveries, test, retry, ...).
    assert checked >= 20


async def test_a_nul_in_any_query_parameter_is_refused_naming_it(client, auth):
    checked = set()
    for method, path, op in await _operations(client):
        for param in op.get("parameters", []):
            if param["in"] != "query":
                continue
            url = re.sub(r"\{\w+\}", "web", path)
            r = await client.request(method, url, headers=auth, params={param["name"]: f"a{NUL}b"})
            if shipper_path(path):  # in their protocol's shape, naming the parameter
                assert r.status_code == 400 and f"`{param['name']}`" in r.text, (path, r.text)
            else:
                assert_error(r, 400, "invalid_parameter", param=param["name"])
            checked.add(param["name"])
    assert {"monitor_id", "notifier_id", "type", "status", "datasets", "cursor", "state"} <= checked


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/annotations", {"type": f"de{NUL}ploy", "title": "v1", "datasets": ["web"]}, "type"),
        ("/v1/annotations", {"type": "deploy", "title": f"v1{NUL}", "datasets": ["web"]}, "title"),
        ("/v1/annotations", {"type": "d", "title": "t", "datasets": ["web"], "description": NUL}, "description"),
        ("/v1/annotations", {"type": "d", "title": "t", "datasets": [f"w{NUL}"]}, "datasets"),
        ("/v1/tokens", {"name": f"ci{NUL}", "scopes": ["query"]}, "name"),
        ("/v1/notifiers", {"name": f"ops{NUL}", "type": "webhook", "config": {"url": "https://a.example/x"}}, "name"),
        ("/v1/notifiers", {"name": "ops", "type": f"web{NUL}hook", "config": {}}, "type"),
        ("/v1/notifiers", {"name": "o", "type": "webhook", "config": {"url": f"https://a.ex/{NUL}"}}, "config.url"),
        ("/v1/notifiers", {"name": "o", "type": "webhook", "config": {f"u{NUL}rl": "x"}}, f"config.u{NUL}rl"),
        ("/v1/monitors", {**MONITOR, "name": f"e{NUL}"}, "name"),
        ("/v1/monitors", {**MONITOR, "description": f"e{NUL}"}, "description"),
        ("/v1/monitors", {**MONITOR, "apl": f"['web'] | where a == '{NUL}' | summarize count()"}, "apl"),
        ("/v1/query", {"apl": f"['web{NUL}'] | count"}, "apl"),
    ],
)
async def test_a_nul_in_a_body_field_is_refused_naming_it_and_nothing_is_stored(client, auth, path, body, param):
    assert_error(await client.post(path, headers=auth, json=body), 400, "invalid_field", param=param)
    if path != "/v1/query":
        listed = (await client.get(path, headers=auth)).json()["data"]
        assert all(NUL not in str(item) for item in listed)


async def test_a_nul_in_a_patch_is_refused(client, auth):
    created = await client.post("/v1/annotations", headers=auth, json={"type": "d", "title": "t", "datasets": ["web"]})
    ann = created.json()["id"]
    r = await client.patch(f"/v1/annotations/{ann}", headers=auth, json={"title": f"t{NUL}"})
    assert_error(r, 400, "invalid_field", param="title")
    assert (await client.get(f"/v1/annotations/{ann}", headers=auth)).json()["title"] == "t"

    await client.post("/v1/ingest/web", headers={**auth, "content-type": "application/x-ndjson"}, content=b"{}\n")
    r = await client.patch("/v1/datasets/web", headers=auth, json={"description": f"web logs{NUL}"})
    assert_error(r, 400, "invalid_field", param="description")
    assert (await client.get("/v1/datasets/web", headers=auth)).json()["description"] is None


async def test_escaped_backslash_u0000_is_text_not_a_nul(client, auth):
    raw = b'{"type": "d", "title": "\\\\u0000 is six characters", "datasets": ["web"]}'
    r = await client.post("/v1/annotations", headers={**auth, "content-type": "application/json"}, content=raw)
    assert r.status_code == 201, r.text
    assert r.json()["title"] == "\\u0000 is six characters"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": "d", "title": "\xff", "datasets": ["web"]}',  # not UTF-8
        b'{"type": "d", "title": "\xed\xa0\x80", "datasets": ["web"]}',  # an encoded surrogate
        b'{"type": "d", "title": "\\ud800", "datasets": ["web"]}',  # a lone surrogate escape
        b'{"type": "d", "title": "\\udc00x", "datasets": ["web"]}',
    ],
)
async def test_a_body_that_is_not_utf8_text_is_invalid_json(client, auth, raw):
    r = await client.post("/v1/annotations", headers={**auth, "content-type": "application/json"}, content=raw)
    assert_error(r, 400, "invalid_json")
    assert (await client.get("/v1/annotations", headers=auth)).json()["data"] == []


async def test_invalid_utf8_in_path_and_query_is_not_an_error_of_ours(client, auth):
    assert_error(await client.get("/v1/notifiers/%ff%fe", headers=auth), 404, "not_found")
    assert_error(await client.get("/v1/monitors/%ed%a0%80/history", headers=auth), 404, "not_found")
    for url in ("/v1/annotations?type=%ff", "/v1/notifiers?type=%ed%a0%80", "/v1/deliveries?monitor_id=%c3"):
        r = await client.get(url, headers=auth)
        assert r.status_code == 200 and r.json()["data"] == [], r.text


@pytest.mark.parametrize(
    ("method", "path", "body", "param"),
    [
        ("POST", "/v1/monitors", {**MONITOR, "interval_seconds": 10**30}, "interval_seconds"),
        ("POST", "/v1/monitors", {**MONITOR, "range_seconds": -(10**30)}, "range_seconds"),
        ("POST", "/v1/monitors", {**MONITOR, "trigger_after": {"m": 1, "n": 10**30}}, "trigger_after.n"),
        ("PATCH", "/v1/datasets/web", {"retention_days": 10**30}, "retention_days"),
    ],
)
async def test_numbers_too_large_for_their_column_are_refused(client, auth, method, path, body, param):
    await client.post("/v1/ingest/web", headers={**auth, "content-type": "application/x-ndjson"}, content=b"{}\n")
    assert_error(await client.request(method, path, headers=auth, json=body), 400, "invalid_field", param=param)


async def test_a_number_beyond_a_double_is_invalid_json(client, auth):
    raw = json.dumps({**MONITOR, "threshold": 0}).replace('"threshold": 0,', '"threshold": 1e400,')
    r = await client.post("/v1/monitors", headers={**auth, "content-type": "application/json"}, content=raw)
    assert_error(r, 400, "invalid_json")


@pytest.mark.parametrize("path", ["/v1/tokens", "/v1/annotations", "/v1/deliveries", "/v1/monitors"])
async def test_a_limit_too_large_for_any_integer_is_a_400(client, auth, path):
    assert_error(await client.get(f"{path}?limit={10**30}", headers=auth), 400, "invalid_parameter", param="limit")


@pytest.mark.parametrize(
    "when",
    [
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC: Python cannot convert it
        "9999-12-31T23:59:59-01:00",  # after year 9999 in UTC
        "0001-01-01T00:00:00Z",  # stored, then not rendered as RFC 3339 (nor listed: `year 0 is out of range`)
        "1969-12-31T23:59:59Z",
        "2200-01-01T00:00:00Z",
    ],
)
async def test_a_datetime_outside_1970_to_2199_is_refused_naming_it(client, auth, when):
    cases = [
        ("/v1/annotations", {"type": "d", "title": "t", "datasets": ["web"], "time": when}, "time"),
        ("/v1/annotations", {"type": "d", "title": "t", "datasets": ["web"], "end_time": when}, "end_time"),
        ("/v1/tokens", {"name": "ci", "scopes": ["query"], "expires_at": when}, "expires_at"),
        (
            "/v1/notifiers",
            {"name": "o", "type": "email", "config": {"addresses": ["a@b.example"]}, "disabled_until": when},
            "disabled_until",
        ),
        ("/v1/monitors", {**MONITOR, "disabled_until": when}, "disabled_until"),
    ]
    for path, body, param in cases:
        assert_error(await client.post(path, headers=auth, json=body), 400, "invalid_field", param=param)
    r = await client.get("/v1/annotations", headers=auth, params={"start_time": when})
    assert_error(r, 400, "invalid_parameter", param="start_time")
    assert (await client.get("/v1/annotations", headers=auth)).json()["data"] == []


async def test_the_edges_of_the_datetime_range_are_accepted(client, auth):
    for when in ("1970-01-01T00:00:00Z", "2199-12-31T23:59:59.999Z", "2200-01-01T01:00:00+02:00"):
        body = {"type": "d", "title": "t", "datasets": ["web"], "time": when}
        r = await client.post("/v1/annotations", headers=auth, json=body)
        assert r.status_code == 201, r.text
    listed = (await client.get("/v1/annotations", headers=auth, params={"start_time": "1970-01-01T00:00:00Z"})).json()
    assert [a["time"] for a in listed["data"]] == [
        "2199-12-31T23:59:59.999Z",
        "2199-12-31T23:00:00.000Z",
        "1970-01-01T00:00:00.000Z",
    ]


SHIPPERS = ("/v1/logs", "/v1/elastic", "/v1/loki")


@pytest.mark.parametrize("depth", [300, 970, 5000])
async def test_a_body_nested_too_deep_is_invalid_json_on_every_json_route(client, auth, depth):
    """970 `[` raised RecursionError in the decoder, a 500, on every JSON route: now a 400 before any work."""
    body = ("[" * depth + "]" * depth).encode()
    nested_object = ('{"a":' * depth + "1" + "}" * depth).encode()
    checked = 0
    for method, path, op in await _operations(client):
        if "application/json" not in op.get("requestBody", {}).get("content", {}) or path.startswith("/v1/ingest"):
            continue  # ingest reads its own body: each event is checked (and fails) alone
        url = re.sub(r"\{\w+\}", "x", path)
        for raw in (body, nested_object):
            r = await client.request(method, url, headers={**auth, "content-type": "application/json"}, content=raw)
            if r.status_code == 404:  # a resource path with a made-up id: refused before its body matters
                continue
            if path.startswith(SHIPPERS):  # their protocols' own shapes (OTLP/JSON ignores unknown fields: a 200)
                assert r.status_code in (200, 400), (method, path, r.text[:200])
                continue
            err = assert_error(r, 400, "invalid_json")
            assert "nested deeper than 256 levels" in err["message"], (method, path, err)
            checked += 1
    assert checked >= 20


async def test_a_routing_tree_too_deep_is_a_400(client, auth):
    version = (await client.get("/v1/routing", headers=auth)).json()["version"]
    hook = await client.post(
        "/v1/notifiers", headers=auth, json={"name": "n", "type": "webhook", "config": {"url": "https://x.example"}}
    )
    for levels, words in ((51, "nested deeper than 50 levels"), (485, "nested deeper than 256 levels")):
        # Written out as text: Python's own JSON encoder recurses per level too.
        route = '{"matchers": ["a=b"], "routes": [' * (levels - 1) + '{"matchers": ["a=b"]}' + "]}" * (levels - 1)
        document = f'{{"route": {{"notifier_ids": ["{hook.json()["id"]}"], "routes": [{route}]}}}}'
        headers = {**auth, "If-Match": version, "content-type": "application/json"}
        r = await client.put("/v1/routing", headers=headers, content=document.encode())
        assert r.status_code == 400 and words in r.json()["error"]["message"], (levels, r.text[:300])


@pytest.mark.parametrize(
    ("method", "path", "body", "param", "says"),
    [
        # Litestar's lenient conversion read 0 as false and "60" as 60: the document says boolean and integer.
        ("POST", "/v1/monitors", {**MONITOR, "alert_on_no_data": 0}, "alert_on_no_data", "true or false"),
        ("POST", "/v1/monitors", {**MONITOR, "interval_seconds": "60"}, "interval_seconds", "a number"),
        ("POST", "/v1/monitors", {**MONITOR, "trigger_after": {"m": "1", "n": 2}}, "trigger_after.m", "a number"),
        ("POST", "/v1/query", {"apl": "['web']", "take": "5"}, "take", "a number"),
    ],
)
async def test_a_boolean_or_number_given_as_another_json_type_is_refused(client, auth, method, path, body, param, says):
    r = await client.request(method, path, json=body, headers=auth)
    assert_error(r, 400, "invalid_field")
    assert r.json()["error"]["param"] == param and says in r.json()["error"]["message"]
    assert (await client.get("/v1/monitors", headers=auth)).json()["data"] == []


async def test_what_json_schema_also_allows_stays_allowed(client, auth):
    """3.0 is an integer to JSON Schema (and the document), and a request datetime may be unix seconds."""
    body = {**MONITOR, "interval_seconds": 60.0, "disabled_until": 4102444800, "trigger_after": {"m": 1.0, "n": 2}}
    r = await client.post("/v1/monitors", json=body, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["interval_seconds"] == 60 and r.json()["disabled_until"].startswith("2100-01-01")
