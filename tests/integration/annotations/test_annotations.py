"""The /v1/annotations endpoints: every field rule, the representation, filters, pagination, scopes."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tests.helpers import assert_error

MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


async def _create(client, auth, **body):
    payload = {"type": "deploy", "title": "v1", "datasets": ["web"], **body}
    r = await client.post("/v1/annotations", headers=auth, json=payload)
    assert r.status_code == 201, r.text
    return r.json()


async def test_create_minimal_echoes_nulls_and_defaults_time_to_now(client, auth):
    before = datetime.now(UTC)
    r = await client.post(
        "/v1/annotations", headers=auth, json={"type": "deploy", "title": "v1.2.3", "datasets": ["web-logs"]}
    )
    after = datetime.now(UTC)
    assert r.status_code == 201
    body = r.json()
    assert set(body) == {
        "object",
        "id",
        "type",
        "title",
        "description",
        "datasets",
        "time",
        "end_time",
        "url",
        "created_at",
        "labels",
        "origin",
        "silence_id",
    }
    assert body["labels"] == {} and body["origin"] == "api" and body["silence_id"] is None
    assert body["object"] == "annotation"
    assert re.fullmatch(r"ann_[0-9a-f]+", body["id"])
    assert body["type"] == "deploy" and body["title"] == "v1.2.3" and body["datasets"] == ["web-logs"]
    assert body["description"] is None and body["end_time"] is None and body["url"] is None
    assert MS.fullmatch(body["time"]) and MS.fullmatch(body["created_at"])
    shown = datetime.fromisoformat(body["time"])
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= shown <= after


async def test_create_full_converts_to_utc_milliseconds(client, auth):
    body = await _create(
        client,
        auth,
        type="incident",
        title="DB failover",
        description="primary lost",
        datasets=["db", "web"],
        time="2026-11-21T10:15:30.123456+02:00",
        end_time="2026-11-21T09:00:00Z",
        url="https://status.example.com/incidents/42",
    )
    assert body["time"] == "2026-11-21T08:15:30.123Z"
    assert body["end_time"] == "2026-11-21T09:00:00.000Z"
    assert body["url"] == "https://status.example.com/incidents/42"
    assert body["description"] == "primary lost"
    assert body["datasets"] == ["db", "web"]
    got = (await client.get(f"/v1/annotations/{body['id']}", headers=auth)).json()
    assert got == body


CREATE_ERRORS = [
    ({"title": "t", "datasets": ["web"]}, "missing_field", "type"),
    ({"type": "deploy", "datasets": ["web"]}, "missing_field", "title"),
    ({"type": "deploy", "title": "t"}, "missing_field", "datasets"),
    ({"type": "", "title": "t", "datasets": ["web"]}, "invalid_field", "type"),
    ({"type": "x" * 257, "title": "t", "datasets": ["web"]}, "invalid_field", "type"),
    ({"type": "deploy", "title": "", "datasets": ["web"]}, "invalid_field", "title"),
    ({"type": "deploy", "title": "x" * 257, "datasets": ["web"]}, "invalid_field", "title"),
    ({"type": "deploy", "title": "t", "datasets": []}, "invalid_field", "datasets"),
    ({"type": "deploy", "title": "t", "datasets": "web"}, "invalid_field", "datasets"),
    ({"type": "deploy", "title": "t", "datasets": ["no spaces"]}, "invalid_field", "datasets"),
    ({"type": "deploy", "title": "t", "datasets": ["-leading"]}, "invalid_field", "datasets"),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "time": "2026-11-21T10:00:00"}, "invalid_field", "time"),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "time": "yesterday"}, "invalid_field", "time"),
    (
        {
            "type": "deploy",
            "title": "t",
            "datasets": ["web"],
            "time": "2026-11-21T10:00:00Z",
            "end_time": "2026-11-21T09:59:59Z",
        },
        "invalid_field",
        "end_time",
    ),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "url": "ftp://example.com/x"}, "invalid_field", "url"),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "url": "not a url"}, "invalid_field", "url"),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "url": "https://"}, "invalid_field", "url"),
    (
        {"type": "deploy", "title": "t", "datasets": ["web"], "url": "https://e.com/" + "a" * 2040},
        "invalid_field",
        "url",
    ),
    (
        {"type": "deploy", "title": "t", "datasets": ["web"], "description": "d" * 2049},
        "invalid_field",
        "description",
    ),
    ({"type": "deploy", "title": "t", "datasets": ["web"], "colour": "red"}, "invalid_field", "colour"),
]


async def test_create_rejects_with_param(client, auth, db):
    from sqlalchemy import text

    for body, code, param in CREATE_ERRORS:
        r = await client.post("/v1/annotations", headers=auth, json=body)
        try:
            assert_error(r, 400, code, param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {body!r}: {exc}") from None
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM annotations"))).scalar_one() == 0


async def test_limits_are_inclusive(client, auth):
    body = await _create(
        client,
        auth,
        type="t" * 256,
        title="x" * 256,
        description="d" * 2048,
        url="https://e.com/" + "a" * (2048 - len("https://e.com/")),
        time="2026-01-01T00:00:00Z",
        end_time="2026-01-01T00:00:00Z",
    )
    assert body["end_time"] == body["time"]


async def test_duplicate_datasets_are_stored_once(client, auth):
    body = await _create(client, auth, datasets=["web", "db", "web"])
    assert body["datasets"] == ["web", "db"]


async def test_invalid_json_body(client, auth):
    r = await client.post("/v1/annotations", headers={**auth, "Content-Type": "application/json"}, content=b"{not json")
    assert_error(r, 400, "invalid_json")


async def test_needs_a_token_and_the_scopes(client, make_token):
    assert_error(
        await client.post("/v1/annotations", json={"type": "d", "title": "t", "datasets": ["web"]}),
        401,
        "missing_token",
    )
    reader = {"Authorization": f"Bearer {await make_token(['annotations:read'])}"}
    writer = {"Authorization": f"Bearer {await make_token(['annotations:write'])}"}
    assert_error(
        await client.post("/v1/annotations", headers=reader, json={"type": "d", "title": "t", "datasets": ["web"]}),
        403,
        "insufficient_scope",
    )
    created = await client.post("/v1/annotations", headers=writer, json={"type": "d", "title": "t", "datasets": ["w"]})
    assert created.status_code == 201
    ann = created.json()["id"]
    assert_error(await client.get("/v1/annotations", headers=writer), 403, "insufficient_scope")
    assert (await client.get(f"/v1/annotations/{ann}", headers=reader)).status_code == 200
    assert_error(await client.delete(f"/v1/annotations/{ann}", headers=reader), 403, "insufficient_scope")
    assert_error(
        await client.patch(f"/v1/annotations/{ann}", headers=reader, json={"title": "x"}), 403, "insufficient_scope"
    )


async def test_get_unknown_is_404(client, auth):
    assert_error(await client.get("/v1/annotations/ann_00", headers=auth), 404, "not_found")
    assert_error(await client.patch("/v1/annotations/ann_00", headers=auth, json={"title": "x"}), 404, "not_found")
    assert_error(await client.delete("/v1/annotations/ann_00", headers=auth), 404, "not_found")


async def test_partial_update(client, auth):
    a = await _create(
        client,
        auth,
        time="2026-11-21T10:00:00Z",
        end_time="2026-11-21T11:00:00Z",
        url="https://e.com/1",
        description="d",
    )
    r = await client.patch(f"/v1/annotations/{a['id']}", headers=auth, json={"title": "v2"})
    assert r.status_code == 200
    assert r.json() == {**a, "title": "v2"}
    # null clears optional fields; the rest stays.
    r = await client.patch(
        f"/v1/annotations/{a['id']}", headers=auth, json={"end_time": None, "url": None, "description": None}
    )
    assert r.json() == {**a, "title": "v2", "end_time": None, "url": None, "description": None}
    r = await client.patch(
        f"/v1/annotations/{a['id']}",
        headers=auth,
        json={"datasets": ["db"], "type": "config", "time": "2026-11-21T12:00:00.5+01:00"},
    )
    body = r.json()
    assert body["datasets"] == ["db"] and body["type"] == "config" and body["time"] == "2026-11-21T11:00:00.500Z"
    assert (await client.get(f"/v1/annotations/{a['id']}", headers=auth)).json() == body


async def test_update_checks_the_span_against_stored_values(client, auth):
    a = await _create(client, auth, time="2026-11-21T10:00:00Z", end_time="2026-11-21T11:00:00Z")
    assert_error(
        await client.patch(f"/v1/annotations/{a['id']}", headers=auth, json={"time": "2026-11-21T11:00:01Z"}),
        400,
        "invalid_field",
        param="end_time",
    )
    assert_error(
        await client.patch(f"/v1/annotations/{a['id']}", headers=auth, json={"end_time": "2026-11-21T09:00:00Z"}),
        400,
        "invalid_field",
        param="end_time",
    )
    # Nothing was half-stored.
    assert (await client.get(f"/v1/annotations/{a['id']}", headers=auth)).json() == a


UPDATE_ERRORS = [
    ({"time": None}, "time"),
    ({"title": None}, "title"),
    ({"type": ""}, "type"),
    ({"datasets": []}, "datasets"),
    ({"datasets": ["bad name"]}, "datasets"),
    ({"url": "javascript:alert(1)"}, "url"),
    ({"id": "ann_1"}, "id"),
    ({"created_at": "2026-11-21T10:00:00Z"}, "created_at"),
]


async def test_update_rejects_with_param(client, auth):
    a = await _create(client, auth)
    for body, param in UPDATE_ERRORS:
        r = await client.patch(f"/v1/annotations/{a['id']}", headers=auth, json=body)
        try:
            assert_error(r, 400, "invalid_field", param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {body!r}: {exc}") from None
    assert (await client.get(f"/v1/annotations/{a['id']}", headers=auth)).json() == a


async def test_delete(client, auth):
    a = await _create(client, auth)
    r = await client.delete(f"/v1/annotations/{a['id']}", headers=auth)
    assert r.status_code == 204 and r.content == b""
    assert_error(await client.get(f"/v1/annotations/{a['id']}", headers=auth), 404, "not_found")


async def _ids(client, auth, query=""):
    r = await client.get(f"/v1/annotations{query}", headers=auth)
    assert r.status_code == 200, r.text
    return [a["id"] for a in r.json()["data"]]


async def test_list_filters(client, auth):
    point_web = (await _create(client, auth, datasets=["web"], time="2026-11-21T10:00:00Z"))["id"]
    span_db = (
        await _create(
            client, auth, type="incident", datasets=["db"], time="2026-11-21T08:00:00Z", end_time="2026-11-21T12:00:00Z"
        )
    )["id"]
    both_late = (await _create(client, auth, datasets=["web", "db"], time="2026-11-22T00:00:00Z"))["id"]
    other = (await _create(client, auth, type="config", datasets=["billing"], time="2026-11-20T00:00:00Z"))["id"]

    assert await _ids(client, auth) == [both_late, point_web, span_db, other]  # newest `time` first
    assert await _ids(client, auth, "?datasets=web") == [both_late, point_web]
    assert await _ids(client, auth, "?datasets=db,billing") == [both_late, span_db, other]
    assert await _ids(client, auth, "?datasets=db&datasets=billing") == [both_late, span_db, other]
    assert await _ids(client, auth, "?type=incident") == [span_db]
    assert await _ids(client, auth, "?type=nothing") == []
    # Range [11:00, 11:30]: the span 08-12 overlaps it, the 10:00 point does not.
    q = "?start_time=2026-11-21T11:00:00Z&end_time=2026-11-21T11:30:00Z"
    assert await _ids(client, auth, q) == [span_db]
    # A point exactly on a bound is inside; offsets are honoured.
    q = "?start_time=2026-11-21T12:00:00%2B02:00&end_time=2026-11-21T10:00:00Z"
    assert await _ids(client, auth, q) == [point_web, span_db]
    assert await _ids(client, auth, "?start_time=2026-11-21T12:00:01Z") == [both_late]
    assert await _ids(client, auth, "?end_time=2026-11-20T23:59:59Z") == [other]
    assert await _ids(client, auth, "?datasets=web&start_time=2026-11-21T00:00:00Z&end_time=2026-11-21T23:00:00Z") == [
        point_web
    ]


LIST_ERRORS = [
    ("?start_time=yesterday", "start_time"),
    ("?start_time=2026-11-21T10:00:00", "start_time"),
    ("?end_time=2026-11-21", "end_time"),
    ("?start_time=2026-11-21T10:00:00Z&end_time=2026-11-21T09:00:00Z", "end_time"),
    ("?datasets=bad%20name", "datasets"),
    ("?limit=0", "limit"),
    ("?limit=101", "limit"),
    ("?limit=abc", "limit"),
]


async def test_list_rejects_bad_parameters(client, auth):
    for query, param in LIST_ERRORS:
        r = await client.get(f"/v1/annotations{query}", headers=auth)
        try:
            assert_error(r, 400, "invalid_parameter", param=param)
        except AssertionError as exc:
            raise AssertionError(f"case {query}: {exc}") from None


async def test_pagination_walk_with_filters(client, auth):
    made = []
    for i in range(23):
        a = await _create(client, auth, datasets=["web" if i % 2 else "db"], time=f"2026-11-21T10:{i:02d}:00Z")
        made.append(a["id"])
    # Same `time` for several annotations: the id breaks the tie, nothing is repeated or skipped.
    for _ in range(3):
        made.append((await _create(client, auth, datasets=["web"], time="2026-11-21T10:05:00Z"))["id"])
    expected = await _ids(client, auth, "?datasets=web&limit=100")
    assert len(expected) == 11 + 3
    seen, cursor = [], None
    while True:
        url = "/v1/annotations?datasets=web&limit=4" + (f"&cursor={cursor}" if cursor else "")
        page = (await client.get(url, headers=auth)).json()
        seen += [a["id"] for a in page["data"]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert seen == expected
    # The cursor belongs to the filtered list: reusing it on another filter is refused.
    first = (await client.get("/v1/annotations?datasets=web&limit=4", headers=auth)).json()["next_cursor"]
    assert_error(
        await client.get(f"/v1/annotations?datasets=db&limit=4&cursor={first}", headers=auth),
        400,
        "invalid_cursor",
        param="cursor",
    )


async def test_list_takes_times_relative_to_now_as_queries_do(client, auth):
    from datetime import UTC, datetime, timedelta

    def ago(**delta: float) -> str:
        return (datetime.now(UTC) - timedelta(**delta)).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    recent = [(await _create(client, auth, time=ago(minutes=10 + i)))["id"] for i in range(3)]
    await _create(client, auth, time=ago(hours=5))
    assert await _ids(client, auth, "?start_time=now-3h") == recent
    assert await _ids(client, auth, "?start_time=now%20-%203h&end_time=now-11m") == recent[1:]
    # The next page of a relative range is the same list's (the cursor keeps the range as it was sent).
    first = (await client.get("/v1/annotations?start_time=now-3h&limit=2", headers=auth)).json()
    assert [a["id"] for a in first["data"]] == recent[:2] and first["has_more"]
    page = f"/v1/annotations?start_time=now-3h&limit=2&cursor={first['next_cursor']}"
    assert [a["id"] for a in (await client.get(page, headers=auth)).json()["data"]] == recent[2:]
    for bad in ("now-3x", "now-3", "now-99999999d"):
        assert_error(await client.get(f"/v1/annotations?start_time={bad}", headers=auth), 400, "invalid_parameter")
