"""Grouping with Alertmanager's three timers on a clock the test moves: one message per (group, notifier) that
lists the group's alerts, firing first, with its reason in the delivery history."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from functools import partial

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.routing import config
from app.routing.flush import flush_batch
from app.routing.jobs import RunResult, place_pending, run_routing
from app.routing.store import in_transaction
from app.routing.suppression import load
from tests.integration.routing.conftest import summary

ROOT = {
    "group_by": ["alertname"],
    "group_wait_seconds": 30,
    "group_interval_seconds": 300,
    "repeat_interval_seconds": 3600,
}


def alert(name: str, instance: str, **extra):
    return {"labels": {"alertname": name, "instance": instance, **extra.pop("labels", {})}, **extra}


async def test_group_wait_interval_repeat_and_resolve(h):
    hook = await h.notifier()
    await h.routing({**ROOT, "notifier_ids": [hook]})
    day = (h.clock.now + timedelta(days=1)).isoformat()  # firing all along: no resolve timeout in the way
    await h.post(alert("Down", "a", ends_at=day), alert("Down", "b", ends_at=day))
    assert await h.step() == []  # placed in its group; group_wait runs
    await h.post(alert("Down", "c", ends_at=day))
    assert await h.step(29) == []
    (first,) = await h.step(1)  # 30 s after the group formed: one message with all three
    assert summary(first) == ("first", "firing", [("firing", "a"), ("firing", "b"), ("firing", "c")])
    assert first["data"]["group_key"] == '{}:{alertname="Down"}'
    assert await h.step(299) == []  # nothing changed, the interval has not passed
    await h.post(alert("Down", "d", ends_at=day))
    assert await h.step(0) == []  # a change waits for the group's next interval
    (new,) = await h.step(1)
    assert summary(new) == ("new_alerts", "firing", [("firing", x) for x in "abcd"])
    await h.post(alert("Down", "b", ends_at=h.clock.now.isoformat()))
    (resolved,) = await h.step(300)
    assert summary(resolved) == ("resolved", "firing", [*(("firing", x) for x in "acd"), ("resolved", "b")])
    for _ in range(11):
        assert await h.step(300) == []
    (repeat,) = await h.step(300)  # repeat_interval (3600 s) since the last message
    assert summary(repeat) == ("repeat", "firing", [("firing", x) for x in "acd"])
    now = h.clock.now.isoformat()
    await h.post(*(alert("Down", i, ends_at=now) for i in "acd"))
    (closed,) = await h.step(300)
    assert summary(closed) == ("resolved", "resolved", [("resolved", x) for x in "acd"])
    assert await h.step(300) == []  # the group has closed
    reasons = [(d["alert_group_reason"], d["kind"]) for d in reversed(await h.deliveries())]
    assert reasons == [
        ("first", "alerts.firing"),
        ("new_alerts", "alerts.firing"),
        ("resolved", "alerts.firing"),
        ("repeat", "alerts.firing"),
        ("resolved", "alerts.resolved"),
    ]


async def test_external_alerts_resolve_five_minutes_after_the_last_post(h):
    hook = await h.notifier()
    await h.routing({**ROOT, "group_interval_seconds": 60, "notifier_ids": [hook]})
    (fp,) = await h.post(alert("Stale", "a"))
    await h.step()
    (first,) = await h.step(30)
    assert summary(first)[0] == "first"
    for _ in range(4):  # posted again every 4 minutes: it keeps firing
        h.clock.advance(240)
        await h.post(alert("Stale", "a"))
        assert await h.step() == []
    (state,) = await h.alerts()
    assert state["state"] == "firing" and state["ends_at"] == (h.clock.now + timedelta(minutes=5)).isoformat(
        timespec="milliseconds"
    ).replace("+00:00", "Z")
    assert await h.step(299) == []
    (gone,) = await h.step(60)  # no post for 5 minutes: resolved at the next flush
    assert summary(gone) == ("resolved", "resolved", [("resolved", "a")])
    r = await h.client.get(f"/v1/alerts/{fp}", headers=h.auth)
    assert r.json()["state"] == "resolved"


async def test_an_alert_resolved_within_group_wait_is_never_sent(h):
    hook = await h.notifier()
    await h.routing({**ROOT, "notifier_ids": [hook]})
    await h.post(alert("Flap", "a"))
    await h.step()
    await h.post(alert("Flap", "a", ends_at=h.clock.now.isoformat()))
    assert await h.step(30) == []
    assert await h.step(300) == []
    await h.post(alert("Flap", "a"))  # fires again later: a new group, a new wait
    await h.step()
    (first,) = await h.step(30)
    assert summary(first)[0] == "first"


async def test_small_timers_and_groups_per_label_values(h):
    hook = await h.notifier()
    await h.routing(
        {
            "notifier_ids": [hook],
            "group_by": ["alertname", "cluster"],
            "group_wait_seconds": 1,
            "group_interval_seconds": 2,
            "repeat_interval_seconds": 60,
        }
    )
    await h.post(*(alert("Disk", f"n{i}", labels={"cluster": c}) for i, c in enumerate(["eu", "eu", "us", "ap"])))
    await h.step()
    messages = await h.step(1)
    assert sorted((m["data"]["group_labels"]["cluster"], len(m["data"]["alerts"])) for m in messages) == [
        ("ap", 1),
        ("eu", 2),
        ("us", 1),
    ]
    await h.post(alert("Disk", "n9", labels={"cluster": "us"}))
    await h.step()
    (update,) = await h.step(2)
    assert update["data"]["group_labels"] == {"alertname": "Disk", "cluster": "us"}
    assert summary(update)[2] == [("firing", "n2"), ("firing", "n9")]


async def test_tree_continue_inheritance_and_fallthrough(h):
    pager, chat, default = [await h.notifier(p, p) for p in ("/pager", "/chat", "/hook")]
    await h.routing(
        {
            **ROOT,
            "group_wait_seconds": 0,
            "notifier_ids": [default],
            "routes": [
                {"matchers": ["team=payments", "severity=~critical|page"], "notifier_ids": [pager], "continue": True},
                {"matchers": ["team=payments"], "notifier_ids": [chat], "group_by": ["..."]},
            ],
        }
    )
    await h.post(
        alert("Down", "p1", labels={"team": "payments", "severity": "critical"}),
        alert("Down", "p2", labels={"team": "payments", "severity": "warning"}),
        alert("Down", "o1", labels={"team": "ops"}),
    )
    await h.route()
    await h.step()
    by_path: dict[str, list] = {}
    for request, _ in h.httpserver.log:
        data = json.loads(request.get_data())["data"]
        by_path.setdefault(request.path, []).append(sorted(a["labels"]["instance"] for a in data["alerts"]))
    assert sorted(by_path["/pager"]) == [["p1"]]  # grouped by alertname (inherited from the root)
    assert sorted(by_path["/chat"]) == [["p1"], ["p2"]]  # continue: p1 also here; "...": one alert per group
    assert sorted(by_path["/hook"]) == [["o1"]]  # no child takes it: the root handles it


async def test_each_matcher_operator_routes(h):
    ids = {p: await h.notifier(f"/{p}", p) for p in ("eq", "ne", "re", "nre")}
    for p in ids:
        h.httpserver.expect_request(f"/{p}", method="POST").respond_with_data("", status=204)
    await h.routing(
        {
            **ROOT,
            "group_wait_seconds": 0,
            "group_by": ["..."],
            "notifier_ids": [],
            "routes": [
                {"matchers": ["env=prod"], "notifier_ids": [ids["eq"]], "continue": True},
                {"matchers": ['env!="prod"'], "notifier_ids": [ids["ne"]], "continue": True},
                {"matchers": ['host=~"db-[0-9]+"'], "notifier_ids": [ids["re"]], "continue": True},
                {"matchers": ["host!~db-.*"], "notifier_ids": [ids["nre"]], "continue": True},
            ],
        }
    )
    await h.post(
        {"labels": {"alertname": "A", "env": "prod", "host": "db-12"}},
        {"labels": {"alertname": "B", "host": "web-1"}},  # env absent reads as ""
        {"labels": {"alertname": "C", "env": "dev", "host": "db-1x"}},
    )  # anchored: db-1x is not db-[0-9]+
    await h.route()
    await h.step()
    got: dict[str, set[str]] = {}
    for request, _ in h.httpserver.log:
        for a in json.loads(request.get_data())["data"]["alerts"]:
            got.setdefault(request.path.strip("/"), set()).add(a["labels"]["alertname"])
    assert got == {"eq": {"A"}, "ne": {"B", "C"}, "re": {"A"}, "nre": {"B"}}  # db-1x matches db-.*


async def test_a_route_without_notifiers_keeps_no_group(h):
    await h.post(alert("Lonely", "a"))  # the default document: the root names no notifier
    result = await h.route()
    assert result.routed == 1 and result.groups_created == 0
    assert [a["state"] for a in await h.alerts()] == ["firing"]


async def test_a_group_claimed_by_one_flush_is_skipped_by_another(h):
    """The claim holds until its transaction ends: a second process's run skips the group (SKIP LOCKED) instead of
    notifying it again. (Statements sent straight to asyncpg before SQLAlchemy's first one ran outside any
    transaction, so the claim's lock ended at once and two processes could both send `first`.)"""
    hook = await h.notifier()
    await h.routing({**ROOT, "group_wait_seconds": 0, "notifier_ids": [hook]})
    await h.post(alert("Down", "a"))
    await place_pending(h.renv, h.clock.now, RunResult())  # placed: the group is due
    async with h.renv.delivery.sessionmaker() as first:
        conn = await in_transaction(first)
        suppressor = await load(conn, (await config.current(conn)).tree, h.clock.now)
        claimed = await flush_batch(first, conn, h.renv, partial(asyncio.sleep, 0, suppressor), h.clock.now)
        assert claimed is not None and [reason for *_, reason in claimed.sent] == ["first"]
        other = await run_routing(h.renv)  # another process, meanwhile
        assert other.flushed == 0 and other.queued == 0
        async with h.renv.delivery.sessionmaker() as probe:
            with pytest.raises(DBAPIError, match="could not obtain lock"):  # the claim still holds the group
                await probe.execute(text("SELECT key FROM alert_groups FOR UPDATE NOWAIT"))
        await first.commit()
    await h.deliver()
    assert [summary(json.loads(r.get_data()))[0] for r, _ in h.httpserver.log] == ["first"]
    assert (await run_routing(h.renv)).queued == 0


async def test_group_wait_counts_from_the_first_post_even_when_it_is_posted_again_before_it_is_placed(h):
    """Prometheus re-sends a firing alert every `resend-delay`; a re-send that comes before the routing job placed
    the alert must not push the group's group_wait later."""
    hook = await h.notifier()
    await h.routing({**ROOT, "group_wait_seconds": 10, "notifier_ids": [hook]})
    day = (h.clock.now + timedelta(days=1)).isoformat()
    await h.post(alert("Early", "a", ends_at=day))
    h.clock.advance(4)
    await h.post(alert("Early", "a", ends_at=day))  # the same alert again, not yet placed in a group
    assert await h.step(1) == []  # placed now, 5 s after the first post
    (first,) = await h.step(5)  # 10 s after the first post, not after the second
    assert summary(first) == ("first", "firing", [("firing", "a")])


async def test_a_dataset_limited_token_sees_no_group_notification(h, make_token):
    """A routed group's message lists alerts of any dataset (here external ones, of none): a token limited to
    datasets neither sees it in the delivery history nor can send it again; a notifier's test message it sees."""
    hook = await h.notifier()
    await h.routing({**ROOT, "group_wait_seconds": 0, "notifier_ids": [hook]})
    await h.post(alert("SecretOutage", "db-1", ends_at=(h.clock.now + timedelta(days=1)).isoformat()))
    await h.step()
    await h.step(1)
    (group_message,) = await h.deliveries()
    assert group_message["alert_group_key"] is not None
    test = await h.client.post(f"/v1/notifiers/{hook}/test", headers=h.auth)
    assert test.status_code == 201
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    listed = (await h.client.get("/v1/deliveries", headers=limited)).json()["data"]
    assert [d["id"] for d in listed] == [test.json()["id"]]
    by_notifier = (await h.client.get(f"/v1/notifiers/{hook}/deliveries", headers=limited)).json()["data"]
    assert [d["id"] for d in by_notifier] == [test.json()["id"]]
    assert (await h.client.get(f"/v1/deliveries/{group_message['id']}", headers=limited)).status_code == 404
    retry = await h.client.post(f"/v1/deliveries/{group_message['id']}/retry", headers=limited)
    assert retry.status_code == 404
    assert (await h.client.get(f"/v1/deliveries/{group_message['id']}", headers=h.auth)).status_code == 200
