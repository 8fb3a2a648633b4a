"""`beacon ingest` and `beacon query` end to end against `beacon serve`."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from datetime import UTC, datetime, timedelta

REQUEST = re.compile(r"\[status (\d+), request (req_[0-9a-f]+)\]")


T0 = datetime(2026, 1, 5, 10, tzinfo=UTC)


def ndjson(n: int) -> str:
    """n events one second apart from 10:00 on 5 January 2026, alternating between two services."""
    services = ("api", "web")
    return "".join(
        json.dumps({"_time": (T0 + timedelta(seconds=i)).isoformat(), "service": services[i % 2], "i": i}) + "\n"
        for i in range(n)
    )


def test_ingest_ndjson_file_then_query_in_every_format(served, tmp_path):
    path = tmp_path / "events.ndjson"
    path.write_text(ndjson(12_345))
    done = served.beacon("ingest", str(path), "--dataset", "cli-web")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        r"ingested 12,345 events into cli-web \(0 failed\) in [\d.]+ s, [\d,]+ events/s\n", done.stdout
    ), done.stdout
    assert "events/s" not in done.stderr  # not a terminal: no progress line

    apl = "['cli-web'] | summarize n = count() by service | sort by service asc"
    table = served.beacon("query", apl)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["service", "n"] and lines[2].split() == ["api", "6173"]
    assert lines[3].split() == ["web", "6172"] and lines[-1].startswith("(2 rows")

    as_json = served.beacon("query", apl, "--format", "json")
    assert json.loads(as_json.stdout) == [{"service": "api", "n": 6173}, {"service": "web", "n": 6172}]
    as_ndjson = served.beacon("query", apl, "--format", "ndjson")
    assert [json.loads(line) for line in as_ndjson.stdout.splitlines()] == json.loads(as_json.stdout)
    as_csv = served.beacon("query", apl, "--format", "csv")
    assert list(csv.reader(io.StringIO(as_csv.stdout))) == [["service", "n"], ["api", "6173"], ["web", "6172"]]

    ranged = served.beacon(
        "query", "['cli-web'] | summarize n = count()", "--format", "json",
        "--start-time", "2026-01-05T10:00:00Z", "--end-time", "2026-01-05T10:00:10Z",
    )  # fmt: skip
    assert json.loads(ranged.stdout)[0]["n"] in (10, 11)  # 10 or 11 depending on the end bound's inclusiveness

    from_stdin = served.beacon("query", "-", "--format", "csv", input="['cli-web'] | summarize n = count()")
    assert from_stdin.stdout.splitlines() == ["n", "12345"]


def test_ingest_json_array_from_stdin_gzip_and_failed_events(served):
    events = [{"_time": "2026-01-05T11:00:00Z", "k": n} for n in range(5)] + [
        {"_time": "not a time", "k": 5},
        7,
    ]
    body = gzip.compress(json.dumps(events).encode())
    done = served.beacon("ingest", "-", "--dataset", "cli-array", input=body)
    assert done.returncode == 1
    assert "ingested 5 events into cli-array (2 failed)" in done.stdout
    assert "item 6:" in done.stderr and "item 7:" in done.stderr
    assert "error: 2 events failed (allowed: 0)" in done.stderr
    allowed = served.beacon("ingest", "-", "--dataset", "cli-array", "--max-failed", "2", input=body)
    assert allowed.returncode == 0, allowed.stderr


def test_query_errors_exit_1_with_code_message_and_request_id(served):
    bad = served.beacon("query", "['cli-web'] | summarize count( by")
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("error: invalid_query: ") and "line 1, column" in bad.stderr.lower()
    status = REQUEST.search(bad.stderr)
    assert status and status.group(1) == "400"
    unknown = served.beacon("query", "['no-such-dataset'] | take 1")
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: not_found: ")


def test_ingest_with_a_token_lacking_the_scope(served):
    with served.client() as beacon:
        reader = beacon.create_token("reader", ["query"]).token
    done = served.beacon("ingest", "-", "--dataset", "cli-web", input=ndjson(3), BEACON_TOKEN=reader)
    assert done.returncode == 1
    assert "was not ingested" in done.stderr and "insufficient_scope" in done.stderr
    assert REQUEST.search(done.stderr)
