"""Inhibit rules: an alert matching `target_matchers` is suppressed while another alert matching
`source_matchers` fires with the same values of the `equal` labels (absent reads as "", as in Alertmanager).

An alert never inhibits itself, and (Alertmanager's rule) an alert that matches both sides of a rule is not
inhibited by sources that also match both sides, so two such alerts cannot silence each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.errors import BeaconError
from app.routing import document as d
from app.routing.labels import is_label_name
from app.routing.matchers import Matcher, all_match, check_matchers


@dataclass(frozen=True)
class InhibitRule:
    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]


def compile_rule(raw: d.InhibitRule, param: str) -> InhibitRule:
    for i, name in enumerate(raw.equal):
        if not is_label_name(name):
            raise BeaconError("invalid_field", f"{name!r} is not a label name.", param=f"{param}.equal[{i}]")
    return InhibitRule(
        source=tuple(check_matchers(raw.source_matchers, f"{param}.source_matchers")),
        target=tuple(check_matchers(raw.target_matchers, f"{param}.target_matchers")),
        equal=tuple(raw.equal),
    )


class Inhibitor:
    """The inhibiting alerts at one moment, indexed per rule by their `equal` values."""

    def __init__(self, rules: Iterable[InhibitRule], firing: Iterable[tuple[str, Mapping[str, str]]]) -> None:
        self.rules = tuple(rules)
        # per rule: equal values -> [(fingerprint, the source also matches the target side)]
        self._index: list[dict[tuple[str, ...], list[tuple[str, bool]]]] = [{} for _ in self.rules]
        if not self.rules:
            return
        for fp, labels in firing:
            for rule, index in zip(self.rules, self._index, strict=True):
                if all_match(rule.source, labels):
                    key = tuple(labels.get(n, "") for n in rule.equal)
                    index.setdefault(key, []).append((fp, all_match(rule.target, labels)))

    def inhibited_by(self, fp: str, labels: Mapping[str, str]) -> list[str]:
        found: set[str] = set()
        for rule, index in zip(self.rules, self._index, strict=True):
            if not index or not all_match(rule.target, labels):
                continue
            both_sides = all_match(rule.source, labels)
            for source_fp, source_both in index.get(tuple(labels.get(n, "") for n in rule.equal), ()):
                if source_fp != fp and not (both_sides and source_both):
                    found.add(source_fp)
        return sorted(found)
