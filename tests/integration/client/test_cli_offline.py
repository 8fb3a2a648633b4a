"""The client commands' failures that need no endpoint: usage errors, an unreachable service, bad input."""

from __future__ import annotations

import re
import subprocess

from tests.servers import BEACON, clean_env, free_port


def _closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def run(*args: str, input: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BEACON, *args], env=clean_env(**env), input=input, capture_output=True, text=True, timeout=120
    )


def test_a_missing_token_is_a_usage_error():
    done = run("annotate", "--type", "deploy", "--title", "v1", "--dataset", "web", BEACON_URL=_closed_url())
    assert done.returncode == 2 and "BEACON_TOKEN" in done.stderr and done.stdout == ""


def test_missing_required_options_are_usage_errors():
    done = run("annotate", "--title", "v1", "--dataset", "web", BEACON_TOKEN="bcn_x")
    assert done.returncode == 2 and "--type" in done.stderr
    done = run("ingest", "/nonexistent.ndjson", "--dataset", "web", BEACON_TOKEN="bcn_x")
    assert done.returncode == 2 and "/nonexistent.ndjson" in done.stderr


def test_an_unreachable_service_fails_with_a_clear_message(tmp_path):
    url = _closed_url()
    done = run("query", "['web'] | count", "--url", url, "--token", "bcn_x", BEACON_MAX_RETRIES="1")
    assert done.returncode == 1, done.stderr
    retried, failed = done.stderr.splitlines()
    # The retry is said while it waits (a typo in BEACON_URL is not ~10 s of silence), then the error.
    assert re.fullmatch(r"warning: POST /v1/query\S*: ConnectError; retry 1 of 1 in [0-9.]+ s", retried), retried
    assert failed.startswith(f"error: cannot reach Beacon at {url}") and "after 2 attempts" in failed
    bad = run("query", "x", "--url", url, "--token", "bcn_x", BEACON_MAX_RETRIES="many")
    assert bad.returncode == 2 and "BEACON_MAX_RETRIES" in bad.stderr


def test_a_file_that_is_not_events_sends_nothing(tmp_path):
    bad = tmp_path / "events.json"
    bad.write_text('[{"a": 1}, oops]')
    # The URL is closed: had the command tried to send anything, the error would be a connection error.
    done = run("ingest", str(bad), "--dataset", "web", "--url", _closed_url(), "--token", "bcn_x")
    assert done.returncode == 1
    assert "is not a JSON array of events" in done.stderr and "cannot reach" not in done.stderr
    # No "ingested 0 events" summary before the error: the error itself says nothing was ingested.
    assert done.stdout == "" and done.stderr.rstrip().endswith("; nothing was ingested")


def test_a_corrupt_gzip_file_sends_nothing(tmp_path):
    bad = tmp_path / "events.ndjson.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage that is not deflate data")
    done = run("ingest", str(bad), "--dataset", "web", "--url", _closed_url(), "--token", "bcn_x")
    assert done.returncode == 1
    assert f"error: cannot read {bad}" in done.stderr and "cannot reach" not in done.stderr
