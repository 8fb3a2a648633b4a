"""The README's walkthrough, run as a newcomer pastes it: its marked blocks are taken from README.md and executed
against a real `beacon serve --dev`, and what the README says the user will see is checked.

- `<!-- walkthrough: serve -->`: the server's command, started in the background (on a free port, one process).
- `<!-- walkthrough: run -->`: commands, run one block after the other in one bash (so `export` and `kill %1` work
  as in a terminal), from a directory whose `.venv` is this test's environment.
- `<!-- walkthrough: output -->`: lines the preceding block prints, in order (`…` stands for anything).
- `<!-- walkthrough: receiver -->`: lines the background receiver prints, in order, waited for.

What differs from a newcomer's machine: the ports (the server's and the receiver's are free ones, the commands
reach the server through BEACON_URL) and the database (a fresh one of the test run, BEACON_DATABASE_URL, instead
of a second embedded PostgreSQL). The walkthrough's monitor runs every 10 seconds over 20: the test waits about
half a minute for the alert to fire and resolve.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import clean_env, free_port, poll_ready

ROOT = Path(__file__).resolve().parents[1]
STEP = re.compile(r"<!-- walkthrough: (serve|run|output|receiver) -->\n```[a-z]*\n(.*?)```\n", re.S)
RECEIVER_PORT = "9000"


def steps() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("<!-- walkthrough:start")[1].split("<!-- walkthrough:end -->")[0]
    return STEP.findall(section)


def pattern(line: str) -> re.Pattern[str]:
    """A README output line as a pattern: `…` is anything, a run of spaces any run of spaces (table widths)."""
    parts = [re.sub(r"(?:\\ )+", r"\\s+", re.escape(part)) for part in line.strip().split("…")]
    return re.compile(".*".join(parts))


def missing(expected: str, actual: str) -> list[str]:
    """The expected lines not found, in order, among the actual ones (an empty list when all are)."""
    lines = [line.strip() for line in actual.splitlines()]
    at = 0
    for wanted in (line for line in expected.splitlines() if line.strip()):
        found = next((i for i in range(at, len(lines)) if pattern(wanted).fullmatch(lines[i])), None)
        if found is None:
            return [wanted]
        at = found + 1
    return []


class Shell:
    """One bash, fed block after block on its stdin; each block's output goes to files of its own."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.proc = subprocess.Popen(
            ["bash"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env
        )
        self.count = 0

    def run(self, block: str, timeout: float = 180) -> tuple[str, str]:
        self.count += 1
        out, err, rc = (self.cwd / f".step{self.count}.{kind}" for kind in ("out", "err", "rc"))
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{{\n{block}\n}} >{out.name} 2>{err.name}; echo $? >{rc.name}\n".encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while not (rc.exists() and rc.read_text().strip()):
            assert time.monotonic() < deadline, f"step {self.count} did not finish:\n{block}\n{err.read_text()}"
            time.sleep(0.1)
        assert rc.read_text().strip() == "0", f"step failed:\n{block}\nstdout:\n{out.read_text()}\n{err.read_text()}"
        return out.read_text(), err.read_text()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)  # the README's `.venv/bin/beacon`
    return tmp_path


@pytest.fixture
def serve(workdir: Path, database_url: str) -> Iterator[tuple[str, list[str], dict[str, str]]]:
    (command,) = [block for kind, block in steps() if kind == "serve"]
    port = free_port()
    env = clean_env(BEACON_DATABASE_URL=database_url, BEACON_URL=f"http://127.0.0.1:{port}")
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {command.strip()} --port {port} --workers 1"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(line.rstrip() for line in proc.stdout or ()), daemon=True).start()
    url = f"http://127.0.0.1:{port}"

    def running() -> None:
        assert proc.poll() is None, "beacon serve exited:\n" + "\n".join(lines)

    assert poll_ready(f"{url}/readyz", running, 120), "beacon serve did not start:\n" + "\n".join(lines)
    try:
        yield url, lines, env
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _receiver_pid(workdir: Path) -> int | None:
    path = workdir / ".receiver.pid"
    return int(path.read_text()) if path.exists() and path.read_text().strip() else None


def _gone(pid: int | None, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while pid is not None and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.long
def test_the_readme_walkthrough(workdir: Path, serve: tuple[str, list[str], dict[str, str]]):
    url, served, env = serve
    assert any("DEVELOPMENT MODE" in line for line in served), "\n".join(served)  # said loudly on start
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok", "mode": "development"}

    hook_port = str(free_port())
    shell = Shell(workdir, {**env, "PATH": os.environ.get("PATH", "")})
    receiver_out: Path | None = None
    last = ""
    try:
        for kind, block in steps():
            if kind == "run":
                block = block.replace(RECEIVER_PORT, hook_port)
                last, _ = shell.run(block)
                if "dev receiver" in block:
                    receiver_out = workdir / f".step{shell.count}.out"
                    shell.run("echo $! > .receiver.pid")  # to stop it whatever happens to the walkthrough
            elif kind == "output":
                assert not missing(block, last), f"README says:\n{block}\nthe command printed:\n{last}"
            elif kind == "receiver":
                assert receiver_out is not None, "no receiver was started before its output"
                deadline = time.monotonic() + 90
                while missing(block, receiver_out.read_text()):
                    assert time.monotonic() < deadline, (
                        f"README says the receiver prints:\n{block}\nit printed:\n{receiver_out.read_text()}"
                    )
                    time.sleep(0.25)
        token, monitor_id = shell.run('echo "$BEACON_TOKEN"; echo "$MONITOR"')[0].split()
        assert _gone(_receiver_pid(workdir)), "`kill %1` did not stop the receiver"
    finally:
        shell.close()
        pid = _receiver_pid(workdir)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    # Step 9: the console shows what the README says.
    with httpx.Client(base_url=url, follow_redirects=True) as console:
        signed = console.post("/ui/login", data={"token": token}, headers={"Origin": url})
        assert signed.status_code == 200 and 'id="dev-mode"' in signed.text, signed.text
        page = console.get(f"/ui/monitors/{monitor_id}").text
        assert '<g class="threshold" data-value="10">' in page  # the dashed threshold line
        for kind in ("triggered", "resolved"):  # marked on the chart and in the history
            assert kind in _marked(page), kind
        assert page.count("local-hook") >= 2  # the two messages (and who gets them)
        dataset = console.get("/ui/datasets/web").text
        assert "web v1.4.2" in dataset and 'data-type="deploy"' in dataset


def _marked(page: str) -> set[str]:
    """The kinds of the chart's markers: a marker's own type, or each kind a cluster lists (a trigger and its
    resolve a few seconds apart are drawn as one "2 × several" marker, app/ui/charts.py `cluster`)."""
    kinds: set[str] = set()
    for attrs in re.findall(r'<g class="ann-marker[^"]*"([^>]*)>', page):
        kind = re.search(r'data-type="([^"]*)"', attrs)
        titles = re.search(r'data-titles="([^"]*)"', attrs)
        kinds |= {kind.group(1)} if kind else set()
        kinds |= {line.split(" ", 1)[0].rstrip(",") for line in titles.group(1).split("\n")} if titles else set()
    return kinds
