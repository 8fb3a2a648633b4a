"""A Loki client nobody here wrote, against a real Beacon: winston-loki (npm, under the machine's Node.js), which
pushes snappy-compressed protobuf (its default, with the `snappy` package) or JSON. A few thousand lines each,
read back exactly, with their stream labels."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.shippers.conftest import NODE_CLIENTS, Live, node, shippers_dir

COUNT = 2000


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_winston_loki(live: Live, encoding: str) -> None:
    cache = shippers_dir()
    dataset = f"winston-{encoding}"
    done = subprocess.run(
        [node(), str(NODE_CLIENTS / "winston_loki.js"), live.url, live.token, dataset, str(COUNT), encoding],
        env={"NODE_PATH": str(cache / "node" / "node_modules"), "PATH": str(Path(node()).parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sent_as = "application/x-protobuf" if encoding == "protobuf" else "application/json"
    assert done.stdout.splitlines()[0] == sent_as
    live.wait_for(dataset, COUNT, seconds=30)
    rows = live.export(f"['{dataset}'] | project message, level, app")
    assert sorted((r["message"], r["level"]) for r in rows) == sorted(
        (f'line {i} "quoted" \\ é', "warn" if i % 4 == 0 else "info") for i in range(COUNT)
    )
    assert {r["app"] for r in rows} == {"shop"}
