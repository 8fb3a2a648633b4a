"""The change lookup (app/annotations/changes.py) on real PostgreSQL: which annotations relate to a notification's
alerts, in which window, in what order, as whom; why each matched and when, in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from app.annotations.changes import Concerned, Wanted, related_changes, related_changes_many
from app.annotations.service import add_annotation
from app.db.engine import driver_connection

T0 = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)  # the first alert starts here
NOW = T0 + timedelta(minutes=5)  # the notification's time
WEB = {"alertname": "HighErrors", "dataset": "web", "service": "checkout", "env": "prod"}


async def _annotate(client: Any, auth: dict[str, str], title: str, minutes: float, **fields: Any) -> str:
    body = {
        "type": "deploy",
        "title": title,
        "datasets": ["other"],
        "time": (T0 + timedelta(minutes=minutes)).isoformat(),
    }
    body.update(fields)
    if "end_minutes" in body:
        body["end_time"] = (T0 + timedelta(minutes=body.pop("end_minutes"))).isoformat()
    r = await client.post("/v1/annotations", headers=auth, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def _lookup(db: Any, alerts: list[Concerned], window: int | None = 3600, audience: Any = None) -> Any:
    async with db() as session:
        conn = await driver_connection(session)
        return await related_changes(conn, alerts, now=NOW, window_seconds=window, audience=audience)


async def test_related_by_dataset_or_by_every_label_newest_first_with_why_and_when(client, auth, db):
    by_dataset = await _annotate(client, auth, "web 2.0", -4, datasets=["web"])
    by_labels = await _annotate(client, auth, "checkout 1.4.2", -10, labels={"service": "checkout", "env": "prod"})
    both = await _annotate(client, auth, "both", -20, datasets=["web"], labels={"service": "checkout"})
    span = await _annotate(client, auth, "migration", -90, end_minutes=-50, datasets=["web"])  # ends in the window
    # Not related: another dataset without labels, a label that differs, a label the alert lacks.
    await _annotate(client, auth, "elsewhere", -3)
    await _annotate(client, auth, "staging", -3, labels={"service": "checkout", "env": "staging"})
    await _annotate(client, auth, "region", -3, labels={"service": "checkout", "region": "eu"})
    # Related but outside the window: too old, after the notification, and Beacon's own monitor markers.
    await _annotate(client, auth, "too old", -61, datasets=["web"])
    await _annotate(client, auth, "later", 6, datasets=["web"])

    found = await _lookup(db, [Concerned(WEB, T0)])
    assert [c.id for c in found.listed] == [by_dataset, by_labels, both, span]
    assert found.more == 0
    why = {c.title: c.why for c in found.listed}
    assert why == {
        "web 2.0": "dataset web",
        "checkout 1.4.2": "env=prod, service=checkout",
        "both": "dataset web and service=checkout",
        "migration": "dataset web",
    }
    when = {c.title: c.when for c in found.listed}
    assert when["web 2.0"] == "4 min before the first alert"
    assert when["migration"] == "from 1 h 30 min before the first alert to 50 min before the first alert"
    first = found.listed[0]
    assert first.datasets == ["web"] and first.type == "deploy" and first.time == "2026-11-21T07:56:00.000Z"

    # The window is the route's: 15 minutes leaves the older ones out; 0 turns the lookup off.
    assert [c.title for c in (await _lookup(db, [Concerned(WEB, T0)], 900)).listed] == ["web 2.0", "checkout 1.4.2"]
    assert (await _lookup(db, [Concerned(WEB, T0)], 0)).listed == []


async def test_at_most_five_then_how_many_more(client, auth, db):
    for i in range(8):
        await _annotate(client, auth, f"deploy {i}", -i, datasets=["web"])
    found = await _lookup(db, [Concerned(WEB, T0)])
    assert [c.title for c in found.listed] == [f"deploy {i}" for i in range(5)]
    assert found.more == 3 and found.total == 8


async def test_monitor_markers_and_other_alerts_of_the_group(client, auth, db):
    """A group's changes relate to any of its alerts; the window starts before its first *firing* alert, and
    Beacon's own monitor markers never count."""
    await _annotate(client, auth, "api deploy", -30, datasets=["api"])
    await _annotate(client, auth, "while the resolved one fired", -180, datasets=["web"])
    async with db() as session:
        add_annotation(session, type_="monitor", title="HighErrors: alerting", datasets=["web"], time=T0)
        await session.commit()
    firing = Concerned({**WEB, "dataset": "api"}, T0)
    resolved_early = Concerned(WEB, T0 - timedelta(hours=5), firing=False)
    found = await _lookup(db, [firing, resolved_early])
    assert [(c.title, c.why) for c in found.listed] == [("api deploy", "dataset api")]
    # When none fires any more (the group's resolved message), the first alert at all opens the window.
    found = await _lookup(db, [Concerned(firing.labels, T0, firing=False), resolved_early])
    assert [c.title for c in found.listed] == ["api deploy", "while the resolved one fired"]


async def test_the_audience_sees_only_what_it_may(client, auth, db):
    """A monitor's own message is read by whoever may see its dataset: it carries no annotation of a dataset
    such a token may not see, even one that relates by labels; environment-wide ones it may."""
    await _annotate(client, auth, "secret deploy", -5, datasets=["secret"], labels={"service": "checkout"})
    await _annotate(client, auth, "web and api", -6, datasets=["web", "api"])
    await _annotate(client, auth, "env-wide", -7, datasets=["*"], labels={"service": "checkout"})
    await _annotate(client, auth, "env-wide, no labels", -8, datasets=["*"])
    everyone = await _lookup(db, [Concerned(WEB, T0)])
    assert [c.title for c in everyone.listed] == ["secret deploy", "web and api", "env-wide"]
    assert everyone.listed[2].datasets == ["*"]
    web_only = await _lookup(db, [Concerned(WEB, T0)], audience=("web",))
    assert [c.title for c in web_only.listed] == ["env-wide"]
    web_api = await _lookup(db, [Concerned(WEB, T0)], audience=("web", "api"))
    assert [c.title for c in web_api.listed] == ["web and api", "env-wide"]


async def test_a_limited_tokens_labels_relate_within_its_datasets_only(client, auth, db, make_token):
    limited = {"Authorization": f"Bearer {await make_token(['annotations:write'], datasets=['pub'])}"}
    await _annotate(client, limited, "pub deploy", -5, datasets=["pub"], labels={"service": "checkout"})
    assert (await _lookup(db, [Concerned(WEB, T0)])).listed == []  # web's alert: not its dataset
    pub = await _lookup(db, [Concerned({**WEB, "dataset": "pub"}, T0)])
    assert [(c.title, c.why) for c in pub.listed] == [("pub deploy", "dataset pub")]


async def test_a_monitors_window_comes_from_the_routes_its_labels_take(client, auth, db):
    """window None (a monitor's own message): the longest window of the routes its labels take."""
    await _annotate(client, auth, "20 min before", -20, datasets=["web"])
    current = await client.get("/v1/routing", headers=auth)
    route = {
        "notifier_ids": [],
        "routes": [{"matchers": ["service=checkout"], "changes_window_seconds": 600}],
    }
    r = await client.put("/v1/routing", headers={**auth, "If-Match": current.json()["version"]}, json={"route": route})
    assert r.status_code == 200, r.text
    assert (await _lookup(db, [Concerned(WEB, T0)], None)).listed == []  # its route: 10 minutes
    other = {**WEB, "service": "cart"}  # the root's default hour
    assert [c.title for c in (await _lookup(db, [Concerned(other, T0)], None)).listed] == ["20 min before"]


async def test_many_notifications_in_one_statement_and_starts_read_from_alerts(client, auth, db):
    await _annotate(client, auth, "web deploy", -2, datasets=["web"])
    await _annotate(client, auth, "api deploy", -2, datasets=["api"])
    r = await client.post(
        "/v1/alerts",
        headers=auth,
        json=[{"labels": {**WEB, "dataset": "api"}, "starts_at": (T0 - timedelta(hours=3)).isoformat()}],
    )
    assert r.status_code == 200, r.text
    async with db() as session:
        conn = await driver_connection(session)
        web, api, empty, api_for_web = await related_changes_many(
            conn,
            [
                Wanted([Concerned(WEB, T0)], 3600, None),
                Wanted([Concerned({**WEB, "dataset": "api"})], 3600, None),
                Wanted([], 3600, None),
                # Each request has its own audience: a monitor's message of dataset web sees nothing of api.
                Wanted([Concerned({**WEB, "dataset": "api"})], 3600, ("web",)),
            ],
            now=NOW,
        )
    assert [c.title for c in web.listed] == ["web deploy"]
    assert api_for_web.listed == [] and api_for_web.more == 0
    # Started 3 hours before T0 as the alerts table has it: the api deploy, 2 min before T0, is after it.
    assert [c.when for c in api.listed] == ["2 h 58 min after the first alert"]
    assert empty.listed == []
