"""match_event monitors: one message per run about the events that arrived since the previous run, listing up
to 10 of them, with the total; nothing when nothing new arrived."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

MATCH = "['web'] | where status >= 500 | extend slow = duration_ms > 1000 | project-away secret"


def now() -> datetime:
    return datetime.now(UTC)


async def test_reports_new_matching_events_once(h):
    hook = await h.webhook()
    h.httpserver.expect_request("/chat", method="POST").respond_with_data("ok")
    chat = (
        await h.client.post(
            "/v1/notifiers",
            headers=h.auth,
            json={"name": "chat", "type": "chat_a", "config": {"url": h.httpserver.url_for("/chat")}},
        )
    ).json()
    m = await h.monitor(
        name="Server errors", type="match_event", apl=MATCH, interval_seconds=10, notifier_ids=[hook["id"], chat["id"]]
    )
    await h.ingest(
        "web",
        [{"status": 503, "path": f"/p{i}", "duration_ms": 1500 * i, "secret": "s3cr3t"} for i in range(3)]
        + [{"status": 200, "path": "/ok"}] * 2,
    )
    tick = await h.run(now())
    assert tick.deliveries == 2
    (event,) = await h.history(m["id"])
    assert event["kind"] == "matched" and event["match_count"] == 3 and event["value"] == 3
    assert len(event["matches"]) == 3
    assert {e["path"] for e in event["matches"]} == {"/p0", "/p1", "/p2"}
    assert all("secret" not in e and e["status"] == 503 and "_time" in e for e in event["matches"])
    assert {e["path"]: e["slow"] for e in event["matches"]} == {"/p0": False, "/p1": True, "/p2": True}
    assert (await h.get(m["id"]))["state"] == "ok"
    # Nothing new: no message, no history entry.
    await h.ingest("web", [{"status": 200, "path": "/ok"}])
    assert (await h.run(now())).deliveries == 0
    assert len(await h.history(m["id"])) == 1

    assert await h.deliver() == 2
    hook_bodies = [json.loads(r.get_data()) for r, _ in h.httpserver.log if r.path == "/hook"]
    chat_bodies = [json.loads(r.get_data()) for r, _ in h.httpserver.log if r.path == "/chat"]
    (body,) = hook_bodies
    assert body["type"] == "monitor.matched" and body["data"]["match_count"] == 3
    assert len(body["data"]["matches"]) == 3 and body["data"]["summary"].startswith("3 new events matched")
    (message,) = chat_bodies
    text_ = json.dumps(message)
    assert "[Matched] Server errors" in text_ and "/p1" in text_ and "status=503" in text_


async def test_lists_ten_and_counts_all(h):
    hook = await h.webhook()
    m = await h.monitor(type="match_event", apl=MATCH, interval_seconds=10, notifier_ids=[hook["id"]])
    await h.ingest("web", [{"status": 500, "n": i} for i in range(15)])
    assert (await h.run(now())).deliveries == 1
    (event,) = await h.history(m["id"])
    assert event["match_count"] == 15 and len(event["matches"]) == 10
    assert await h.deliver() == 1
    (body,) = h.received()
    assert body["data"]["match_count"] == 15 and len(body["data"]["matches"]) == 10
    assert body["data"]["summary"].startswith("15 new events matched")


async def test_one_run_covers_what_arrived_during_downtime(h):
    hook = await h.webhook()
    m = await h.monitor(type="match_event", apl=MATCH, interval_seconds=10, notifier_ids=[hook["id"]])
    await h.run(now())
    # The loop was down for an hour; what arrived meanwhile (with event times in that hour) is reported by the
    # first run after it, in one message.
    async with h.db() as s:
        await s.execute(
            text("UPDATE monitors SET match_cursor = match_cursor - interval '1 hour' WHERE id = :id"), {"id": m["id"]}
        )
        await s.commit()
    await h.ingest("web", [{"status": 500, "_time": now() - timedelta(minutes=m_)} for m_ in (50, 30, 10)])
    tick = await h.run(now())
    assert tick.evaluated == 1 and tick.deliveries == 1
    (event,) = await h.history(m["id"])
    assert event["match_count"] == 3


async def test_a_failing_match_query_is_an_error_and_its_events_are_reported_after(h):
    hook = await h.webhook()
    m = await h.monitor(
        type="match_event", apl="['web'] | where msg matches regex '('", interval_seconds=10, notifier_ids=[hook["id"]]
    )
    await h.ingest("web", [{"msg": "a"}])
    await h.run(now())
    assert (await h.get(m["id"]))["state"] == "error"
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"apl": "['web'] | where msg == 'a'"})
    assert r.status_code == 200
    await h.run(now())  # the event that arrived before the failed run is still reported
    history = [(e["kind"], e["match_count"]) for e in await h.history(m["id"])]
    assert history[-1] == ("error", None)
    assert sorted(history[:2]) == [("matched", 1), ("resolved", None)]  # one run: the same time
    assert (await h.get(m["id"]))["state"] == "ok"


async def test_events_that_arrived_while_disabled_are_not_reported(h):
    hook = await h.webhook()
    m = await h.monitor(type="match_event", apl=MATCH, interval_seconds=10, notifier_ids=[hook["id"]])
    await h.run(now())
    until = now() + timedelta(seconds=1)
    r = await h.client.patch(f"/v1/monitors/{m['id']}", headers=h.auth, json={"disabled_until": until.isoformat()})
    assert r.status_code == 200
    await h.ingest("web", [{"status": 500, "when": "muted"}])
    assert (await h.run(now())).evaluated == 0  # disabled: not even evaluated
    await asyncio.sleep(max(0.0, (until - now()).total_seconds()) + 0.05)
    await h.ingest("web", [{"status": 500, "when": "after"}])
    assert (await h.run(now())).deliveries == 1
    (event,) = await h.history(m["id"])
    assert [e["when"] for e in event["matches"]] == ["after"]


async def test_integers_beyond_64_bits_are_reported_exactly(h):
    # Queries read them exactly; the report must show them (as the events hold them), not fail on them.
    big = 2**70 + 1
    m = await h.monitor(name="Big", type="match_event", apl="['web'] | where status >= 500", interval_seconds=10)
    await h.ingest("web", [{"status": 503, "id": big, "ids": [big, 1]}])
    await h.run(now())
    (event,) = await h.history(m["id"])
    assert event["kind"] == "matched" and event["error"] is None
    (match,) = event["matches"]
    assert match["id"] == big and json.loads(match["ids"]) == [big, 1]  # arrays are shown as JSON text
