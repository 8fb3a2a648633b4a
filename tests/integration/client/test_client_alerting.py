"""The AsyncClient's alert, silence and routing methods against the real app (in process)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from beacon_client import BeaconAPIError


async def test_alerts_silences_and_routing(beacon):
    received = await beacon.post_alerts(
        [
            {"labels": {"alertname": "A", "path": "a,b"}, "annotations": {"summary": "first"}},
            {"labels": {"alertname": "B", "path": "a"}},
        ]
    )
    assert received.received == 2
    # Each filter is its own `filter` parameter: a matcher that holds a comma stays one matcher.
    page = await beacon.list_alerts(filters=['path=~"a,b|c"', "alertname!=B"])
    assert [a.labels for a in page.data] == [{"alertname": "A", "path": "a,b"}]
    alert = await beacon.get_alert(received.fingerprints[0])
    assert (alert.state, alert.annotations, alert.source.type) == ("firing", {"summary": "first"}, "external")

    silence = await beacon.create_silence(
        "alertname=A", datetime.now(UTC) + timedelta(hours=1), "maintenance", created_by="ana"
    )
    assert (silence.state, silence.created_by, silence.matchers) == ("active", "ana", ['alertname="A"'])
    assert (await beacon.get_alert(received.fingerprints[0])).silenced_by == [silence.id]
    assert [a.labels["alertname"] for a in (await beacon.list_alerts(state="suppressed")).data] == ["A"]
    changed = await beacon.update_silence(silence.id, comment="longer maintenance")
    assert changed.comment == "longer maintenance"
    assert [s.id for s in (await beacon.list_silences(state="active")).data] == [silence.id]
    expired = await beacon.expire_silence(silence.id)
    assert expired.state == "expired" and (await beacon.get_silence(silence.id)).state == "expired"

    routing = await beacon.get_routing()
    doc = routing.document()
    doc["route"]["group_by"] = ["path"]
    replaced = await beacon.put_routing(doc, routing.version)
    assert replaced.route["group_by"] == ["path"]
    with pytest.raises(BeaconAPIError) as stale:
        await beacon.put_routing(doc, routing.version)
    assert (stale.value.status, stale.value.code) == (412, "version_conflict")
    groups = await beacon.alert_groups()
    assert sorted(g.labels["path"] for g in groups.data) == ["a", "a,b"]
    tested = await beacon.test_routing({"alertname": "A", "path": "a,b"})
    assert tested.fingerprint == received.fingerprints[0] and tested.routes[0].group_key == '{}:{path="a,b"}'
    with pytest.raises(BeaconAPIError) as bad:
        await beacon.list_alerts(filters=["not a matcher"])
    assert (bad.value.status, bad.value.code, bad.value.param) == (400, "invalid_parameter", "filter")
