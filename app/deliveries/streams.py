"""Delivery streams: the messages one destination must get in the order they were made.

A stream is (monitor or routing group) x notifier. Its messages are sent one at a time, oldest first: a later
one is not claimed while an earlier one is pending, retrying or deferred. A receiver that was down then gets
"triggered" before "resolved" (a pager service fed them the other way round leaves an incident open).

While the destination fails, nothing is superseded: every message is still sent, in order (a chat channel
should show that the alert fired, even if it is over by now). Superseding is right only after a mute
(`disabled_until`): a mute asks for silence, and when it ends the destination needs what is still true, not a
replay of every change. So the stream's oldest message, deferred by the mute, is then superseded by the
newest with everything between, and the newest is sent; if that newest is a resolve (a monitor's
`monitor.resolved`, a group's `alerts.resolved`) and the destination never heard the stream fire, nothing is
sent at all (it already believes all is well): the pipeline's own rule (app/routing/pipeline.py `dedup_stage`,
Alertmanager's: an all-resolved notification goes only to whoever heard something fire), applied to what was
really sent.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.delivery import Delivery

DUE = ("pending", "retrying")  # sent when their time comes
OPEN = (*DUE, "deferred")  # not settled yet: a later message of the stream waits for them
RESOLVED = ("monitor.resolved", "alerts.resolved")  # the kinds that say "all is well"


def sql_list(statuses: tuple[str, ...]) -> str:
    """`statuses` as a SQL list, for raw statements: literals (not parameters), so that the planner matches the
    partial indexes made with the same list."""
    return "(" + ", ".join(f"'{s}'" for s in statuses) + ")"


def stream_of(notifier_id: str, monitor_id: str | None, alert_group_key: str | None) -> str | None:
    if alert_group_key is not None:
        return f"group:{alert_group_key}:{notifier_id}"
    if monitor_id is not None:
        return f"monitor:{monitor_id}:{notifier_id}"
    return None  # a test message stands alone


# The claim's condition, for raw statements over `deliveries d`: no earlier message of the row's stream is still
# open (a message of no stream stands alone).
IS_HEAD = f"""(d.stream IS NULL OR NOT EXISTS (
    SELECT 1 FROM deliveries e WHERE e.stream = d.stream AND e.seq < d.seq AND e.status IN {sql_list(OPEN)}))"""


def _supersede(delivery: Delivery, reason: str, now: datetime) -> None:
    delivery.status = "superseded"
    delivery.error = reason
    delivery.next_attempt_at = None
    delivery.claimed_until = None
    delivery.claim_token = None
    delivery.updated_at = now


async def settle_after_mute(session: AsyncSession, head: Delivery, now: datetime) -> bool:
    """`head` was deferred by a mute that has ended: keep only what is still true. Returns False when `head`
    itself is to be sent, True when it was superseded (the newest message, if any, is then due at once)."""
    if head.stream is None:
        return False
    later = list(
        (
            await session.execute(
                select(Delivery)
                .where(Delivery.stream == head.stream, Delivery.seq > head.seq, Delivery.status.in_(OPEN))
                .order_by(Delivery.seq)
                .with_for_update()
            )
        ).scalars()
    )
    newest = later[-1] if later else head
    for old in [head, *later[:-1]] if later else []:
        _supersede(old, f"superseded by {newest.id}: the notifier was muted; its latest message is sent instead", now)
    if newest.kind in RESOLVED and not await _fired_there(session, head.stream, head.seq):
        _supersede(newest, "not sent: the alert fired and resolved while the notifier was muted", now)
        return True
    if newest is head:
        return False
    newest.next_attempt_at = now
    newest.updated_at = now
    return True


async def _fired_there(session: AsyncSession, stream: str, before_seq: int) -> bool:
    """Whether the destination last heard of this stream something other than "resolved"."""
    last = (
        await session.execute(
            select(Delivery.kind)
            .where(Delivery.stream == stream, Delivery.status == "succeeded", Delivery.seq < before_seq)
            .order_by(Delivery.seq.desc())
            .limit(1)
        )
    ).scalar_one_or_none()
    return last is not None and last not in RESOLVED
