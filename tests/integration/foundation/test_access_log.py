"""The access log line of a request: what a client typed in the path cannot write into the log unescaped."""

from __future__ import annotations


async def test_a_path_cannot_forge_a_log_line_or_write_a_nul(make_app, caplog):
    from litestar.testing import AsyncTestClient

    async with AsyncTestClient(app=make_app()) as client:
        with caplog.at_level("INFO", logger="beacon.access"):
            r = await client.get("/nowhere%0a2026-01-01 INFO beacon.access: GET /v1/tokens 200%00x")
    assert r.status_code == 404
    (line,) = [rec.getMessage() for rec in caplog.records if rec.name == "beacon.access"]
    assert line.startswith("GET /nowhere%0A2026-01-01%20INFO%20beacon.access:%20GET%20/v1/tokens%20200%00x 404 ")
    assert "\n" not in line and "\x00" not in line
