"""Reading an Alertmanager configuration: the YAML bounded and checked, Go durations, Alertmanager's matcher
syntax (several per line, braces, escapes), each error naming the place in the YAML."""

from __future__ import annotations

import pytest

from app.errors import BeaconError
from app.routing.importing.yamltext import am_matchers, duration_ms, load


def error(call, *args) -> BeaconError:
    with pytest.raises(BeaconError) as caught:
        call(*args)
    return caught.value


@pytest.mark.parametrize(
    ("text", "ms"),
    [("30s", 30_000), ("5m", 300_000), ("4h", 14_400_000), ("1h30m", 5_400_000), ("1d", 86_400_000),
     ("2w", 1_209_600_000), ("1y", 31_536_000_000), ("1ms", 1), ("4900ms", 4_900), ("1m30s500ms", 90_500),
     ("0", 0), (0, 0)],
)  # fmt: skip
def test_go_durations(text, ms):
    assert duration_ms(text, "route.group_wait") == ms


@pytest.mark.parametrize("text", ["", "30", "5 m", "1.5h", "30m1h", "-1s", "1s1s", True])
def test_bad_durations_name_the_place(text):
    err = error(duration_ms, text, "route.routes[0].group_wait")
    assert err.code == "invalid_field" and err.param == "route.routes[0].group_wait"


def test_matchers_as_alertmanager_reads_a_line():
    found = am_matchers('{severity="critical", team=~"a|b", env!=prod}', "route.matchers[0]")
    assert [str(m) for m in found] == ['severity="critical"', 'team=~"a|b"', 'env!="prod"']
    (quoted,) = am_matchers(r'msg="a, \"b\" \\ c\nd"', "m")
    assert quoted.value == 'a, "b" \\ c\nd'
    (stray,) = am_matchers(r'path="C:\temp"', "m")  # a backslash before another letter stays as it is
    assert stray.value == "C:\\temp"
    (anchored,) = am_matchers('service=~"foo1|foo2"', "m")
    assert anchored.matches({"service": "foo2"}) and not anchored.matches({"service": "foo22"})


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('a="b', "quotes do not close"),
        ('a="b"c"', "must be escaped"),
        ("a=~(", "regular expression"),
        ("no-operator", "not a matcher"),
        ('job:rate="x"', "colon"),
    ],
)
def test_bad_matchers_name_the_place(line, fragment):
    err = error(am_matchers, line, "inhibit_rules[0].source_matchers[1]")
    assert err.param == "inhibit_rules[0].source_matchers[1]" and fragment in err.message


def test_yaml_errors_give_line_and_column():
    err = error(load, b"route:\n  receiver: [a\n")
    assert err.code == "invalid_yaml" and "line 3" in err.message
    assert error(load, b"- just\n- a list\n").code == "invalid_yaml"
    assert error(load, b"\xff\xfe").code == "invalid_yaml"
    assert load(b"") == {}


def test_aliases_cannot_expand_past_the_budget():
    # "Billion laughs": nine levels of ten aliases each stand for 10^9 strings in a few hundred bytes.
    lines = ['a0: &a0 "lol"']
    for i in range(1, 10):
        refs = ", ".join(f"*a{i - 1}" for _ in range(10))
        lines.append(f"a{i}: &a{i} [{refs}]")
    err = error(load, "\n".join(lines).encode())
    assert err.code == "invalid_yaml" and "aliases" in err.message
    shared = load(b"base: &hook {url: 'http://a'}\nreceivers: [{name: a, webhook_configs: [*hook, *hook]}]\n")
    assert shared["receivers"][0]["webhook_configs"] == [{"url": "http://a"}] * 2  # a few aliases are fine


def test_nul_characters_and_odd_keys_are_refused():
    err = error(load, b'receivers: [{name: "a\\0b"}]\n')
    assert err.param == "receivers[0].name" and "NUL" in err.message
    err = error(load, b"route: {1: x}\n")
    assert err.param == "route" and "not a string" in err.message
    assert error(load, b"x" * (1024 * 1024 + 1)).code == "payload_too_large"
