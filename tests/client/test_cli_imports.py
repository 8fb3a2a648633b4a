"""Start-up cost: `beacon --help` loads click and nothing heavy; a client command loads the client, never the
server side (Litestar, SQLAlchemy, Alembic, asyncpg, Jinja2). Measured in bench/cli_start.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.servers import clean_env

SERVER_SIDE = {"litestar", "sqlalchemy", "alembic", "asyncpg", "jinja2", "uvicorn", "pgserver", "apscheduler"}
CLIENT_SIDE = {"httpx", "msgspec"}

# Runs the command as the `beacon` script does, then lists the top-level packages that got imported.
PROBE = """
import json, sys
from app.cli import main
try:
    main(sys.argv[1:], prog_name="beacon")
except SystemExit:
    pass
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})), file=sys.__stderr__)
"""


def loaded(*args: str, **env: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=clean_env(**env), capture_output=True, text=True, timeout=60
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["query", "--help"],
        ["export", "--help"],
        ["monitors", "--help"],
        ["monitors", "create", "--help"],
        ["notifiers", "--help"],
        ["datasets", "--help"],
        ["tokens", "--help"],
        ["tokens", "create", "--help"],
        ["serve", "--help"],
        ["dev", "receiver", "--help"],
        ["plugin", "new", "--help"],
        ["notifiers", "create", "--help"],
    ],
)
def test_help_imports_neither_client_nor_server(args):
    modules = loaded(*args)
    assert "click" in modules
    assert not modules & (SERVER_SIDE | CLIENT_SIDE)


def test_a_client_command_imports_the_client_only(httpserver):
    answer = {"object": "query_result", "columns": [{"name": "n", "type": "integer"}], "rows": [[1]], "status": {}}
    httpserver.expect_request("/v1/query", method="POST").respond_with_json(answer)
    modules = loaded("query", "['web'] | count", "--url", httpserver.url_for(""), "--token", "t")
    assert CLIENT_SIDE <= modules
    assert not modules & SERVER_SIDE


def test_tokens_through_the_api_import_the_client_only(httpserver):
    page = {"object": "list", "data": [], "has_more": False, "next_cursor": None}
    httpserver.expect_request("/v1/tokens", method="GET").respond_with_json(page)
    modules = loaded("tokens", "list", "--url", httpserver.url_for(""), "--token", "t")
    assert CLIENT_SIDE <= modules
    assert not modules & SERVER_SIDE
