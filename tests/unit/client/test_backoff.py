"""The reference back-off as pure policy: which outcomes are retried and how long each wait is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from beacon_client.backoff import Backoff, parse_retry_after


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_429_and_5xx_are_retried_until_five_retries(status):
    policy = Backoff()
    assert [policy.delay_after_response(n, status, None) is not None for n in range(7)] == [True] * 5 + [False] * 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 415])
def test_client_errors_are_not_retried(status):
    assert Backoff().delay_after_response(0, status, "1") is None


def test_retry_after_is_honoured_exactly():
    policy = Backoff(random=lambda: 1.0)
    assert policy.delay_after_response(0, 429, "7") == 7.0
    assert policy.delay_after_response(3, 503, "2") == 2.0


def test_retry_after_as_an_http_date():
    now = datetime(2026, 11, 21, 8, 0, 0, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=12), usegmt=True)
    assert parse_retry_after(header, now=lambda: now) == 12.0
    assert parse_retry_after(format_datetime(now - timedelta(seconds=5), usegmt=True), now=lambda: now) == 0.0


@pytest.mark.parametrize("header", [None, "", "soon", "-"])
def test_missing_or_unreadable_retry_after_falls_back_to_exponential(header):
    low = Backoff(random=lambda: 0.0)
    high = Backoff(random=lambda: 1.0)
    assert low.delay_after_response(0, 429, header) == 0.25
    assert high.delay_after_response(0, 429, header) == 0.5


def test_exponential_waits_grow_with_jitter_within_bounds():
    lows = [Backoff(random=lambda: 0.0).exponential(n) for n in range(5)]
    highs = [Backoff(random=lambda: 0.999999).exponential(n) for n in range(5)]
    assert lows == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert highs == pytest.approx([0.5, 1.0, 2.0, 4.0, 8.0], rel=1e-5)
    # Equal jitter: the smallest wait of a retry is the largest of the one before, so waits never shrink.
    assert all(h <= lo for h, lo in zip(highs, lows[1:], strict=False))


def test_jitter_spreads_clients_that_failed_together():
    import random

    rng = random.Random(7)
    policy = Backoff(random=rng.random)
    waits = {round(policy.exponential(2), 6) for _ in range(50)}
    assert len(waits) > 40 and min(waits) >= 1.0 and max(waits) <= 2.0


def test_exponential_waits_are_capped():
    assert Backoff(cap=3.0, random=lambda: 1.0).exponential(10) == 3.0


def test_connection_errors_are_retried_but_not_a_bad_url():
    policy = Backoff(random=lambda: 0.0)
    request = httpx.Request("GET", "http://127.0.0.1:1/")
    assert policy.delay_after_error(0, httpx.ConnectError("refused", request=request)) == 0.25
    assert policy.delay_after_error(4, httpx.ReadTimeout("slow", request=request)) == 4.0
    assert policy.delay_after_error(1, httpx.RemoteProtocolError("closed", request=request)) == 0.5
    assert policy.delay_after_error(5, httpx.ConnectError("refused", request=request)) is None
    assert policy.delay_after_error(0, httpx.UnsupportedProtocol("ftp://")) is None
