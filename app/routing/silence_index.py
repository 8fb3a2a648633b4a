"""Which active silences match a label set, without trying every silence on every alert.

10,000 silences by 12,000 alerts was 120 million matcher checks (13 minutes of one worker for one request). Every
silence has a matcher that an empty value fails (silences.py refuses one without), so an alert it matches has
that label, with a value the matcher takes. Each silence is filed under one such matcher, its key (of those it has,
the one the fewest silences share):
- `name="value"`: under that exact pair;
- a regex whose every match starts with a literal (`host-12[0-9]`: `host-12`, from RE2's PossibleMatchRange):
  under the label name and that prefix;
- failing both (`name=~"api|web"`, `name!=""`): under the label name alone, tried on every alert with that label
  (once per distinct value: values such as `alertname` repeat).
An alert's candidates are then found by a few dictionary lookups per label, and only they are checked in full,
equalities first and each regex once per distinct value (RE2 through Python costs microseconds a call), so an
index never changes which silences match: it only skips those that cannot.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.routing.matchers import Matcher


@dataclass(frozen=True)
class ActiveSilence:
    """A silence in force (app/routing/suppression.py loads them), as the index files it."""

    id: str
    matchers: tuple[Matcher, ...]


PREFIX_SCAN_BYTES = 64  # how much of a regex's possible matches RE2 is asked about
MEMO_VALUES = 200_000  # results remembered per index: of a label value against the silences filed by name alone,
# and of a regex matcher against a label value


@dataclass
class _ByName:
    """The silences filed under one label name: by a literal prefix of the value, or to try on every value."""

    prefixes: dict[bytes, list[int]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)  # the prefix lengths in use, for the lookups
    scan: list[int] = field(default_factory=list)  # positions of silences whose key matcher is tried on each value


def _literal_prefix(m: Matcher) -> bytes:
    """Bytes every value `m` (a `=~` matcher) takes starts with; b"" when RE2 cannot tell."""
    regex: Any = m._regex
    try:
        low, high = regex.possiblematchrange(PREFIX_SCAN_BYTES)
    except Exception:  # RE2 cannot bound it (e.g. it starts with `.*`)
        return b""
    if not isinstance(low, bytes) or not isinstance(high, bytes):
        return b""
    common = 0
    for a, b in zip(low, high, strict=False):
        if a != b:
            break
        common += 1
    # Between two strings that share a prefix lies only what starts with it: every match starts with it.
    return low[:common]


def _needs_value(m: Matcher) -> bool:
    """Whether an alert must have the label, with a non-empty value, for `m` to hold."""
    return not m.matches({})


class SilenceIndex:
    def __init__(self, silences: Sequence[ActiveSilence]) -> None:
        self._silences = silences
        # Each silence's matchers as they are checked: equalities (cheap) before regexes.
        self._checks = [tuple(sorted(s.matchers, key=lambda m: m.op in ("=~", "!~"))) for s in silences]
        self._exact: dict[tuple[str, str], list[int]] = defaultdict(list)
        self._names: dict[str, _ByName] = defaultdict(_ByName)
        self._always: list[int] = []  # silences with no key matcher (none are stored; kept for safety)
        self._memo: dict[tuple[str, str], list[int]] = {}
        self._regex_memo: dict[tuple[int, str], bool] = {}
        self._answers: dict[tuple[tuple[str, str], ...], list[str]] = {}  # label sets asked about before
        keys = [self._keys(s) for s in silences]
        shared = Counter(key for options in keys for key in options)
        for at, options in enumerate(keys):
            self._file(at, min(options, key=shared.__getitem__) if options else None)
        for bucket in self._names.values():
            bucket.lengths = sorted({len(p) for p in bucket.prefixes})

    @staticmethod
    def _keys(silence: ActiveSilence) -> list[tuple[str, str, str | bytes]]:
        """Where the silence could be filed: ("=", name, value), ("prefix", name, bytes) or ("name", name, "")."""
        found: list[tuple[str, str, str | bytes]] = []
        for m in silence.matchers:
            if m.op == "=" and m.value:
                found.append(("=", m.name, m.value))
            elif m.op == "=~" and _needs_value(m):
                prefix = _literal_prefix(m)
                found.append(("prefix", m.name, prefix) if prefix else ("name", m.name, ""))
            elif _needs_value(m):
                found.append(("name", m.name, ""))
        return found

    def _file(self, at: int, key: tuple[str, str, str | bytes] | None) -> None:
        if key is None:
            self._always.append(at)
            return
        kind, name, value = key
        if kind == "=":
            assert isinstance(value, str)
            self._exact[(name, value)].append(at)
        elif kind == "prefix":
            assert isinstance(value, bytes)
            self._names[name].prefixes.setdefault(value, []).append(at)
        else:
            self._names[name].scan.append(at)

    def matching(self, labels: Mapping[str, str]) -> list[str]:
        """The ids of the silences whose matchers all hold for `labels`, in the order they were given (a new
        list: the caller may keep or change it)."""
        key = tuple(labels.items())
        known = self._answers.get(key)
        if known is None:
            known = self._matching(labels)
            if len(self._answers) < MEMO_VALUES:
                self._answers[key] = known
        return list(known)

    def _matching(self, labels: Mapping[str, str]) -> list[str]:
        candidates: list[int] = list(self._always)
        exact, names = self._exact, self._names
        for name, value in labels.items():
            if not value:
                continue
            found = exact.get((name, value))
            if found:
                candidates.extend(found)
            bucket = names.get(name)
            if bucket is not None:
                candidates.extend(self._by_name(bucket, name, value))
        if not candidates:
            return []
        silences = self._silences
        return [silences[at].id for at in sorted(set(candidates)) if self._holds(at, labels)]

    def _holds(self, at: int, labels: Mapping[str, str]) -> bool:
        memo = self._regex_memo
        for m in self._checks[at]:
            value = labels.get(m.name, "")
            if m.op == "=":
                if value != m.value:
                    return False
            elif m.op == "!=":
                if value == m.value:
                    return False
            else:
                key = (id(m), value)
                held = memo.get(key)
                if held is None:
                    held = m.matches(labels)
                    if len(memo) < MEMO_VALUES:
                        memo[key] = held
                if not held:
                    return False
        return True

    def _by_name(self, bucket: _ByName, name: str, value: str) -> list[int]:
        found: list[int] = []
        if bucket.lengths:
            raw = value.encode()
            for length in bucket.lengths:
                if length > len(raw):
                    break
                found.extend(bucket.prefixes.get(raw[:length], ()))
        if bucket.scan:
            memo = self._memo.get((name, value))
            if memo is None:
                silences = self._silences
                memo = [at for at in bucket.scan if _key_holds(silences[at].matchers, name, value)]
                if len(self._memo) < MEMO_VALUES:
                    self._memo[(name, value)] = memo
            found.extend(memo)
        return found


def _key_holds(matchers: Sequence[Matcher], name: str, value: str) -> bool:
    """Whether the silence's matchers on `name` hold for this value (the others are checked in full later)."""
    probe = {name: value}
    return all(m.matches(probe) for m in matchers if m.name == name)
