"""Alerts and the routing document through the API: what the /v1 controllers (and a compatible facade) call.

Every function takes the session it works in and the moment it works at (`env.now()`), so that tests can run
the timers on a clock of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import aclosing
from datetime import datetime

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import admits_datasets, alert_clause, changes_audience, require_unlimited, shows_changes, unlimited
from app.annotations.changes import Concerned, Wanted, related_changes, related_changes_many
from app.auth import Principal
from app.db.engine import driver_connection
from app.errors import BeaconError, check_choice, not_found
from app.pagination import CursorCodec, ListEnvelope, check_limit
from app.routing import config, document, jobs, routes, silences, store, views
from app.routing.env import RoutingEnv
from app.routing.labels import MAX_ANNOTATION_CHARS, check_labels
from app.routing.matchers import check_matchers
from app.routing.schemas import (
    ALERT_STATES,
    MAX_ALERTS_PER_POST,
    AlertGroupOut,
    AlertOut,
    AlertPost,
    AlertsReceived,
    RoutingStatus,
    RoutingTestOut,
)
from app.routing.suppression import Suppressor, load
from app.timefmt import iso_ms
from app.timeparams import to_ms


def _check_post(i: int, alert: AlertPost) -> store.AlertInput:
    # An empty value is no label (Alertmanager drops it: `env=""` is the alert without `env`).
    labels = {k: v for k, v in check_labels(alert.labels, f"[{i}].labels", required=True).items() if v != ""}
    if not labels:
        raise BeaconError("invalid_field", "An alert needs at least one label with a value.", param=f"[{i}].labels")
    annotations = check_labels(alert.annotations, f"[{i}].annotations", max_value=MAX_ANNOTATION_CHARS)
    starts = to_ms(alert.starts_at) if alert.starts_at else None
    ends = to_ms(alert.ends_at) if alert.ends_at else None
    if starts is not None and ends is not None and ends < starts:
        raise BeaconError("invalid_field", "`ends_at` must not be before `starts_at`.", param=f"[{i}].ends_at")
    return store.AlertInput(labels, annotations, starts, ends, alert.generator_url, source="external")


async def post_alerts(
    session: AsyncSession, env: RoutingEnv, who: Principal, alerts: Sequence[AlertPost]
) -> AlertsReceived:
    """Store posted alerts (firing, or resolved with an `ends_at` in the past); the routing job groups them."""
    check_alerts_post(who, len(alerts))
    return await store_alerts(session, env, alerts)


def check_alerts_post(who: Principal, count: int) -> None:
    """Whether `who` may post `count` alerts: checked before any of them is looked at (a compatible API that
    translates its own alerts calls it first, then `store_alerts`)."""
    require_unlimited(who, "external alerts (they belong to no dataset)")
    if count > MAX_ALERTS_PER_POST:
        raise BeaconError(
            "invalid_field", f"At most {MAX_ALERTS_PER_POST} alerts per request; got {count}.", param="alerts"
        )


async def store_alerts(session: AsyncSession, env: RoutingEnv, alerts: Sequence[AlertPost]) -> AlertsReceived:
    """`post_alerts` once `check_alerts_post` has let them in."""
    inputs = [_check_post(i, a) for i, a in enumerate(alerts)]
    # One statement in a transaction of its own (no BEGIN, no COMMIT round trip): the post is stored whole or not
    # at all. The routing document is read only when an alert needs its `resolve_timeout` (Prometheus sends
    # every alert with an `endsAt`).
    conn = await driver_connection(session)
    timing_out = any(a.times_out for a in inputs)
    resolve_timeout = (await config.current(conn)).tree.resolve_timeout if timing_out else None
    fingerprints = await store.upsert(conn, inputs, env.now(), resolve_timeout)
    env.counters.received("external", len(inputs))
    jobs.wake(env)
    return AlertsReceived(received=len(inputs), fingerprints=fingerprints)


async def suppressor(
    session: AsyncSession, now: datetime, who: Principal, stored: config.Stored | None = None
) -> Suppressor:
    """Why alerts are suppressed now, as `who` may be shown it: the inhibiting alerts and the silences it may not
    see are left out. Under `stored` when given (a page that also shows its version), else under the document
    stored now."""
    conn = await driver_connection(session)
    found = await load(conn, (stored or await config.current(conn)).tree, now)
    found.routes = await routes.load(conn, found.tree)
    if unlimited(who):
        return found
    hidden = {s.id for s in found.silences if not admits_datasets(who, s.matchers)}
    if found.tree.inhibit_rules:
        visible, args = alert_clause(who, 2)
        rows = await conn.fetch(
            "SELECT fingerprint FROM alerts"
            f" WHERE (ends_at IS NULL OR ends_at > $1) AND NOT COALESCE({visible}, false)",
            now,
            *args,
        )
        hidden.update(r["fingerprint"] for r in rows)
    found.hidden = frozenset(hidden)
    return found


def alert_filter(filters: Sequence[str] | None, state: str | None) -> views.AlertFilter:
    return views.AlertFilter(
        matchers=check_matchers(list(filters or ()), "filter", code="invalid_parameter"),
        states={check_choice(state, ALERT_STATES, "state")} if state is not None else None,
    )


async def list_alerts(
    session: AsyncSession,
    codec: CursorCodec,
    env: RoutingEnv,
    who: Principal,
    flt: views.AlertFilter,
    *,
    limit: int | None,
    cursor: str | None,
) -> ListEnvelope[AlertOut]:
    size = check_limit(limit)
    scope = "alerts:" + msgspec.json.encode([sorted(str(m) for m in flt.matchers), sorted(flt.states or ())]).decode()
    after = None
    if cursor:
        key = codec.decode(scope, cursor)
        if len(key) != 2:
            raise BeaconError("invalid_cursor", "The cursor is not valid for this list.", param="cursor")
        after = (key[0], key[1])
    sup = await suppressor(session, env.now(), who)
    page: list[tuple[AlertOut, tuple[datetime, str]]] = []
    async with aclosing(views.scan(await driver_connection(session), who, sup, flt, after=after)) as found:
        async for item in found:
            page.append(item)
            if len(page) > size:
                break
    has_more = len(page) > size
    page = page[:size]
    next_cursor = codec.encode(scope, list(page[-1][1])) if has_more else None
    return ListEnvelope(data=[out for out, _ in page], has_more=has_more, next_cursor=next_cursor)


async def all_alerts(session: AsyncSession, env: RoutingEnv, who: Principal, flt: views.AlertFilter) -> list[AlertOut]:
    """Every alert that passes `flt`, newest first, without pages (for a compatible API)."""
    sup = await suppressor(session, env.now(), who)
    return [out async for out, _ in views.scan(await driver_connection(session), who, sup, flt)]


async def get_alert(session: AsyncSession, env: RoutingEnv, who: Principal, fp: str) -> AlertOut:
    """The alert, with what changed before it (as `who` may see it) over the longest window of its routes."""
    conn = await driver_connection(session)
    sup = await suppressor(session, env.now(), who)
    found = await views.one(conn, who, sup, fp)
    if found is None:
        raise not_found("alert", fp)
    window = max((r.changes_window_seconds for r in sup.tree.match(found.labels)), default=0)
    if not shows_changes(who):
        window = 0
    changes = await related_changes(
        conn, [_concerned(found)], now=sup.now, window_seconds=window, audience=changes_audience(who)
    )
    found.changes, found.more_changes = changes.listed, changes.more
    return found


def _concerned(alert: AlertOut) -> Concerned:
    return Concerned(alert.labels, datetime.fromisoformat(alert.starts_at), alert.state != "resolved")


async def alert_names(session: AsyncSession, who: Principal, fingerprints: Iterable[str]) -> dict[str, str]:
    return await views.alert_names(await driver_connection(session), who, fingerprints)


async def alert_groups(
    session: AsyncSession, env: RoutingEnv, who: Principal, flt: views.AlertFilter
) -> list[AlertGroupOut]:
    """The groups, each with what its message would say changed (as `who` may see it): one statement for all."""
    sup = await suppressor(session, env.now(), who)
    conn = await driver_connection(session)
    found = await views.groups(conn, who, sup, flt)
    shown, audience = shows_changes(who), changes_audience(who)
    requests = [
        Wanted([_concerned(a) for a in g.alerts] if shown else [], g.changes_window_seconds, audience) for g in found
    ]
    for group, changes in zip(found, await related_changes_many(conn, requests, now=sup.now), strict=True):
        group.changes, group.more_changes = changes.listed, changes.more
    return found


async def stored_routing(session: AsyncSession) -> config.Stored:
    return await config.current(await driver_connection(session))


async def get_routing(session: AsyncSession) -> document.Document:
    return config.document_of(await stored_routing(session))


async def put_routing(
    session: AsyncSession, env: RoutingEnv, who: Principal, doc: document.Document, if_match: str | None
) -> document.Document:
    require_unlimited(who, "the routing document")
    stored = await config.replace(await store.in_transaction(session), doc, if_match, env.now())
    await session.commit()
    return config.document_of(stored)


async def test_routing(
    session: AsyncSession, env: RoutingEnv, who: Principal, labels: dict[str, str], sup: Suppressor | None = None
) -> RoutingTestOut:
    """What the tree would do with `labels` now (under `sup` when the caller has built one already)."""
    checked = check_labels(labels, "labels", required=True)
    sup = sup or await suppressor(session, env.now(), who)
    found = views.test_labels(sup, checked)
    changes = await related_changes(
        await driver_connection(session),
        [Concerned(checked, sup.now)],
        now=sup.now,
        window_seconds=max((r.changes_window_seconds for r in found.routes), default=0) if shows_changes(who) else 0,
        audience=changes_audience(who),
    )
    found.changes, found.more_changes = changes.listed, changes.more
    return found


async def status(session: AsyncSession, env: RoutingEnv, who: Principal) -> RoutingStatus:
    """Counts of what `who` may see: a dataset-limited token counts its datasets' alerts, the groups that hold
    one and the silences it may see, and gets no process counters (they add up every dataset)."""
    conn = await driver_connection(session)
    now = env.now()
    stored = await config.current(conn)
    visible, args = alert_clause(who, 2)
    hidden = f"NOT (id = ANY(${2 + len(args)}::text[]))"
    groups = "SELECT count(*) FROM alert_groups"
    if not unlimited(who):
        groups = (
            f"SELECT count(DISTINCT group_key) FROM alert_group_members JOIN alerts USING (fingerprint) WHERE {visible}"
        )
    row = await conn.fetchrow(
        f"""
        SELECT (SELECT count(*) FROM alerts WHERE (ends_at IS NULL OR ends_at > $1) AND {visible}) AS firing,
               (SELECT count(*) FROM alerts WHERE ends_at <= $1 AND {visible}) AS resolved,
               ({groups}) AS groups,
               (SELECT count(*) FROM silences WHERE starts_at <= $1 AND ends_at > $1 AND {hidden}) AS active,
               (SELECT count(*) FROM silences WHERE starts_at > $1 AND {hidden}) AS pending
        """,
        now,
        *args,
        await silences.hidden_ids(session, who),
    )
    assert row is not None
    return RoutingStatus(
        version=str(stored.version),
        updated_at=iso_ms(stored.updated_at),
        alerts_firing=row["firing"],
        alerts_resolved=row["resolved"],
        groups=row["groups"],
        silences_active=row["active"],
        silences_pending=row["pending"],
        counters=env.counters.snapshot() if unlimited(who) else {},
    )
