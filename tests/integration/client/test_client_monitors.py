"""The client's monitor methods against the real app (tests/unit/client/test_endpoints.py checks the requests they
build): create with every option, the create and update answers' warnings, partial updates that clear a field,
a dry-run evaluation, history, listing by state, ids escaped in paths, delete."""

from __future__ import annotations

import pytest

from beacon_client import AsyncClient, BeaconAPIError, Monitor, MonitorSaved, TriggerAfter

COUNT = "['web'] | where status >= 500 | summarize count()"


async def test_monitor_lifecycle(beacon: AsyncClient):
    hook = await beacon.create_notifier("hooks", "webhook", {"url": "https://public.example/hooks/beacon"})
    made = await beacon.create_monitor(
        "API errors", "threshold", COUNT, notifier_ids=[hook.id], operator="above", threshold=10,
        description="5xx from the API", interval_seconds=30, trigger_after=TriggerAfter(m=2, n=3),
        repeat_interval_seconds=600, labels={"team": "payments"},
    )  # fmt: skip
    assert isinstance(made, MonitorSaved) and made.id.startswith("mon_")
    assert (made.dataset, made.state, made.interval_seconds, made.notifier_ids) == ("web", "ok", 30, [hook.id])
    assert (made.trigger_after, made.repeat_interval_seconds, made.labels) == (TriggerAfter(m=2, n=3), 600,
                                                                               {"team": "payments"})  # fmt: skip
    assert [w.code for w in made.warnings] == ["unknown_dataset"]  # nothing ingested into 'web' yet

    got = await beacon.get_monitor(made.id)
    assert type(got) is Monitor and got.name == "API errors" and got.created_at == made.created_at

    # None clears an optional field; what is not given stays as it was.
    changed = await beacon.update_monitor(made.id, description=None, repeat_interval_seconds=None, threshold=20)
    assert isinstance(changed, MonitorSaved)
    assert (changed.description, changed.repeat_interval_seconds, changed.threshold) == (None, None, 20)
    assert changed.labels == {"team": "payments"} and changed.interval_seconds == 30

    dry = await beacon.evaluate_monitor(made.id, dry_run=True)
    assert dry["dry_run"] is True and dry["monitor_id"] == made.id and dry["previous_state"] == "ok"
    assert (await beacon.monitor_history(made.id)).data == []  # a dry run writes nothing

    assert [m.id for m in (await beacon.list_monitors(state="ok")).data] == [made.id]
    assert (await beacon.list_monitors(state="alerting")).data == []

    with pytest.raises(BeaconAPIError) as caught:  # an id is one path segment: never another route
        await beacon.get_monitor("../tokens")
    assert caught.value.code == "not_found"

    await beacon.delete_monitor(made.id)
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.get_monitor(made.id)
    assert caught.value.code == "not_found"
