"""`beacon ingest` input handling and output, against a local server that answers as the ingest endpoint does.

(The same command against the real app is in tests/integration/client.)
"""

from __future__ import annotations

import gzip
import json
import os
import pty
import re
import subprocess

from tests.client.test_ingester import FakeIngest
from tests.servers import BEACON, clean_env


def run(*args: str, input: bytes | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([BEACON, *args], env=clean_env(**env), input=input, capture_output=True, timeout=120)


def serve(httpserver) -> FakeIngest:
    fake = FakeIngest()
    httpserver.expect_request("/v1/ingest/web", method="POST").respond_with_handler(fake)
    return fake


def test_ndjson_from_stdin_with_bad_lines_reported_by_line(httpserver):
    fake = serve(httpserver)
    lines = [json.dumps({"n": n, "bad": n == 7}) for n in range(12)]
    lines[3] = "{not json"
    lines.insert(5, "")
    done = run(
        "ingest", "-", "--dataset", "web", "--url", httpserver.url_for(""), "--token", "t",
        input=("\n".join(lines) + "\n").encode(),
    )  # fmt: skip
    assert done.returncode == 1
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert "ingested 10 events into web (2 failed)" in stdout
    # Line numbers as in the input: line 4 is not JSON (never sent), line 9 is n == 7 (refused by the server).
    assert "line 4:" in stderr and "line 9: bad event" in stderr
    assert "error: 2 events failed (allowed: 0)" in stderr
    assert [e["n"] for e in fake.batches[0]] == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11]
    assert "events/s" not in stderr  # no progress line when stderr is not a terminal

    allowed = run(
        "ingest", "-", "--dataset", "web", "--max-failed", "2", "--url", httpserver.url_for(""), "--token", "t",
        input=("\n".join(lines) + "\n").encode(),
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr


def test_json_array_file_gzip_compressed(httpserver, tmp_path):
    fake = serve(httpserver)
    events = [{"n": n, "when": f"2026-11-21T08:00:{n:02d}Z"} for n in range(30)]
    path = tmp_path / "events.json.gz"
    path.write_bytes(gzip.compress(json.dumps(events, indent=1).encode()))
    done = run(
        "ingest", str(path), "--dataset", "web", "--timestamp-field", "when",
        "--timestamp-format", "RFC3339", BEACON_URL=httpserver.url_for(""), BEACON_TOKEN="t",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert fake.batches == [events]
    assert fake.requests[0].args["timestamp-field"] == "when"
    assert fake.requests[0].args["timestamp-format"] == "RFC3339"
    assert done.stdout.decode().startswith("ingested 30 events into web (0 failed)")


def test_progress_line_on_a_terminal(httpserver, tmp_path):
    serve(httpserver)
    path = tmp_path / "events.ndjson"
    path.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(25_000)))
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [BEACON, "ingest", str(path), "--dataset", "web", "--url", httpserver.url_for(""), "--token", "t"],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0
    terminal = seen.decode()
    assert "\r" in terminal and "events/s" in terminal and "25,000 events read, 25,000 ingested" in terminal
    # The file's size is known: a bar with the share read, the megabytes and the time left.
    size = path.stat().st_size / 1e6
    assert re.search(rf"100% \[#{{24}}\] {size:.1f}/{size:.1f} MB, 25,000 events read, 25,000 ingested, "
                     r"[\d,]+ events/s, ETA 0:00", terminal), terminal  # fmt: skip
    assert stdout.decode().startswith("ingested 25,000 events into web (0 failed)")


def test_progress_from_a_pipe_has_no_percentage(httpserver):
    serve(httpserver)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [BEACON, "ingest", "-", "--dataset", "web", "--url", httpserver.url_for(""), "--token", "t"],
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    stdout, _ = proc.communicate(b"".join(json.dumps({"n": n}).encode() + b"\n" for n in range(3_000)), timeout=120)
    terminal = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        terminal += chunk
    os.close(master)
    assert proc.returncode == 0
    assert "3,000 events read, 3,000 ingested" in terminal.decode() and "%" not in terminal.decode()
    assert stdout.decode().startswith("ingested 3,000 events into web (0 failed)")


def test_a_first_batch_refused_prints_no_summary(httpserver, tmp_path):
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(FakeIngest(fail_batches={0}))
    path = tmp_path / "events.ndjson"
    path.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(5)))
    done = run("ingest", str(path), "--dataset", "web", "--url", httpserver.url_for(""), "--token", "t",
               BEACON_MAX_RETRIES="0")  # fmt: skip
    assert done.returncode == 1 and done.stdout == b""  # no "ingested 0 events into web" before the error
    stderr = done.stderr.decode()
    assert stderr.startswith("error: a batch of 5 events (lines 1 to 5) was not ingested")
    assert stderr.rstrip().endswith("; nothing was ingested") and "internal_error" in stderr


def test_a_batch_that_fails_names_the_lines_not_sent(httpserver, tmp_path):
    fake = FakeIngest(fail_batches={1})
    httpserver.expect_request("/v1/ingest/web").respond_with_handler(fake)
    path = tmp_path / "events.ndjson"
    path.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(25_000)))
    done = run("ingest", str(path), "--dataset", "web", "--url", httpserver.url_for(""), "--token", "t",
               BEACON_MAX_RETRIES="1")  # fmt: skip
    assert done.returncode == 1
    stderr = done.stderr.decode()
    assert "a batch of 10,000 events (lines 10001 to 20000) was not ingested" in stderr
    assert "internal_error" in stderr and "request req_" in stderr
    assert "ingested 10,000 events" in done.stdout.decode()
