"""The reference back-off against a local server that fails a set number of times (sync and async clients)."""

from __future__ import annotations

import json
import time

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from beacon_client import AsyncClient, Backoff, BeaconAPIError, BeaconConnectionError, Client
from tests.client.conftest import Script, envelope, server_error, too_many
from tests.servers import free_port

ANNOTATION = {
    "object": "annotation",
    "id": "ann_1f",
    "type": "deploy",
    "title": "v1.2.3",
    "datasets": ["web"],
    "time": "2026-11-21T08:15:30.123Z",
    "end_time": None,
    "url": None,
    "description": None,
    "created_at": "2026-11-21T08:15:30.123Z",
    "added_later": {"ignored": True},
}


def created(_request) -> Response:
    return Response(json.dumps(ANNOTATION), status=201, content_type="application/json")


def serve(httpserver: HTTPServer, script: Script, path: str = "/v1/annotations") -> None:
    httpserver.expect_request(path).respond_with_handler(script)


def test_429_with_retry_after_waits_that_long_then_succeeds(httpserver):
    script = Script([too_many("1"), too_many("1")], created)
    serve(httpserver, script)
    started = time.monotonic()
    with Client(httpserver.url_for(""), "bcn_x") as client:
        ann = client.create_annotation("deploy", "v1.2.3", ["web"])
    elapsed = time.monotonic() - started
    assert ann.id == "ann_1f" and ann.time.year == 2026
    assert len(script.requests) == 3
    assert 2.0 <= elapsed < 3.5, elapsed
    # Every attempt is the same request, token included.
    assert {r.headers["Authorization"] for r in script.requests} == {"Bearer bcn_x"}
    assert {r.get_data() for r in script.requests} == {script.requests[0].get_data()}


async def test_async_429_with_retry_after_waits_that_long(httpserver):
    script = Script([too_many("1")], created)
    serve(httpserver, script)
    started = time.monotonic()
    async with AsyncClient(httpserver.url_for(""), "bcn_x") as client:
        ann = await client.create_annotation("deploy", "v1.2.3", ["web"])
    assert ann.title == "v1.2.3" and len(script.requests) == 2
    assert 1.0 <= time.monotonic() - started < 2.5


def test_429_without_retry_after_backs_off_exponentially(httpserver, sleeps, record_sleep):
    script = Script([too_many(None)] * 4, created)
    serve(httpserver, script)
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client:
        assert client.create_annotation("deploy", "v1", ["web"]).id == "ann_1f"
    assert len(script.requests) == 5 and len(sleeps) == 4
    for n, wait in enumerate(sleeps):
        assert 0.25 * 2**n <= wait <= 0.5 * 2**n
    assert sleeps == sorted(sleeps)


def test_exponential_waits_are_real_waits(httpserver):
    script = Script([too_many(None)] * 3, created)
    serve(httpserver, script)
    started = time.monotonic()
    with Client(httpserver.url_for(""), "t", backoff=Backoff(base=0.2)) as client:
        client.create_annotation("deploy", "v1", ["web"])
    # 0.1-0.2, 0.2-0.4, 0.4-0.8 seconds.
    assert 0.7 <= time.monotonic() - started < 2.5


def test_gives_up_after_five_retries_with_the_last_envelope(httpserver, sleeps, record_sleep):
    script = Script([too_many("3")] * 10, created)
    serve(httpserver, script)
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client, pytest.raises(BeaconAPIError) as caught:
        client.create_annotation("deploy", "v1", ["web"])
    err = caught.value
    assert len(script.requests) == 6 and sleeps == [3.0] * 5
    assert (err.status, err.type, err.code, err.message) == (
        429,
        "rate_limit_error",
        "rate_limit_exceeded",
        "slow down",
    )
    assert err.request_id == script.last_id == "req_0006"
    assert err.attempts == 6 and err.retry_after == "3"
    assert err.doc_url == "http://docs/errors#rate_limit_exceeded"
    assert err.envelope["error"]["request_id"] == "req_0006"
    assert "rate_limit_exceeded" in str(err) and "req_0006" in str(err)


async def test_async_gives_up_after_five_retries(httpserver, sleeps):
    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    script = Script([server_error(502)] * 10, created)
    serve(httpserver, script)
    async with AsyncClient(httpserver.url_for(""), "t", sleep=record) as client:
        with pytest.raises(BeaconAPIError) as caught:
            await client.create_annotation("deploy", "v1", ["web"])
    assert len(script.requests) == 6 and len(sleeps) == 5 and sleeps == sorted(sleeps)
    assert caught.value.status == 502 and caught.value.request_id == "req_0006"


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_is_retried_and_can_recover(httpserver, sleeps, record_sleep, status):
    script = Script([server_error(status)] * 2, created)
    serve(httpserver, script)
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client:
        assert client.create_annotation("deploy", "v1", ["web"]).id == "ann_1f"
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_503_retry_after_is_honoured(httpserver, sleeps, record_sleep):
    def unavailable(rid):
        r = envelope(503, "service_unavailable", "api_error", rid)
        r.headers["Retry-After"] = "5"
        return r

    serve(httpserver, Script([unavailable], created))
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client:
        client.create_annotation("deploy", "v1", ["web"])
    assert sleeps == [5.0]


def test_a_non_json_error_page_still_raises_a_useful_error(httpserver, record_sleep):
    serve(httpserver, Script([lambda rid: Response("<h1>Bad gateway</h1>", status=502)] * 6, created))
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client, pytest.raises(BeaconAPIError) as caught:
        client.create_annotation("deploy", "v1", ["web"])
    assert caught.value.status == 502 and caught.value.code == "http_502" and "Bad gateway" in caught.value.message


@pytest.mark.parametrize(
    ("status", "code", "type_"),
    [
        (400, "invalid_field", "invalid_request_error"),
        (401, "invalid_token", "authentication_error"),
        (403, "insufficient_scope", "permission_error"),
        (404, "not_found", "invalid_request_error"),
    ],
)
def test_client_errors_raise_at_once(httpserver, sleeps, record_sleep, status, code, type_):
    script = Script([lambda rid: envelope(status, code, type_, rid)], created)
    serve(httpserver, script)
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client, pytest.raises(BeaconAPIError) as caught:
        client.create_annotation("deploy", "v1", ["web"])
    assert len(script.requests) == 1 and sleeps == []
    assert (caught.value.status, caught.value.code, caught.value.type) == (status, code, type_)
    assert caught.value.attempts == 1


def _closed_port() -> int:
    return free_port()  # nothing listens there


def test_connection_errors_are_retried_then_raise(sleeps, record_sleep):
    port = _closed_port()
    with Client(f"http://127.0.0.1:{port}", "t", sleep=record_sleep) as client:
        with pytest.raises(BeaconConnectionError) as caught:
            client.list_tokens()
    assert caught.value.attempts == 6 and len(sleeps) == 5 and sleeps == sorted(sleeps)
    assert "ConnectError" in str(caught.value)


def test_connection_errors_recover_when_the_service_comes_up():
    """The service is down for the first two attempts; it starts while the client waits."""
    port = _closed_port()
    server = HTTPServer("127.0.0.1", port)
    script = Script([], created)
    server.expect_request("/v1/annotations").respond_with_handler(script)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            server.start()

    try:
        with Client(f"http://127.0.0.1:{port}", "t", sleep=sleep) as client:
            assert client.create_annotation("deploy", "v1", ["web"]).id == "ann_1f"
    finally:
        if server.is_running():
            server.stop()
    assert len(waits) == 2 and len(script.requests) == 1


async def test_async_connection_errors_are_retried_then_raise():
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with AsyncClient(f"http://127.0.0.1:{_closed_port()}", "t", sleep=sleep) as client:
        with pytest.raises(BeaconConnectionError):
            await client.get_token("tok_1")
    assert len(waits) == 5


def test_export_is_retried_before_streaming_and_streams_rows(httpserver, record_sleep):
    rows = [{"n": n, "service": "api"} for n in range(1000)]

    def stream(_request):
        return Response((json.dumps(r) + "\n" for r in rows), content_type="application/x-ndjson")

    script = Script([too_many("0")], stream)
    serve(httpserver, script, "/v1/export")
    with Client(httpserver.url_for(""), "t", sleep=record_sleep) as client:
        got = list(client.export("['web']", start_time="now-1h"))
    assert got == rows and len(script.requests) == 2
    assert json.loads(script.requests[0].get_data()) == {"apl": "['web']", "start_time": "now-1h"}


async def test_async_export_streams_rows(httpserver):
    rows = [{"n": n} for n in range(100)]
    httpserver.expect_request("/v1/export").respond_with_handler(
        lambda _r: Response((json.dumps(r) + "\n" for r in rows), content_type="application/x-ndjson")
    )
    async with AsyncClient(httpserver.url_for(""), "t") as client:
        got = [row async for row in client.export("['web']")]
    assert got == rows
