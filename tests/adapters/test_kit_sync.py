"""The kit from plain (synchronous) test functions, as a plugin's own tests call it without any asyncio set-up:
the send check runs to the end and fails on a bad adapter, instead of returning a coroutine nobody awaits."""

from __future__ import annotations

import pytest

from adapters import testing as kit
from adapters.base import DeliveryResult, Message
from adapters.webhook import Webhook, new_signing_secret
from app.settings import TEMPLATES_DIR

SECRET = new_signing_secret()


class RetriesNothing(Webhook):
    """Sends as a webhook does, but calls every failure final: what the kit must catch."""

    type = "retries_nothing"
    templates_dir = TEMPLATES_DIR / "webhook"

    async def send(self, message: Message) -> DeliveryResult:
        result = await super().send(message)
        return DeliveryResult(ok=result.ok, retryable=False, status=result.status, detail=result.detail)


def config_for(base: str) -> dict[str, str]:
    return {"url": base + "/hook", "signing_secret": SECRET}


def test_the_send_check_runs_from_a_plain_function():
    results = kit.check_retry_classification(Webhook, config_for)
    assert [r.status for r in results[:3]] == [200, 202, 204] and results[-1].status is None  # then a closed port


def test_the_send_check_fails_a_bad_adapter_from_a_plain_function():
    with pytest.raises(AssertionError, match="retryable=False"):
        kit.check_retry_classification(RetriesNothing, config_for)


async def test_inside_an_event_loop_it_is_awaited():
    results = await kit.check_retry_classification(Webhook, config_for)
    assert len(results) == len(kit.EXPECTED) + 1
