"""Property-based test of the whole API from its own OpenAPI document (schemathesis, its full check set).

`schemathesis run --checks all` runs, as its command line does, against the real app served by uvicorn on a free
loopback port with an admin token: for every operation of `/schema/openapi.json` the document's examples, the
coverage phase's invalid requests field by field (wrong types, boundaries crossed, missing and unknown fields,
undeclared methods), generated valid requests, and stateful sequences along the document's links (create, then
read, change, delete what was made). Every check must pass: no 5xx, declared statuses, content types, headers
and bodies; valid requests accepted and invalid ones refused; 405 with `Allow`; authentication enforced; a deleted
resource gone, a created one there. tests/fuzz/schemathesis.toml says what each phase generates and why;
tests/fuzz/hooks.py teaches the generator what JSON Schema cannot say (media types, the query language, rules
between fields and with what is stored); it loosens no check.

Deterministic (derandomized generation, no example database), about 2,850 requests and 26 s of CPU. Only the
operation that could revoke the run's own token is left out. The app is served on a database of its own.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from adapters.guard import DestinationGuard, DestinationRefused
from app.asgi import create_app
from app.openapi_document import operations
from app.settings import RateLimits, Settings
from tests.conftest import _with_database, admin_token_in, run_sync
from tests.databases import Clones
from tests.offline_dns import offline_resolve
from tests.servers import InThread

ROOT = Path(__file__).resolve().parents[2]
UNLIMITED = RateLimits(ingest=10**9, query=10**9, read=10**9, other=10**9)
# Every destination a notifier the run creates may send to (`POST /v1/notifiers/{id}/test`): a closed loopback
# port, so that nothing leaves the machine (hooks.py gives URL notifiers the same address).
NOWHERE = "http://127.0.0.1:9"
EXCLUDED = "DELETE /v1/tokens/{token_id}"  # it could revoke the run's own token


@dataclass(frozen=True)
class LoopbackOnly(DestinationGuard):
    """The run's destination guard: loopback addresses only, whatever a generated configuration names (a literal
    public address included), so that no request of the run leaves the machine."""

    async def addresses(self, host: str, port: int) -> list[str]:
        found = await super().addresses(host, port)
        if not all(ipaddress.ip_address(address).is_loopback for address in found):
            raise DestinationRefused(f"{host}: the fuzz run sends to loopback addresses only")
        return found


def _settings(database_url: str, data_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        base_url="http://testserver.local",
        secret_key="fuzz-secret-key",
        run_scheduler=False,
        rate_limits=UNLIMITED,  # every request is answered for what it is, not 429 after the first minute's
        query_timeout_seconds=5,
        allow_private_destinations=True,  # NOWHERE is loopback
        incident_a_url=NOWHERE,
        incident_b_url=NOWHERE,
        smtp_host=None,  # e-mail: "no SMTP server configured", nothing sent
        http_timeout_seconds=2,
    )


@dataclass
class Served:
    url: str
    token: str
    operations: int


@pytest.fixture(scope="module")
def served(pg_server_url: str, clones: Clones, tmp_path_factory) -> Iterator[Served]:
    name = clones.take()
    url = _with_database(pg_server_url, name)
    try:
        token = run_sync(admin_token_in(url))
        guard = LoopbackOnly(allow_private=True, resolve=offline_resolve)
        app = create_app(_settings(url, tmp_path_factory.mktemp("fuzz")), guard=guard)
        with InThread(app) as server:
            document = httpx.get(f"{server.url}/schema/openapi.json").json()
            yield Served(server.url, token, len(list(operations(document))))
    finally:
        clones.give_back(name)


@pytest.mark.long
def test_every_operation_answers_as_its_document_says(served: Served, tmp_path: Path) -> None:
    """`schemathesis run --checks all` over every operation of the served document: its examples, coverage cases,
    generated requests (valid and invalid) and stateful sequences (the document's links), 0 failures."""
    report = tmp_path / "report.json"
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(Path(__file__).with_name("schemathesis.toml")),
        "run",
        f"{served.url}/schema/openapi.json",
        "--checks=all",
        f"--header=Authorization: Bearer {served.token}",
        "--generation-deterministic",
        "--workers=1",
        "--suppress-health-check=all",  # they judge generation speed, which a loaded machine slows: not the API
        f"--exclude-name={EXCLUDED}",
        "--report=json",
        f"--report-json-path={report}",
        "--no-color",
    ]
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks",
        "PYTHONPATH": str(ROOT),
        "BEACON_FUZZ_URL": served.url,
        "BEACON_FUZZ_TOKEN": served.token,
    }
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    (tmp_path / "schemathesis.txt").write_text(run.stdout + run.stderr)  # every failure with its curl, kept by pytest
    outcome = json.loads(report.read_text())
    failures = {f["code"]: f["operations"] for f in outcome["failures"]}
    # A case schemathesis cannot put on the wire (an NDJSON or protobuf body that is not text or bytes) is not a
    # request; any other error is.
    errors = [e for e in outcome["errors"] if "Serialization not possible" not in json.dumps(e)]
    assert not failures and not errors, run.stdout[run.stdout.find("FAILURES") :][:60000] + run.stderr[-5000:]
    assert outcome["operations"]["tested"] == served.operations - 1, outcome["operations"]
