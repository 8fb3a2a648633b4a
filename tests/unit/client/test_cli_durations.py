"""The CLI's durations are beacon_client.notation.durations', one notation for every option that takes one."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from app.cli import main
from beacon_client.cli.durations import SECONDS


@pytest.mark.parametrize(("given", "seconds"), [("90", 90), ("0", 0), ("90s", 90), ("5m", 300), ("1h30m", 5400)])
def test_monitor_options_take_seconds_or_a_duration(given: str, seconds: int) -> None:
    assert SECONDS.convert(given, None, None) == seconds


def test_a_bad_monitor_duration_is_a_usage_error() -> None:
    with pytest.raises(click.BadParameter, match="is not a duration"):
        SECONDS.convert("5 min", None, None)


@pytest.mark.parametrize(("given", "message"), [("soon", "is not a duration"), ("99999999999d", "at most 10 years")])
def test_a_token_expiry_beyond_reason_is_a_usage_error_not_a_traceback(given: str, message: str) -> None:
    done = CliRunner().invoke(main, ["tokens", "create", "--name", "x", "--expires-in", given])
    assert done.exit_code == 2 and message in done.output and "--expires-in" in done.output
