"""The silence index finds exactly the silences that trying every silence finds, in the same order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.routing.matchers import Matcher, all_match, parse_matcher
from app.routing.silence_index import SilenceIndex
from app.routing.suppression import ActiveSilence

NAMES = ["alertname", "instance", "job", "team"]
VALUES = ["", "host-1", "host-12", "host-123", "host-2", "api", "web", "API", "é", "éa", "x y"]
PATTERNS = [
    "host-1.*",
    "host-12[0-9]",
    "host-\\d+",
    "api|web",
    ".*",
    ".+",
    "",
    "(?i)api",
    "h.*",
    "[a-z]+",
    "é.*",
    "host-(1|2)",
    "x y",
    ".*-1",
]


def quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


matcher = st.one_of(
    st.builds(lambda n, v: parse_matcher(f"{n}={quoted(v)}"), st.sampled_from(NAMES), st.sampled_from(VALUES)),
    st.builds(lambda n, v: parse_matcher(f"{n}!={quoted(v)}"), st.sampled_from(NAMES), st.sampled_from(VALUES)),
    st.builds(lambda n, p: parse_matcher(f"{n}=~{quoted(p)}"), st.sampled_from(NAMES), st.sampled_from(PATTERNS)),
    st.builds(lambda n, p: parse_matcher(f"{n}!~{quoted(p)}"), st.sampled_from(NAMES), st.sampled_from(PATTERNS)),
)
# As silences.py stores them: at least one matcher that an empty value fails.
silence_matchers = st.lists(matcher, min_size=1, max_size=3).filter(lambda ms: not all(m.matches({}) for m in ms))
label_sets = st.dictionaries(st.sampled_from(NAMES), st.sampled_from(VALUES), max_size=4)


def silences_of(groups: list[list[Matcher]]) -> list[ActiveSilence]:
    return [ActiveSilence(f"sil_{i}", tuple(ms)) for i, ms in enumerate(groups)]


def brute_force(silences: list[ActiveSilence], labels: dict[str, str]) -> list[str]:
    return [s.id for s in silences if all_match(s.matchers, labels)]


@settings(max_examples=400, deadline=None)
@given(st.lists(silence_matchers, max_size=30), st.lists(label_sets, min_size=1, max_size=10))
def test_the_index_matches_what_trying_every_silence_matches(
    groups: list[list[Matcher]], labels: list[dict[str, str]]
) -> None:
    silences = silences_of(groups)
    index = SilenceIndex(silences)
    for one in labels:
        assert index.matching(one) == brute_force(silences, one), one


def test_a_regex_with_a_literal_prefix_is_found_by_it() -> None:
    silences = silences_of(
        [
            [parse_matcher('instance=~"host-12[0-9]"')],
            [parse_matcher('instance=~"host-1.*"'), parse_matcher('job="api"')],
            [parse_matcher('instance=~"api|web"')],  # no common prefix: tried on every value
            [parse_matcher('alertname="Down"'), parse_matcher('instance="host-123"')],
        ]
    )
    index = SilenceIndex(silences)
    assert index.matching({"instance": "host-123", "job": "api", "alertname": "Down"}) == [
        "sil_0",
        "sil_1",
        "sil_3",
    ]
    assert index.matching({"instance": "host-13", "job": "api"}) == ["sil_1"]
    assert index.matching({"instance": "web"}) == ["sil_2"]
    assert index.matching({"instance": "host-12"}) == []
    assert index.matching({}) == []


def test_a_silence_is_filed_under_its_rarest_equality() -> None:
    """Thousands of silences on one alertname, each for one instance: an alert is checked against its own."""
    groups = [[parse_matcher('alertname="CPU"'), parse_matcher(f'instance="host-{i}"')] for i in range(5_000)]
    index = SilenceIndex(silences_of(groups))
    assert index._exact.get(("alertname", "CPU")) is None
    assert len(index._exact[("instance", "host-42")]) == 1
    assert index.matching({"alertname": "CPU", "instance": "host-42"}) == ["sil_42"]
