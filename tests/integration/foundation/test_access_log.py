"""The access log line of a request: what a client typed in the path cannot write into the log unescaped."""

from __future__ import annotations

import json

import pytest

HOSTILE = "/nowhere%0a2026-01-01 00:00:00,000 INFO beacon.access: GET /v1/tokens 200%00x"


@pytest.mark.parametrize("fmt", ["text", "json"])
async def test_a_path_cannot_forge_a_log_line_or_write_a_nul(app_client, captured_logs, fmt):
    out = captured_logs(fmt)
    async with app_client() as client:
        assert (await client.get(HOSTILE)).status_code == 404
    (line,) = [line for line in out.getvalue().splitlines() if "beacon.access" in line]
    assert "\x00" not in out.getvalue()
    if fmt == "json":
        assert (
            json.loads(line)["path"] == "/nowhere\n2026-01-01 00:00:00,000 INFO beacon.access: GET /v1/tokens 200\x00x"
        )
    else:
        assert "GET /nowhere\\n2026-01-01 00:00:00,000 INFO beacon.access: GET /v1/tokens 200\\x00x 404 " in line
