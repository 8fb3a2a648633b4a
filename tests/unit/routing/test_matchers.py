"""Matchers in Alertmanager's syntax: each operator, quoting, anchoring, absent labels, errors, and RE2."""

from __future__ import annotations

import re
import time

import pytest

from app.errors import BeaconError
from app.routing.labels import fingerprint
from app.routing.matchers import MatcherError, check_matchers, parse_matcher

LABELS = {"team": "payments", "severity": "critical", "instance": "db-1:9100"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('team="payments"', True),
        ("team=payments", True),
        ("team = payments", True),
        ("team=pay", False),
        ('team!="payments"', False),
        ("team!=web", True),
        ('severity=~"critical|page"', True),
        ("severity=~critical|page", True),
        ("severity=~crit", False),  # anchored: the whole value must match
        ('severity!~"warn.*"', True),
        ("severity!~crit.*", False),
        ('instance=~"db-[0-9]+:.*"', True),
        ('cluster=""', True),  # an absent label reads as ""
        ('cluster!=""', False),
        ('cluster=~".*"', True),
        ('cluster=~".+"', False),
        ('team=~"(?i)PAYMENTS"', True),
    ],
)
def test_operators(text, expected):
    assert parse_matcher(text).matches(LABELS) is expected


def test_quoted_values_and_escapes():
    m = parse_matcher(r'msg="say \"hi\", then\\leave"')
    assert m.value == 'say "hi", then\\leave'
    assert parse_matcher(str(m)) == m  # the canonical form reads back the same
    assert str(parse_matcher("team=payments")) == 'team="payments"'


@pytest.mark.parametrize(
    "text",
    [
        "team",
        "=payments",
        "1team=x",
        "team==x",
        "team=a b",
        'team="open',
        'team="a"b"',
        "team=a,b",
        'team=~"(unclosed"',
        'team=~"(a)\\\\1"',  # backreferences: not in RE2
        'team="bad \\q escape"',
    ],
)
def test_invalid(text):
    with pytest.raises(MatcherError):
        parse_matcher(text)


def test_errors_name_the_matcher():
    with pytest.raises(BeaconError) as info:
        check_matchers(["team=x", 'severity=~"("'], "route.routes[1].matchers")
    assert info.value.param == "route.routes[1].matchers[1]" and "severity" in info.value.message


def test_re2_is_linear_where_python_backtracks():
    """Why RE2: `(a+)+$` against 'aaa…b' takes Python's `re` exponential time; RE2 answers at once."""
    m = parse_matcher('x=~"(a+)+"')
    started = time.monotonic()
    assert not m.matches({"x": "a" * 5000 + "b"})
    re2_seconds = time.monotonic() - started
    started = time.monotonic()
    assert re.compile("(a+)+$").fullmatch("a" * 22 + "b") is None
    python_seconds = time.monotonic() - started
    assert re2_seconds < 0.05 and python_seconds > 10 * re2_seconds


def test_fingerprint_is_stable_and_order_free():
    a = fingerprint({"b": "2", "a": "1"})
    assert a == fingerprint({"a": "1", "b": "2"}) and len(a) == 16 and int(a, 16) >= 0
    assert a != fingerprint({"a": "1", "b": "3"})
    assert fingerprint({"a": "1b"}) != fingerprint({"a1": "b"})
