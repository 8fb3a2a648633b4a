"""Why an alert is suppressed at a moment: the silences that match it, the alerts that inhibit it, and the time
intervals that mute the routes it takes. Built once per job run or request (`load`), then asked per alert.

Silences are looked up through an index (app/routing/silence_index.py) rather than tried one by one. The
index of the active silences is kept (`_indexed`) while they stay the same, with what it has learnt (the
silences of each label set it was asked about), and matchers are compiled once per process (`_matcher`)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import asyncpg
import msgspec

from app.routing.inhibition import Inhibitor, InhibitRule
from app.routing.matchers import Matcher, parse_matcher
from app.routing.routes import Routes
from app.routing.silence_index import ActiveSilence, SilenceIndex
from app.routing.tree import Route, Tree


@lru_cache(maxsize=65_536)  # the matchers of 10,000 silences and more: a regex compiled again costs ~20 us
def _matcher(text: str) -> Matcher:
    return parse_matcher(text)  # stored matchers were checked when they were written


@dataclass(frozen=True)
class Verdict:
    silenced_by: list[str]
    inhibited_by: list[str]
    muted_by: list[str]
    all_routes_muted: bool

    @property
    def suppressed(self) -> bool:
        return bool(self.silenced_by or self.inhibited_by or self.all_routes_muted)


class Suppressor:
    def __init__(
        self,
        tree: Tree,
        silences: Sequence[ActiveSilence],
        inhibitor: Inhibitor,
        now: datetime,
        *,
        index: SilenceIndex | None = None,
    ) -> None:
        self.tree = tree
        self.silences = silences
        self._index = index  # of `silences`; built when first asked if not given
        self.inhibitor = inhibitor
        self.now = now
        # Firing alerts (fingerprints) and silences (ids) the viewer may not see (app/access.py): left out where a
        # verdict is shown, never where it decides what is sent.
        self.hidden: frozenset[str] = frozenset()
        # The routes alerts take (the tree's, and the monitors' own), for views: set by app/routing/service.py.
        self.routes: Routes = Routes(tree, {})

    def shown(self, ids: list[str]) -> list[str]:
        return [i for i in ids if i not in self.hidden] if self.hidden else ids

    def silenced_by(self, labels: Mapping[str, str]) -> list[str]:
        """The silences whose matchers all hold for `labels`, in the order they were loaded."""
        if self._index is None:
            self._index = SilenceIndex(self.silences)
        return self._index.matching(labels)

    def route_muted_by(self, route: Route) -> list[str]:
        return self.tree.muted_by(route, self.now)

    def verdict(self, fp: str, labels: Mapping[str, str], *, firing: bool = True) -> Verdict:
        """Silences and inhibition concern firing alerts only (a resolve reaches whoever heard the alert fire)."""
        if not firing:
            return Verdict([], [], [], False)
        muted: list[str] = []
        all_muted = True
        for route in self.routes.match(labels):
            names = self.route_muted_by(route)
            muted.extend(n for n in names if n not in muted)
            all_muted = all_muted and bool(names)
        return Verdict(self.silenced_by(labels), self.inhibitor.inhibited_by(fp, labels), muted, all_muted)


SilenceRows = tuple[tuple[str, tuple[str, ...]], ...]
KEPT_INDEXES = 4
BIG = 500  # silences, or firing alerts to index for inhibition, from which the work goes to a worker thread
_indexes: OrderedDict[SilenceRows, tuple[tuple[ActiveSilence, ...], SilenceIndex]] = OrderedDict()


def _index_of(rows: SilenceRows) -> tuple[tuple[ActiveSilence, ...], SilenceIndex]:
    silences = tuple(ActiveSilence(sid, tuple(_matcher(t) for t in texts)) for sid, texts in rows)
    return silences, SilenceIndex(silences)


async def _indexed(rows: SilenceRows) -> tuple[tuple[ActiveSilence, ...], SilenceIndex]:
    """The active silences (ids and matcher texts, in order) compiled and indexed, once while they stay the same:
    10,000 of them take most of a second to index (on a worker thread, so that the event loop runs meanwhile),
    and views ask again every few seconds."""
    found = _indexes.get(rows)
    if found is not None:
        _indexes.move_to_end(rows)
        return found
    found = await asyncio.to_thread(_index_of, rows) if len(rows) >= BIG else _index_of(rows)
    _indexes[rows] = found
    while len(_indexes) > KEPT_INDEXES:
        _indexes.popitem(last=False)
    return found


def _source_labels(rules: Sequence[InhibitRule]) -> list[dict[str, str]] | None:
    """One `name: value` every source of each rule has (its first `name="value"` source matcher), so that only
    the firing alerts holding one are read; None when a rule has none (then any firing alert may be a source)."""
    found = []
    for rule in rules:
        equal = next((m for m in rule.source if m.op == "=" and m.value), None)
        if equal is None:
            return None
        found.append({equal.name: equal.value})
    return found


async def load(conn: asyncpg.Connection, tree: Tree, now: datetime) -> Suppressor:
    rows = await conn.fetch("SELECT id, matchers FROM silences WHERE starts_at <= $1 AND ends_at > $1", now)
    silences, index = await _indexed(tuple((r["id"], tuple(r["matchers"])) for r in rows))
    firing: list[tuple[str, Mapping[str, str]]] = []
    if tree.inhibit_rules:
        sql = "SELECT fingerprint, labels FROM alerts WHERE (ends_at IS NULL OR ends_at > $1)"
        args: list[object] = [now]
        sources = _source_labels(tree.inhibit_rules)
        if sources is not None:  # only the alerts that can be sources are read (a superset: checked in full)
            sql += " AND labels @> ANY($2::jsonb[])"
            args.append([msgspec.json.encode(one).decode() for one in sources])
        found = await conn.fetch(sql, *args)
        firing = [(r["fingerprint"], r["labels"]) for r in found]
    if len(firing) >= BIG:
        inhibitor = await asyncio.to_thread(Inhibitor, tree.inhibit_rules, firing)
    else:
        inhibitor = Inhibitor(tree.inhibit_rules, firing)
    return Suppressor(tree, silences, inhibitor, now, index=index)
