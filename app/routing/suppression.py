"""Why an alert is suppressed at a moment: the silences that match it, the alerts that inhibit it, and the time
intervals that mute the routes it takes. Built once per job run or request (`load`), then asked per alert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import asyncpg

from app.routing.inhibition import Inhibitor
from app.routing.matchers import Matcher, all_match, parse_matcher
from app.routing.routes import Routes
from app.routing.tree import Route, Tree


@lru_cache(maxsize=4096)
def _matcher(text: str) -> Matcher:
    return parse_matcher(text)  # stored matchers were checked when they were written


@dataclass(frozen=True)
class ActiveSilence:
    id: str
    matchers: tuple[Matcher, ...]


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
    def __init__(self, tree: Tree, silences: Sequence[ActiveSilence], inhibitor: Inhibitor, now: datetime) -> None:
        self.tree = tree
        self.silences = silences
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
        return [s.id for s in self.silences if all_match(s.matchers, labels)]

    def route_muted_by(self, route: Route) -> list[str]:
        return self.tree.muted_by(route, self.now)

    def verdict(self, fp: str, labels: Mapping[str, str], *, firing: bool = True) -> Verdict:
        """Silences and inhibition concern firing alerts only (a resolve reaches whoever heard the alert fire)."""
        if not firing:
            return Verdict([], [], [], False)
        muted: list[str] = []
        all_muted = True
        for route in self.tree.match(labels):
            names = self.route_muted_by(route)
            muted.extend(n for n in names if n not in muted)
            all_muted = all_muted and bool(names)
        return Verdict(self.silenced_by(labels), self.inhibitor.inhibited_by(fp, labels), muted, all_muted)


async def load(conn: asyncpg.Connection, tree: Tree, now: datetime) -> Suppressor:
    rows = await conn.fetch("SELECT id, matchers FROM silences WHERE starts_at <= $1 AND ends_at > $1", now)
    silences = [ActiveSilence(r["id"], tuple(_matcher(t) for t in r["matchers"])) for r in rows]
    firing: list[tuple[str, Mapping[str, str]]] = []
    if tree.inhibit_rules:
        found = await conn.fetch(
            "SELECT fingerprint, labels FROM alerts WHERE ends_at IS NULL OR ends_at > $1",
            now,
        )
        firing = [(r["fingerprint"], r["labels"]) for r in found]
    return Suppressor(tree, silences, Inhibitor(tree.inhibit_rules, firing), now)
