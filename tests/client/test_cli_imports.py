"""Start-up cost and separation: `beacon --help` loads click and nothing heavy; a client command loads the client and
nothing of the server: no Litestar, SQLAlchemy, Alembic, asyncpg, pgserver, and no module of `app` beyond the
`beacon` command's own (the client's `beacon`, beacon_client.cli, loads no `app` at all). Measured in
bench/cli_start.py; the client installed alone is tests/packaging/test_client_alone.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.servers import clean_env

SERVER_SIDE = {"litestar", "sqlalchemy", "alembic", "asyncpg", "jinja2", "uvicorn", "pgserver", "apscheduler"}
CLIENT_SIDE = {"httpx", "msgspec"}
# What Beacon's `beacon` (app/cli.py) loads to offer its server commands beside the client's: click and the
# commands' own modules, which import the server only when a server command runs.
SERVER_COMMANDS = {"app", "app.cli", "app.cli_db", "app.cli_dev", "app.cli_tokens", "app.plugin_scaffold"}

# Runs the command as a `beacon` script does (`app.cli:main`, or `beacon_client.cli:main` for the client installed
# alone), then lists every module that got imported.
PROBE = """
import importlib, json, sys
main = importlib.import_module(sys.argv.pop(1)).main
try:
    main(sys.argv[1:], prog_name="beacon")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)
"""


def loaded(*args: str, entry: str = "app.cli") -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, entry, *args], env=clean_env(), capture_output=True, text=True, timeout=60
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def of_app(modules: set[str]) -> set[str]:
    return {name for name in modules if name == "app" or name.startswith("app.")}


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
    modules = top_level(loaded(*args))
    assert "click" in modules
    assert not modules & (SERVER_SIDE | CLIENT_SIDE)


def test_a_client_command_imports_the_client_only(httpserver):
    answer = {"object": "query_result", "columns": [{"name": "n", "type": "integer"}], "rows": [[1]], "status": {}}
    httpserver.expect_request("/v1/query", method="POST").respond_with_json(answer)
    modules = loaded("query", "['web'] | count", "--url", httpserver.url_for(""), "--token", "t")
    assert CLIENT_SIDE <= top_level(modules)
    assert not top_level(modules) & SERVER_SIDE
    assert of_app(modules) <= SERVER_COMMANDS


PAGE = {"object": "list", "data": [], "has_more": False, "next_cursor": None}
ALERT = {"fingerprint": "0123456789abcdef", "labels": {"alertname": "DiskFull", "team": "db"}, "state": "firing",
         "starts_at": "2026-01-01T00:00:00Z"}  # fmt: skip
GROUP = {"group_key": "{}:{}", "route": "route", "labels": {}, "notifier_ids": [], "alerts": [ALERT]}
ROUTED = {"fingerprint": "0123456789abcdef", "routes": [], "notifier_ids": []}
SILENCE = {"id": "sil_1", "matchers": ["alertname=DiskFull"], "starts_at": "2026-01-01T00:00:00Z",
           "ends_at": "2026-01-01T01:00:00Z", "comment": "disk", "created_by": "t", "state": "active"}  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["alerts"],
        ["alerts", "--groups"],
        ["routing", "test", "alertname=DiskFull", 'team="db"'],
        ["silence", "add", "alertname=DiskFull", "--duration", "1h", "--comment", "disk"],
    ],
)
def test_alerts_routing_and_silences_import_neither_the_server_nor_its_errors(httpserver, args):
    """These commands once read their notations (labels, durations) from the server's modules, which loaded its
    error module, and Litestar, SQLAlchemy and asyncpg with it."""
    httpserver.expect_request("/v1/alerts", method="GET").respond_with_json({**PAGE, "data": [ALERT]})
    httpserver.expect_request("/v1/alerts/groups", method="GET").respond_with_json({**PAGE, "data": [GROUP]})
    httpserver.expect_request("/v1/notifiers", method="GET").respond_with_json(PAGE)
    httpserver.expect_request("/v1/routing/test", method="POST").respond_with_json(ROUTED)
    httpserver.expect_request("/v1/silences", method="POST").respond_with_json(SILENCE, status=201)
    for entry in ("app.cli", "beacon_client.cli"):
        modules = loaded(*args, "--url", httpserver.url_for(""), "--token", "t", entry=entry)
        assert "msgspec" in modules and "beacon_client.notation" in modules, entry  # the command ran, in full
        assert "app.errors" not in modules and not top_level(modules) & SERVER_SIDE, entry
        assert of_app(modules) <= (SERVER_COMMANDS if entry == "app.cli" else set()), entry


def test_the_clients_own_beacon_loads_nothing_of_app(httpserver):
    answer = {"object": "query_result", "columns": [{"name": "n", "type": "integer"}], "rows": [[1]], "status": {}}
    httpserver.expect_request("/v1/query", method="POST").respond_with_json(answer)
    ran = ["query", "['web'] | count", "--url", httpserver.url_for(""), "--token", "t"]
    for args in (["--help"], ["query", "--help"], ran):
        modules = loaded(*args, entry="beacon_client.cli")
        assert not of_app(modules) and not top_level(modules) & SERVER_SIDE, args
    assert CLIENT_SIDE <= top_level(modules)


def test_tokens_through_the_api_import_the_client_only(httpserver):
    httpserver.expect_request("/v1/tokens", method="GET").respond_with_json(PAGE)
    modules = loaded("tokens", "list", "--url", httpserver.url_for(""), "--token", "t")
    assert CLIENT_SIDE <= top_level(modules)
    assert not top_level(modules) & SERVER_SIDE
    assert of_app(modules) <= SERVER_COMMANDS
