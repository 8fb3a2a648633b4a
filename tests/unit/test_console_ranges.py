"""Chart ranges: presets and explicit ranges become whole buckets of a readable size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.errors import BeaconError
from app.ui.ranges import MAX_BUCKETS, PRESETS, choose_step, range_for_window, resolve_range

NOW = datetime(2026, 11, 21, 10, 7, 30, 250000, tzinfo=UTC)


def test_the_default_is_the_last_24_hours_in_five_minute_buckets():
    rng = resolve_range(None, None, None, NOW)
    assert rng.preset == "24h" and rng.step_text == "5m"
    # The range ends with the bucket holding now, and keeps its length.
    assert rng.end == datetime(2026, 11, 21, 10, 10, tzinfo=UTC)
    assert rng.end - rng.start == timedelta(hours=24)
    assert rng.buckets == 288


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_fits_in_whole_buckets(preset):
    rng = resolve_range(preset, None, None, NOW)
    assert rng.buckets <= MAX_BUCKETS
    assert (rng.end - rng.start) % rng.step == timedelta(0)
    assert rng.start <= NOW - PRESETS[preset] + rng.step and rng.end >= NOW


def test_an_explicit_range_is_widened_to_whole_buckets():
    rng = resolve_range("1h", "2026-11-20T10:03:00Z", "2026-11-20T12:58:00+00:00", NOW)
    assert rng.preset is None  # explicit bounds win over the preset
    assert rng.step_text == "1m"
    assert rng.start == datetime(2026, 11, 20, 10, 3, tzinfo=UTC)
    assert rng.end == datetime(2026, 11, 20, 12, 58, tzinfo=UTC)
    rng = resolve_range(None, "2026-11-20T10:03:10Z", None, NOW)
    assert rng.start == datetime(2026, 11, 20, 10, 0, tzinfo=UTC)  # 5-minute buckets: floored
    assert rng.end == datetime(2026, 11, 21, 10, 10, tzinfo=UTC)  # to now, ceiled


@pytest.mark.parametrize(
    ("preset", "start", "end", "param"),
    [
        ("2x", None, None, "range"),
        ("0m", None, None, "range"),
        ("30s", None, None, "range"),  # under a minute
        ("91d", None, None, "range"),  # over 90 days
        ("-1h", None, None, "range"),
        (None, "yesterday", None, "start"),
        (None, "2026-11-20T10:00:00", None, "start"),  # no offset
        (None, "2026-11-20T10:00:00Z", "2026-11-20T09:00:00Z", "start"),
    ],
)
def test_bad_ranges_are_clear_errors(preset, start, end, param):
    with pytest.raises(BeaconError) as info:
        resolve_range(preset, start, end, NOW)
    assert info.value.code == "invalid_parameter" and info.value.param == param


def test_steps_keep_charts_readable():
    assert choose_step(timedelta(minutes=5))[0] == "1s"
    assert choose_step(timedelta(days=365))[0] == "7d"
    assert choose_step(timedelta(days=365 * 50))[0] == "7d"  # the largest step past that


@pytest.mark.parametrize(
    ("text", "length", "step"),
    [
        ("90m", timedelta(minutes=90), "30s"),
        ("3d", timedelta(days=3), "15m"),
        ("1h30m", timedelta(minutes=90), "30s"),
        ("2h", timedelta(hours=2), "30s"),
        ("90d", timedelta(days=90), "12h"),
        ("1m", timedelta(minutes=1), "1s"),
    ],
)
def test_any_duration_is_a_range(text, length, step):
    rng = resolve_range(text, None, None, NOW)
    assert rng.preset == text and rng.step_text == step
    assert rng.end - rng.start == length and rng.buckets <= MAX_BUCKETS and rng.end >= NOW


def test_an_odd_duration_is_widened_to_whole_buckets():
    rng = resolve_range("13m7s", None, None, NOW)
    assert (rng.end - rng.start) % rng.step == timedelta(0) and rng.buckets <= MAX_BUCKETS
    assert timedelta(minutes=13, seconds=7) <= rng.end - rng.start < timedelta(minutes=13, seconds=7) + rng.step


def test_relative_start_and_end_are_taken():
    rng = resolve_range(None, "now-3h", "now-1h", NOW)
    assert rng.preset is None and rng.step_text == "30s"
    assert rng.start == datetime(2026, 11, 21, 7, 7, 30, tzinfo=UTC)
    assert rng.end == datetime(2026, 11, 21, 9, 8, tzinfo=UTC)


@pytest.mark.parametrize(
    ("window_seconds", "expected"),
    [(10, "15m"), (30, "1h"), (60, "3h"), (300, "12h"), (3600, "7d"), (86400, "90d"), (30 * 86400, "90d")],
)
def test_a_monitor_chart_defaults_to_a_range_of_about_ninety_of_its_windows(window_seconds, expected):
    assert range_for_window(timedelta(seconds=window_seconds)) == expected
    rng = resolve_range(None, None, None, NOW, default=expected)
    assert rng.preset == expected
