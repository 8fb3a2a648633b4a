"""What people type in the console and the CLI: durations, `name=value` labels, matchers made from labels."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.routing.matchers import parse_matcher
from app.routing.texts import lines, matchers_for
from beacon_client.notation.durations import parse_duration
from beacon_client.notation.labels import parse_labels


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("30m", timedelta(minutes=30)),
        (" 2H ", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("1d2h3m4s", timedelta(days=1, hours=2, minutes=3, seconds=4)),
        ("3650d", timedelta(days=3650)),
        ("2w", timedelta(weeks=2)),  # as `beacon tokens create --expires-in` has always taken
        ("1w2d", timedelta(days=9)),
    ],
)
def test_durations(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "2", "2 hours", "h", "1m1h", "-1h", "0m", "0h0m", "3651d", "9" * 30 + "d"])
def test_bad_durations(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_labels():
    assert parse_labels(["team=payments", ' severity = "page" ', "empty=", 'q=a="b"', "sp=a b"]) == {
        "team": "payments",
        "severity": "page",
        "empty": "",
        "q": 'a="b"',
        "sp": "a b",
    }
    for bad, message in ((["team"], "not a label"), (["=x"], "not a label"), (["a=1", "a=2"], "twice")):
        with pytest.raises(ValueError, match=message):
            parse_labels(bad)


def test_matchers_for_labels_match_exactly_those_values():
    labels = {"b": 'quote " and \\ back', "a": "line\nbreak", "c": "x,y {z}"}
    texts = matchers_for(labels)
    assert texts == ['a="line\\nbreak"', 'b="quote \\" and \\\\ back"', 'c="x,y {z}"']
    assert all(parse_matcher(t).matches(labels) for t in texts)
    assert lines("\n".join(texts) + "\n\n  ") == texts  # one per line survives a text area
