"""After a notifier's mute (`disabled_until`) ends, a group's stream sends what is still true, and no
`[RESOLVED]` for an episode the notifier never heard fire (the pipeline's rule, applied to what was sent)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


async def test_no_resolved_after_a_mute_for_an_episode_never_heard_firing(h):
    hook = await h.notifier()
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    r = await h.client.patch(f"/v1/notifiers/{hook}", headers=h.auth, json={"disabled_until": until})
    assert r.status_code == 200, r.text
    await h.routing({"notifier_ids": [hook], "group_by": ["alertname"], "group_wait_seconds": 0})
    await h.post({"labels": {"alertname": "Blip", "instance": "a"}})
    assert await h.step() == []  # queued, deferred by the mute
    await h.post({"labels": {"alertname": "Blip", "instance": "a"}, "ends_at": h.clock.now.isoformat()})
    assert await h.step(300) == []
    r = await h.client.patch(f"/v1/notifiers/{hook}", headers=h.auth, json={"disabled_until": None})
    assert r.status_code == 200, r.text
    assert await h.step() == []  # the trigger is superseded by the resolve, which the notifier has no use for
    statuses = sorted((d["kind"], d["status"]) for d in await h.deliveries())
    assert statuses == [("alerts.firing", "superseded"), ("alerts.resolved", "superseded")]
