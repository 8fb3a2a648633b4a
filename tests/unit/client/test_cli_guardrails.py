"""The CLI's pure helpers for issue 18: reals in tables, relative `--time`."""

from __future__ import annotations

from datetime import UTC, datetime

import click
import pytest

from beacon_client.cli.output import _real
from beacon_client.cli.times import absolute

NOW = datetime(2026, 11, 24, 8, 0, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (49.413842000000216, "49.413842"),  # float noise of an average
        (0.30000000000000004, "0.3"),
        (5020686274.0, "5020686274"),  # a whole real
        (123456789012.5, "123456789012.5"),  # 13 significant digits kept
        (-3.5, "-3.5"),
        (0.0, "0"),
        (0.000123456, "0.000123456"),
        (1e-20, "1e-20"),
        (1e20, "1e+20"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
    ],
)
def test_reals_in_a_table(value: float, shown: str) -> None:
    assert _real(value) == shown


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("now", "2026-11-24T08:00:00.123Z"),
        ("now-5m", "2026-11-24T07:55:00.123Z"),
        ("now - 1.5h", "2026-11-24T06:30:00.123Z"),
        ("now+2d", "2026-11-26T08:00:00.123Z"),
        ("now-23000us", "2026-11-24T08:00:00.100Z"),  # every unit queries take (the query API's own parser)
        ("now-1milli", "2026-11-24T08:00:00.122Z"),
        ("2026-11-21T08:00:00Z", "2026-11-21T08:00:00Z"),  # absolute times go as they are: the service checks
        ("yesterday", "yesterday"),
    ],
)
def test_relative_times_become_rfc3339(given: str, sent: str) -> None:
    assert absolute(given, "--time", now=NOW) == sent


def test_a_relative_time_with_an_unknown_unit_is_a_usage_error() -> None:
    with pytest.raises(click.BadParameter, match="unknown unit 'w'"):
        absolute("now-1w", "--time", now=NOW)
    with pytest.raises(click.BadParameter, match="out of range"):
        absolute("now-99999999999d", "--time", now=NOW)
