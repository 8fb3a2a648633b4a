"""Clients generated from the served OpenAPI document, as a user makes them: the document is read once per session
from the real app, each generator runs once per session, and the Python client talks to a real server.

The TypeScript toolchain (openapi-typescript, openapi-fetch, TypeScript) is what .ci/clients installs into
.cache/clients (a skip, so a failure under CI=true, when it has not run); openapi-python-client is in the [test]
extra.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from app.asgi import create_app
from app.settings import Settings
from tests.conftest import Clones, served_on_a_clone

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def openapi_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The document as `/schema/openapi.json` serves it (serving it reaches no database)."""
    settings = Settings(database_url="postgresql://postgres@127.0.0.1:9/unused", data_dir=Path("/nonexistent"))
    with TestClient(create_app(settings)) as client:
        document = client.get("/schema/openapi.json").json()
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_text(json.dumps(document))
    return path


def clients_dir() -> Path:
    """Where .ci/clients put the TypeScript toolchain; a skip (a failure under CI=true) when it has not run."""
    found = Path(os.environ.get("BEACON_CLIENTS_DIR") or REPO / ".cache" / "clients") / "node"
    if not (found / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip(f"the TypeScript toolchain is not in {found}: run .ci/clients")
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed: run .ci/clients")
    return found


@dataclass
class Live:
    url: str
    token: str


@pytest.fixture(scope="module")
def live(pg_server_url: str, clones: Clones, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The app under uvicorn on a database of its own, with an admin token."""
    with served_on_a_clone(pg_server_url, clones, tmp_path_factory.mktemp("clients")) as (url, token, _):
        yield Live(url, token)


def as_dict(value: Any) -> dict[str, Any]:
    found: dict[str, Any] = value.to_dict()
    return found
