"""Bytes that are not UTF-8, and NUL characters, in event keys and values: never a 500, never a lost batch.

In NDJSON such a line fails alone (with its index) and the others are stored; a JSON array that is not valid
UTF-8 is not valid JSON, so the request is a 400 and stores nothing. A `\\u0000` escape is valid JSON but
PostgreSQL's jsonb cannot store it: that event fails alone, whatever the body's format.
"""

from __future__ import annotations

import pytest

from tests.helpers import assert_error
from tests.integration.ingest.test_limits import assert_nothing_stored
from tests.integration.ingest.util import JSON, ndjson, post_events, stored

# Lines that repeat one shape first, so that the shape plan (app/ingest/plans.py) reads the bad line, and a
# bad line first, so that the general path does.
SAME_SHAPE = [{"n": i, "msg": "ok", "http": {"status": 200}} for i in range(6)]
BAD_LINES = {
    "value": b'{"n": 99, "msg": "a\xffb", "http": {"status": 200}}',
    "nested value": b'{"n": 99, "msg": "ok", "http": {"status": "\xc3"}}',
    "key": b'{"n": 99, "m\xffsg": "ok", "http": {"status": 200}}',
    "nested key": b'{"n": 99, "msg": "ok", "http": {"st\xe2\x82atus": 200}}',
    "surrogate as UTF-8": b'{"n": 99, "msg": "\xed\xa0\x80", "http": {"status": 200}}',
    "raw NUL byte": b'{"n": 99, "msg": "a\x00b", "http": {"status": 200}}',
    "NUL escape in a value": b'{"n": 99, "msg": "a\\u0000b", "http": {"status": 200}}',
    "NUL escape in a key": b'{"n": 99, "m\\u0000sg": "ok", "http": {"status": 200}}',
    "NUL escape in a nested key": b'{"n": 99, "msg": "ok", "http": {"\\u0000": 200}}',
}


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(BAD_LINES))
async def test_a_bad_ndjson_line_fails_alone(client, auth, db, name, gzip):
    bad = BAD_LINES[name]
    body = bad + b"\n" + ndjson(SAME_SHAPE) + bad + b"\n" + ndjson([{"n": 7, "last": True}])
    r = await post_events(client, auth, "web", body, gzip=gzip)
    assert r.status_code == 200, r.text
    result = r.json()
    assert (result["ingested"], result["failed"]) == (7, 2), result
    assert [f["index"] for f in result["failures"]] == [0, 7]
    reason = result["failures"][0]["error"]
    if "NUL escape" in name:
        assert "U+0000" in reason
    elif "NUL" in name:
        assert "not valid JSON" in reason
    else:
        assert "not valid JSON" in reason and "UTF-8" in reason
    assert result["failures"][1]["error"] == reason
    assert sorted(row["data"]["n"] for row in await stored(db)) == [0, 1, 2, 3, 4, 5, 7]


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", [n for n in BAD_LINES if "escape" not in n])
async def test_a_json_body_that_is_not_utf8_or_holds_a_raw_nul_is_a_400(client, auth, db, name, gzip):
    bad = BAD_LINES[name]
    for body in (b"[" + bad + b"]", b'[{"n": 1}, ' + bad + b', {"n": 2}]', bad):
        r = await post_events(client, auth, "web", body, content_type=JSON, gzip=gzip)
        err = assert_error(r, 400, "invalid_json")
        assert "nothing was stored" in err["message"]
    await assert_nothing_stored(client, auth, db)


@pytest.mark.parametrize("name", [n for n in BAD_LINES if "escape" in n])
async def test_a_nul_escape_in_a_json_body_fails_that_event_alone(client, auth, db, name):
    for body in (b'[{"n": 1}, ' + BAD_LINES[name] + b', {"n": 2}]', BAD_LINES[name]):
        r = await post_events(client, auth, "web", body, content_type=JSON)
        assert r.status_code == 200, r.text
        assert r.json()["failed"] == 1 and "U+0000" in r.json()["failures"][0]["error"]
    assert sorted(row["data"]["n"] for row in await stored(db)) == [1, 2]
