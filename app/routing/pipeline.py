"""The notification pipeline: every message about an alert, whoever raised it, goes the same way.

    alert ──▶ group ──▶ flush ──▶ per-notifier stream (deliveries) ──▶ send ──▶ notification log
    store.upsert   store.route_pending   flush.flush_batch + the stages below   app/deliveries/

1. **Alert.** POST /v1/alerts, /api/v2/alerts and a monitor's evaluation write `alerts` rows and mark them
   pending (app/routing/store.py); the writer then wakes the router in its own process (app/routing/jobs.py
   `Router.wake`), so a group that falls due with that alert is flushed at once, not at the next tick.
2. **Group** (Alertmanager's dispatcher). The router places each firing alert in the groups of the routes it
   takes (app/routing/routes.py): the tree's routes, or the implicit route of a monitor that names its own
   notifiers (one alert per group, no group_wait, a change flushes it at once, repeats on the monitor's
   `repeat_interval_seconds`). A group is due `group_wait` after it formed (at once when an alert's own
   `starts_at` + group_wait has passed), then every `group_interval`.
3. **Flush** (`flush_group`, the stages of Alertmanager's notify/notify.go, in its order). For a due group:
   - `inhibit_stage` (InhibitStage): alerts inhibited now are left out, firing or resolved;
   - `time_mute_stage` (TimeActiveStage, TimeMuteStage): a route outside its active intervals or inside a mute
     one sends nothing. Unlike Alertmanager, which drops that flush, the group keeps its alerts, resolved ones
     too, until the mute ends, and then says what changed (README, "Beacon vs Alertmanager");
   - `silence_stage` (SilenceStage): silenced alerts are left out, firing or resolved;
   - when nothing is left, nothing is logged (Alertmanager's MultiStage stops on an empty list);
   - per notifier, `dedup_stage` (DedupStage): Alertmanager's `needsUpdate` against the notification log;
   - the message is queued as a delivery (the RetryStage is the delivery worker: app/deliveries/); a
     notifier without `send_resolved` is sent only firing alerts, and nothing when none fires;
   - `set_notifies_stage` (SetNotifiesStage): the log entry of (group, notifier): the alerts firing and
     resolved at this flush, whether a message went out or (send_resolved off) was left out.
   Resolved alerts then leave the group; a group with no firing alert left closes.
4. **Message.** One function builds a notification's `Event`: app/routing/messages.py `event_for`.

Everything a flush writes (deliveries, log, the group's next flush) is written in the transaction that claimed
the group (`FOR UPDATE SKIP LOCKED`), so a message is queued once across processes and restarts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from app.routing.messages import Member
from app.routing.routes import Routes
from app.routing.suppression import Suppressor
from app.routing.tree import Route

Reason = Literal["first", "new_alerts", "resolved", "repeat"]
MUTED_RECHECK = timedelta(seconds=60)  # a muted monitor route looks again this often (it has no group_interval)
NEVER = datetime(9999, 1, 1, tzinfo=UTC)  # a monitor's own group without a repeat: woken by its monitor only


@dataclass(frozen=True)
class LogEntry:
    """What a notifier was last told of a group (Alertmanager's nflog entry)."""

    firing: frozenset[str]
    resolved: frozenset[str]
    sent_at: datetime


@dataclass(frozen=True)
class Receiver:
    id: str
    send_resolved: bool


@dataclass
class Notification:
    notifier_id: str
    reason: Reason
    firing: list[Member]
    resolved: list[Member]  # what the message lists as resolved (none without send_resolved)
    send: bool  # False: logged only (send_resolved off and nothing fires)


@dataclass
class Outcome:
    muted_by: list[str] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    log: list[tuple[str, list[str], list[str]]] = field(default_factory=list)  # (notifier, firing, resolved)
    gone: list[str] = field(default_factory=list)  # resolved alerts that leave the group
    closed: bool = False


def identity(alert: Member, route: Route) -> str:
    """An alert's identity in the notification log. On a monitor's own route every change its monitor records
    (a trigger, a match, a repeat, an error that clears back into alerting) is news to the receiver, as its
    messages always were: the log keys the alert by that event (`fingerprint@event`)."""
    if route.monitor_id is not None:
        return f"{alert.fingerprint}@{alert.monitor_event_id}"
    return alert.fingerprint


def inhibit_stage(sup: Suppressor, alerts: Sequence[Member]) -> list[Member]:
    """InhibitStage: leave out the alerts an inhibit rule mutes now (a resolved target too; only firing alerts
    inhibit)."""
    if not sup.inhibitor.rules:
        return list(alerts)
    return [a for a in alerts if not sup.inhibitor.inhibited_by(a.fingerprint, a.labels)]


def time_mute_stage(routes: Routes, route: Route, labels: Mapping[str, str], now: datetime) -> list[str]:
    """TimeActiveStage and TimeMuteStage: the intervals that mute the route now (empty: it may send)."""
    return routes.muted_by(route, labels, now)


def silence_stage(sup: Suppressor, alerts: Sequence[Member]) -> list[Member]:
    """SilenceStage: leave out silenced alerts, firing or resolved (a silenced alert's resolve is not sent)."""
    if not sup.silences:
        return list(alerts)
    return [a for a in alerts if not sup.silenced_by(a.labels)]


def dedup_stage(
    entry: LogEntry | None,
    firing: set[str],
    resolved: set[str],
    send_resolved: bool,
    at: datetime,
    repeat_seconds: int | None,
) -> Reason | None:
    """DedupStage (Alertmanager's `needsUpdate`): whether the notifier must be told now, and why."""
    if entry is None:
        return "first" if firing else None  # never told of the group: only if something fires
    if not firing <= entry.firing:
        return "new_alerts"
    if not firing:
        # Everything resolved: tell whoever heard something fire (also without send_resolved: the log forgets).
        return "resolved" if entry.firing else None
    if send_resolved and not resolved <= entry.resolved:
        return "resolved"
    if repeat_seconds is not None and at - entry.sent_at >= timedelta(seconds=repeat_seconds):
        return "repeat"
    return None


def set_notifies_stage(firing: set[str], resolved: set[str]) -> tuple[list[str], list[str]]:
    """SetNotifiesStage: what the log keeps of this flush for the notifier."""
    return sorted(firing), sorted(resolved)


def flush_group(
    sup: Suppressor,
    routes: Routes,
    route: Route,
    members: Sequence[Member],
    logs: Mapping[str, LogEntry],
    receivers: Mapping[str, Receiver],
    now: datetime,
    at: datetime,
) -> Outcome:
    """One flush of one group at `now` (`at`: the time it fell due, the log's clock)."""
    out = Outcome()
    labels = members[0].labels if members else {}
    out.muted_by = time_mute_stage(routes, route, labels, now)
    if out.muted_by:
        return out  # nothing sent, nothing forgotten: the group says what changed once the mute ends
    alerts = silence_stage(sup, inhibit_stage(sup, members))
    firing = [a for a in alerts if a.firing_at(now)]
    resolved = [a for a in alerts if not a.firing_at(now) and _resolve_is_news(route, a)]
    if firing or resolved:
        firing_ids, resolved_ids = {identity(a, route) for a in firing}, {identity(a, route) for a in resolved}
        for notifier_id in route.notifier_ids:
            receiver = receivers.get(notifier_id) or Receiver(notifier_id, True)
            wants_resolved = receiver.send_resolved
            entry = logs.get(notifier_id)
            reason = dedup_stage(entry, firing_ids, resolved_ids, wants_resolved, at, route.repeat_interval_seconds)
            if reason is None:
                continue
            if (
                reason == "new_alerts"
                and route.monitor_id is not None
                and all(a.event_kind == "repeat" for a in firing)
            ):
                reason = "repeat"  # the monitor's repeat, due on its repeat_interval_seconds
            told = resolved if wants_resolved else []
            out.notifications.append(Notification(notifier_id, reason, firing, told, bool(firing or told)))
            out.log.append((notifier_id, *set_notifies_stage(firing_ids, resolved_ids)))
    out.gone = [a.fingerprint for a in members if not a.firing_at(now)]
    out.closed = not any(a.firing_at(now) for a in members)
    return out


def _resolve_is_news(route: Route, alert: Member) -> bool:
    """On a monitor's own route the monitor says which resolves are news: those it recorded as a `resolved`
    event (not a match's end, an error that cleared into alerting, a monitor that is not `resolvable`, or one
    that was deleted), as its messages always did. On the tree every resolve is."""
    return route.monitor_id is None or alert.event_kind == "resolved"


def next_flush(route: Route, due: datetime, now: datetime, at: datetime, outcome: Outcome) -> datetime:
    """When the group is looked at again. A tree group keeps its cadence from when it fell due (Alertmanager's
    ticker), unless it fell a whole interval behind; a monitor's own group waits for its monitor's next change,
    or its repeat."""
    if route.group_interval_seconds == 0:
        if outcome.muted_by:
            return now + MUTED_RECHECK
        if route.repeat_interval_seconds is None:
            return NEVER
        return at + timedelta(seconds=route.repeat_interval_seconds)
    step = timedelta(seconds=route.group_interval_seconds)
    return due + step if due + step > now else now + step
