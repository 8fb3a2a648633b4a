"""Real log clients against a real Beacon: one server per test module (uvicorn in a thread, on a database of the
module's own), the daemons and Node.js clients that .ci/shippers unpacks and installs, and reading events back."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import served_on_a_clone
from tests.databases import Clones

REPO = Path(__file__).resolve().parents[3]
NODE_CLIENTS = Path(__file__).resolve().parent / "node"


def shippers_dir() -> Path:
    """Where .ci/shippers put the daemons and Node.js clients; a skip (a failure under CI=true) when it has not run."""
    found = Path(os.environ.get("BEACON_SHIPPERS_DIR") or REPO / ".cache" / "shippers")
    if not (found / "root").is_dir() or not (found / "node" / "node_modules").is_dir():
        pytest.skip(f"the log shippers are not in {found}: run .ci/shippers")
    return found


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("Node.js is not installed: run .ci/shippers")
    return found


@dataclass
class Live:
    url: str
    token: str
    database_url: str

    def export(self, apl: str) -> list[dict[str, Any]]:
        r = httpx.post(
            f"{self.url}/v1/export",
            headers={"authorization": f"Bearer {self.token}"},
            json={"apl": apl, "start_time": "2000-01-01T00:00:00Z", "end_time": "now+1d"},
            timeout=60,
        )
        assert r.status_code in (200, 404), r.text  # 404: no such dataset yet
        return [orjson.loads(line) for line in r.content.splitlines() if line] if r.status_code == 200 else []

    def count(self, dataset: str) -> int:
        rows = self.export(f"['{dataset}'] | summarize n = count()")
        return int(rows[0]["n"]) if rows else 0

    def wait_for(
        self, dataset: str, count: int, seconds: float = 60, failed: Callable[[], str | None] = lambda: None
    ) -> None:
        """Until `dataset` holds `count` events (a shipper sends on its own schedule); `failed` names a reason to
        stop early (a daemon that exited)."""
        deadline = time.monotonic() + seconds
        while (found := self.count(dataset)) < count:
            reason = failed()
            assert reason is None, reason
            assert time.monotonic() < deadline, f"{dataset}: {found} of {count} events after {seconds} s"
            time.sleep(0.2)
        assert found == count, f"{dataset}: {found} events, expected {count}"


@pytest.fixture(scope="module")
def live(pg_server_url: str, clones: Clones, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with served_on_a_clone(pg_server_url, clones, tmp_path_factory.mktemp("shippers")) as (url, token, database):
        yield Live(url, token, database)


class Daemon:
    """A log daemon unpacked by .ci/shippers, run in the foreground with its own configuration, pid and work files
    (all in `workdir`), its output kept in `workdir/output.log`; stopped with SIGTERM (SIGKILL after 10 s)."""

    def __init__(self, name: str, argv: list[str], workdir: Path) -> None:
        root = shippers_dir() / "root"
        libraries = [root / "usr/lib/x86_64-linux-gnu", root / "lib/x86_64-linux-gnu", root / "usr/lib/syslog-ng"]
        self.name = name
        self.output = workdir / "output.log"
        self._log = self.output.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ":".join(map(str, libraries))},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def exited(self) -> str | None:
        """Why the daemon is gone, or None while it runs."""
        if self.proc.poll() is None:
            return None
        return f"{self.name} exited with {self.proc.returncode}:\n{self.output.read_text(errors='replace')[-4000:]}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()
