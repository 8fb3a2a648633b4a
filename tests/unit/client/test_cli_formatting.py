"""The CLI's progress line, durations and table cells."""

from __future__ import annotations

from datetime import UTC, datetime

import click
import pytest

from beacon_client.cli.durations import SECONDS
from beacon_client.cli.exporting import ExportProgress
from beacon_client.cli.reading import IngestProgress
from beacon_client.cli.tables import block, table, text


def test_progress_bar_with_a_known_size_shows_share_rate_and_time_left():
    # 10 s in, 25 MB of 100 MB read: 2.5 MB/s, so 75 MB take 30 s more.
    line = IngestProgress.line(10.0, 50_000, 40_000, 3_000_000, done_bytes=25_000_000, total_bytes=100_000_000)
    assert line == (
        " 25% [######..................] 25.0/100.0 MB, 50,000 events read, 40,000 ingested, 5,000 events/s, ETA 0:30 "
    )
    long = IngestProgress.line(1.0, 1, 0, 0, done_bytes=1, total_bytes=3_601)
    assert "ETA 60:00" in long


def test_progress_without_a_size_counts_only():
    line = IngestProgress.line(2.0, 10_000, 9_000, 1_500_000)
    assert line == "10,000 events read, 9,000 ingested, 5,000 events/s, 1.5 MB sent "
    assert "ETA --:--" in IngestProgress.line(1.0, 0, 0, 0, done_bytes=0, total_bytes=10)


@pytest.mark.parametrize(("given", "seconds"), [("90", 90), ("90s", 90), ("5m", 300), ("2h", 7200), ("1d", 86400)])
def test_durations(given, seconds):
    assert SECONDS.convert(given, None, None) == seconds


def test_a_bad_duration_is_a_usage_error():
    with pytest.raises(click.BadParameter, match="5m"):
        SECONDS.convert("soon", None, None)


def test_cells_read_as_a_person_expects():
    assert text(None) == text([]) == text({}) == "-"
    assert text(True) == "yes" and text(30.0) == "30" and text(49.413842000000216) == "49.413842"
    assert text(datetime(2026, 11, 24, 7, 5, 29, 3000, tzinfo=UTC)) == "2026-11-24T07:05:29Z"
    assert text({"service": "api"}) == '{"service":"api"}'
    shown = table(["name", "n"], [["api", 3], ["web", 12]])
    assert shown.splitlines() == ["name   n", "----  --", "api    3", "web   12"]
    assert table(["x"], [], empty="(none yet)") == "(none yet)\n"
    assert block([("id", "m1"), ("last_value", None)]) == "id:         m1\nlast_value: -\n"


def test_status_lines_rewrite_one_line_on_a_terminal_only(capsys):
    off = ExportProgress(enabled=False)
    off.update(5, 100)
    off.done()
    assert capsys.readouterr().err == ""  # not a terminal: nothing, not even the final newline

    export = ExportProgress(enabled=True, interval=3600)
    export.update(1_000, 2_000_000)
    export.update(2_000, 4_000_000)  # within the interval: not rewritten
    export.done()
    err = capsys.readouterr().err
    assert err.startswith("\r1,000 rows, 2.0 MB, ") and "rows/s" in err and err.endswith("\n")
    assert err.count("\r") == 1

    ingest = IngestProgress(enabled=True, interval=3600)
    ingest.update(10, 10, 1_000)
    ingest.update(20, 20, 2_000, force=True)  # the last line is forced out
    ingest.done()
    err = capsys.readouterr().err
    assert err.count("\r") == 2 and "\r20 events read, 20 ingested" in err and err.endswith("\n")
