"""The CLI tells of silent mistakes (issue 18), end to end against `beacon serve`: the service's warnings on
stderr (stdout stays the result), annotations on datasets that do not exist, relative `--time`, and reals in
tables without float noise."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta


def _ingest(served, dataset, events):
    with served.client() as beacon:
        result = beacon.ingest(dataset, events)
    assert result.ingested == len(events)


def test_query_warnings_go_to_stderr_in_every_format(served):
    _ingest(served, "cli-warn", [{"_time": "2026-01-05T10:00:00Z", "status": 500}])
    for fmt in ("table", "json", "ndjson", "csv"):
        done = served.beacon("query", "['cli-warn'] | where statuss >= 500 | summarize n = count()", "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert done.stderr == (
            "warning: No event of dataset 'cli-warn' has ever had a field `statuss`: it reads as null in every "
            "event; did you mean `status`?\n"
        )
        assert "statuss" not in done.stdout  # the result alone, as before
    quiet = served.beacon("query", "['cli-warn'] | where status >= 500 | summarize n = count()", "--format", "json")
    assert quiet.stderr == "" and json.loads(quiet.stdout) == [{"n": 1}]


def test_ingest_names_the_time_field_it_did_not_read(served, tmp_path):
    path = tmp_path / "events.ndjson"
    # Two batches (--max-events is not an option: 10,001 events make two), one warning.
    path.write_text("".join(json.dumps({"timestamp": "2026-01-05T10:00:00Z", "i": i}) + "\n" for i in range(10_001)))
    done = served.beacon("ingest", str(path), "--dataset", "cli-time")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ingested 10,001 events into cli-time (0 failed)")
    assert done.stderr == (
        "warning: events without `_time` were stamped with their arrival time, but they carry `timestamp`: pass "
        "--timestamp-field timestamp (and --timestamp-format if it is not RFC 3339 or a unix time)\n"
    )
    fixed = served.beacon("ingest", str(path), "--dataset", "cli-time", "--timestamp-field", "timestamp")
    assert fixed.returncode == 0 and fixed.stderr == ""


def test_annotate_warns_about_a_dataset_that_does_not_exist(served):
    _ingest(served, "cli-ann", [{"a": 1}])
    done = served.beacon("annotate", "--type", "deploy", "--title", "v1", "--dataset", "cli-ann", "--dataset", "nope")
    assert done.returncode == 0
    assert re.fullmatch(r"ann_[0-9a-f]+\n", done.stdout)
    assert done.stderr == "warning: no dataset named 'nope' yet: the annotation shows once events arrive in it\n"
    with served.client() as beacon:
        assert beacon.get_annotation(done.stdout.strip()).datasets == ["cli-ann", "nope"]
        before = len(list(beacon.iterate(beacon.list_annotations)))

    strict = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1", "--dataset", "nope", "--dataset", "nope2", "--strict"
    )
    assert strict.returncode == 1 and strict.stdout == ""
    assert strict.stderr.startswith("error: no datasets named 'nope', 'nope2'; nothing was created")
    with served.client() as beacon:
        assert len(list(beacon.iterate(beacon.list_annotations))) == before
    ok = served.beacon("annotate", "--type", "deploy", "--title", "v1", "--dataset", "cli-ann", "--strict")
    assert ok.returncode == 0 and ok.stderr == ""


def test_annotate_with_a_token_that_cannot_read_datasets(served):
    with served.client() as beacon:
        writer = beacon.create_token("ci", ["annotations:write"]).token
    args = ("annotate", "--type", "deploy", "--title", "v1", "--dataset", "nope")
    done = served.beacon(*args, BEACON_TOKEN=writer)
    assert done.returncode == 0 and done.stderr == ""  # cannot tell: says nothing, as before
    strict = served.beacon(*args, "--strict", BEACON_TOKEN=writer)
    assert strict.returncode == 1 and strict.stderr.startswith("error: cannot check that dataset 'nope' exists")


def test_annotate_time_relative_to_now(served):
    _ingest(served, "cli-ann", [{"a": 1}])
    before = datetime.now(UTC)
    done = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1", "--dataset", "cli-ann", "--time", "now-5m", "--end-time", "now"
    )
    after = datetime.now(UTC)
    assert done.returncode == 0, done.stderr
    with served.client() as beacon:
        ann = beacon.get_annotation(done.stdout.strip())
    slack = timedelta(seconds=1)  # the annotation keeps milliseconds
    assert before - timedelta(minutes=5) - slack <= ann.time <= after - timedelta(minutes=5)
    assert ann.end_time is not None and before - slack <= ann.end_time <= after
    bad = served.beacon("annotate", "--type", "deploy", "--title", "v1", "--dataset", "cli-ann", "--time", "now-5y")
    assert bad.returncode == 2 and "unknown unit 'y'" in bad.stderr


def test_table_shows_reals_without_float_noise(served):
    durations = [12.1, 33.7, 102.441, 49.413842]
    _ingest(served, "cli-real", [{"_time": "2026-01-05T10:00:00Z", "d": d, "bytes": 2_510_343_137} for d in durations])
    apl = "['cli-real'] | summarize total = sum(bytes), avg(d), s = sum(d), big = todouble(sum(bytes)) * 1.0"
    table = served.beacon("query", apl)
    assert table.returncode == 0, table.stderr
    header, _, row = table.stdout.splitlines()[:3]
    assert header.split() == ["total", "avg_d", "s", "big"]
    assert row.split() == ["10041372548", "49.4137105", "197.654842", "10041372548"]
    as_json = json.loads(served.beacon("query", apl, "--format", "json").stdout)
    assert as_json[0]["total"] == 10041372548  # a whole number, in every format
