"""`pip install ./client` gives a client that works without the server: its wheel holds beacon_client alone, a fresh
virtual environment with it and its four dependencies (tests/packaging/client_venv.py) has nothing of the server
to import, and there its `beacon` sends events, queries, lists alerts and tests the routing of a real served
Beacon, as its Python client does."""

from __future__ import annotations

import json
import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from app.asgi import create_app
from app.settings import Settings
from tests.conftest import admin_token_in, run_sync
from tests.packaging.client_venv import client_venv, requirements_of
from tests.servers import InThread, clean_env

SERVER = ["app", "adapters", "litestar", "sqlalchemy", "asyncpg", "alembic", "pgserver", "uvicorn", "jinja2"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return client_venv(tmp_path_factory.mktemp("client"))


def run(bin_dir: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # Nothing of the checkout on the path: no PYTHONPATH, and a working directory of the test's own.
    environment = {k: v for k, v in clean_env(**env).items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], env=environment, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_wheel_holds_the_client_and_requires_what_it_imports(installed: Path):
    (wheel,) = (installed.parents[1] / "dist").glob("beacon_client-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"beacon_client", "beacon_client-0.1.0.dist-info"}
    for shipped in ("beacon_client/py.typed", "beacon_client/cli/__init__.py", "beacon_client/notation/labels.py"):
        assert shipped in names
    assert sorted(r.name.lower() for r in requirements_of(wheel)) == ["click", "httpx", "msgspec", "pyyaml"]


def test_nothing_of_the_server_can_be_imported_there(installed: Path, tmp_path: Path):
    probe = (
        "import importlib.util, json, beacon_client; "
        f"print(json.dumps([beacon_client.__file__, [n for n in {SERVER!r} if importlib.util.find_spec(n)]]))"
    )
    done = run(installed, "python", "-c", probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, importable = json.loads(done.stdout)
    assert Path(where).is_relative_to(installed.parent) and importable == []


@pytest.fixture
def beacon_url(settings: Settings) -> tuple[str, str]:
    token = run_sync(admin_token_in(settings.database_url or ""))
    with InThread(create_app(replace(settings))) as server:
        yield server.url, token


def test_beacon_ingests_queries_lists_alerts_and_tests_routing_against_a_served_beacon(
    installed: Path, beacon_url: tuple[str, str], tmp_path: Path
):
    url, token = beacon_url
    env = {"BEACON_URL": url, "BEACON_TOKEN": token}
    events = tmp_path / "events.ndjson"
    events.write_text("".join(json.dumps({"status": s, "path": "/"}) + "\n" for s in (200, 200, 500)))
    sent = run(installed, "beacon", "ingest", str(events), "--dataset", "web", cwd=tmp_path, **env)
    assert sent.returncode == 0, sent.stderr

    counted = run(installed, "beacon", "query", "['web'] | summarize count() by status | sort by status asc",
                  "--format", "json", cwd=tmp_path, **env)  # fmt: skip
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout) == [{"status": 200, "count_": 2}, {"status": 500, "count_": 1}]

    alert = {"labels": {"alertname": "DiskFull", "team": "db"}, "annotations": {"summary": "disk full"}}
    posted = httpx.post(f"{url}/v1/alerts", json=[alert], headers={"Authorization": f"Bearer {token}"})
    assert posted.status_code == 200, posted.text

    listed = run(installed, "beacon", "alerts", cwd=tmp_path, **env)
    assert listed.returncode == 0, listed.stderr
    assert "DiskFull" in listed.stdout and '{team="db"}' in listed.stdout and "firing" in listed.stdout

    tested = run(installed, "beacon", "routing", "test", "alertname=DiskFull", "team=db", cwd=tmp_path, **env)
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("fingerprint ") and "route →" in tested.stdout

    # The Python client, as a program of the user's would use it, loads nothing of the server either.
    program = (
        "import sys; from beacon_client import Client\n"
        f"with Client({url!r}, {token!r}) as b:\n"
        "    alerts = b.list_alerts().data\n"
        "    print(alerts[0].labels['alertname'], b.query(\"['web'] | count\").rows[0][0])\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({SERVER!r})))\n"
    )
    used = run(installed, "python", "-c", program, cwd=tmp_path)
    assert used.returncode == 0, used.stderr
    assert used.stdout.splitlines() == ["DiskFull 3", "[]"]
