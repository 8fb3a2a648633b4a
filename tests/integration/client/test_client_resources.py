"""The client against the real app: annotations and notifiers (async in process, sync over real HTTP)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from beacon_client import Annotation, AsyncClient, BeaconAPIError, NotifierCreated

T0 = datetime(2026, 11, 21, 8, 15, 30, 123000, tzinfo=UTC)


async def test_annotation_lifecycle(beacon: AsyncClient):
    made = await beacon.create_annotation(
        "deploy", "v1.2.3", ["web", "api"], time=T0, end_time=T0 + timedelta(minutes=5), url="https://ci.example/42"
    )
    assert isinstance(made, Annotation) and made.id.startswith("ann_")
    assert (made.time, made.end_time, made.url, made.datasets) == (
        T0,
        T0 + timedelta(minutes=5),
        "https://ci.example/42",
        ["web", "api"],
    )
    assert made.description is None and made.created_at is not None
    assert await beacon.get_annotation(made.id) == made

    changed = await beacon.update_annotation(made.id, title="v1.2.4", end_time=None)
    assert (changed.title, changed.end_time, changed.url) == ("v1.2.4", None, "https://ci.example/42")

    # One dataset name alone is one dataset, not its letters.
    other = await beacon.create_annotation("incident", "db down", "db", time=T0 + timedelta(hours=1))
    assert other.datasets == ["db"]
    page = await beacon.list_annotations(datasets=["web"], start_time=T0 - timedelta(hours=1))
    assert [a.id for a in page.data] == [made.id]
    everything = [a.id async for a in beacon.iterate(beacon.list_annotations, limit=1)]
    assert everything == [other.id, made.id]  # newest first

    await beacon.delete_annotation(made.id)
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.get_annotation(made.id)
    assert caught.value.code == "not_found"


async def test_annotation_validation_errors_name_the_field(beacon: AsyncClient):
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.create_annotation("deploy", "v1", ["web"], time=T0, end_time=T0 - timedelta(seconds=1))
    assert (caught.value.status, caught.value.param) == (400, "end_time")
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.create_annotation("deploy", "v1", ["not a name!"])
    assert caught.value.status == 400 and caught.value.param and caught.value.param.startswith("datasets")
    with pytest.raises(BeaconAPIError) as caught:
        await beacon.create_annotation("deploy", "v1", ["web"], time="2026-11-21T08:00:00")  # no offset
    assert (caught.value.code, caught.value.param) == ("invalid_field", "time")


async def test_notifier_lifecycle_and_secret_rotation(beacon: AsyncClient):
    hook = await beacon.create_notifier("hooks", "webhook", {"url": "https://public.example/hooks/beacon"})
    assert isinstance(hook, NotifierCreated) and hook.id.startswith("ntf_")
    assert hook.target == "public.example/…/acon"
    assert hook.signing_secret and hook.signing_secret.startswith("whsec_")
    assert len(base64.b64decode(hook.signing_secret.removeprefix("whsec_"))) == 32

    assert (await beacon.get_notifier(hook.id)).name == "hooks"

    rotated = await beacon.rotate_notifier_secret(hook.id)
    assert rotated.signing_secret and rotated.signing_secret != hook.signing_secret
    assert rotated.previous_secret_expires_at is not None

    renamed = await beacon.update_notifier(hook.id, name="hooks 2", disabled_until=T0 + timedelta(days=400))
    assert renamed.name == "hooks 2" and renamed.disabled_until == T0 + timedelta(days=400)

    mail = await beacon.create_notifier("mail", "email", {"addresses": ["ops@example.com"]})
    assert mail.signing_secret is None
    webhooks = await beacon.list_notifiers(type="webhook")
    assert [n.id for n in webhooks.data] == [hook.id]

    with pytest.raises(BeaconAPIError) as caught:
        await beacon.create_notifier("bad", "chat_a", {"url": "https://public.example/x", "colour": "red"})
    assert (caught.value.code, caught.value.param) == ("invalid_field", "config.colour")

    await beacon.delete_notifier(mail.id)
    assert [n.id async for n in beacon.iterate(beacon.list_notifiers)] == [hook.id]


def test_sync_client_resources_over_http(served):
    with served.client() as beacon:
        ann = beacon.create_annotation("deploy", "sync", "web", description="from the sync client")
        assert beacon.get_annotation(ann.id).description == "from the sync client"
        hook = beacon.create_notifier("local", "webhook", {"url": "http://127.0.0.1:9/hook"})
        assert hook.signing_secret and beacon.get_notifier(hook.id).target
        beacon.delete_notifier(hook.id)
        beacon.delete_annotation(ann.id)
