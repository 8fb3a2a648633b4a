"""`pip install .` gives a Beacon that migrates and renders: the wheel is built (offline, from a copy of the
source), installed into a fresh virtual environment, and its own `beacon` runs `migrate`, `serve` (console
and error-code pages) and a notifier preview, with nothing of the checkout on its path.

The fresh environment gets the wheel alone (`--no-deps`); the dependencies come from this test's environment
through a .pth line (tests use no network beyond localhost). Its site-packages is added as a plain path, so the
checkout's editable install there is not activated: `app` can only come from the wheel.
"""

from __future__ import annotations

import json
import shutil
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.conftest import _admin, _with_database, run_sync
from tests.packaging.client_venv import run_checked as _run
from tests.servers import Server, clean_env, free_port

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["app", "adapters", "client", "migrations", "templates", "pyproject.toml", "setup.py", "README.md"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ folder of a fresh venv with the wheel installed."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # building writes build/ and *.egg-info beside the sources: not in the checkout
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(
            ROOT / name,
            source / name,
            # A compiled module built in the checkout is left behind: the wheel must build its own.
            **(
                {"ignore": shutil.ignore_patterns("__pycache__", "*.so", "build", "*.egg-info")}
                if copy is shutil.copytree
                else {}
            ),
        )
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", work / "dist", source)  # fmt: skip
    (wheel,) = (work / "dist").glob("beacon-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("app/migrations/env.py", "app/migrations/script.py.mako", "app/templates/webhook/body.json.j2",
                    "app/templates/ui/login.html", "app/ui/static/console.css", "app/query/GRAMMAR.md",
                    "app/ui/static/swagger-ui/swagger-ui-bundle.js", "app/ui/static/swagger-ui/LICENSE",
                    # The client (client/beacon_client): the server reads its notations, `beacon` its commands.
                    "beacon_client/notation/labels.py", "beacon_client/cli/__init__.py",
                    "beacon_client/py.typed"):  # fmt: skip
        assert shipped in names
    # No generic top-level names.
    assert not [n for n in names if n.startswith(("migrations/", "templates/", "client/"))]
    # The compiled row builder of ingestion (setup.py: optional where no C compiler is at hand; this machine has one).
    assert [n for n in names if n.startswith("app/ingest/_fastrows.") and n.endswith(".so")], names
    # And the compiled OTLP log reader (app/shippers/otlp/_otlpfast.c), built the same way.
    assert [n for n in names if n.startswith("app/shippers/otlp/_otlpfast.") and n.endswith(".so")], names

    venv = work / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps", "--no-index", "-q",
         wheel)  # fmt: skip
    purelib = Path(
        _run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip()
    )
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (purelib / "_beacon_test_deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    return venv / "bin"


def test_the_installed_wheel_migrates_serves_and_renders(installed, pg_server_url, db_prefix, tmp_path):
    where = _run(installed / "python", "-c",
                 "import app, adapters, beacon_client, app.ingest._fastrows as c; "
                 "print(app.__file__, adapters.__file__, beacon_client.__file__, c.__file__)",
                 cwd=tmp_path).stdout.split()  # fmt: skip
    assert all(Path(p).is_relative_to(installed.parent) for p in where), where

    name = f"{db_prefix}_wheel"
    run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'))
    database_url = _with_database(pg_server_url, name)
    env = clean_env(
        BEACON_DATABASE_URL=database_url,
        BEACON_DATA_DIR=str(tmp_path / "data"),
        BEACON_SECRET_KEY="wheel-test",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
    )
    try:
        migrated = _run(installed / "beacon", "migrate", env=env, cwd=tmp_path)
        assert "migrations applied" in migrated.stdout

        server = Server(env, free_port(), beacon=str(installed / "beacon"), cwd=tmp_path).wait_ready(120)
        try:
            base = f"http://127.0.0.1:{server.port}"
            assert server.token, "\n".join(server.lines)
            auth = {"Authorization": f"Bearer {server.token}"}
            login = httpx.get(f"{base}/ui/login")
            assert login.status_code == 200 and "<form" in login.text
            assert httpx.get(f"{base}/ui/static/console.css").status_code == 200
            codes = httpx.get(f"{base}/docs/errors")
            assert codes.status_code == 200 and "invalid_query" in codes.text
            notifier = {"name": "w", "type": "webhook", "config": {"url": "http://127.0.0.1:9/h"}}
            hook = httpx.post(f"{base}/v1/notifiers", headers=auth, json=notifier)
            assert hook.status_code == 201, hook.text
            event = '{"monitor_name": "from the wheel"}'
            preview = _run(installed / "beacon", "notifiers", "preview", hook.json()["id"], "--url", base,
                           "--token", server.token, "--event", event, cwd=tmp_path)  # fmt: skip
            message = json.loads(preview.stdout)["message"]
            assert "from the wheel" in json.dumps(message)
        finally:
            server.stop()
    finally:
        run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
