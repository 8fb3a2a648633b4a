"""Every request is counted once, also one whose answer never ends (the handler raised mid-stream, or the
client went away): app/request_log.py around a bare ASGI handler."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.metrics import Metrics
from app.request_log import _observed


async def test_an_answer_cut_short_is_counted_once_with_its_status():
    metrics = Metrics()
    scope = {"type": "http", "method": "GET", "path": "/v1/export", "state": {}}
    scope["app"] = SimpleNamespace(state=SimpleNamespace(services=SimpleNamespace(metrics=metrics)))
    sent = []

    async def send(message):
        sent.append(message["type"])

    async def streaming_then_failing(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}\n", "more_body": True})
        raise RuntimeError("the stream broke")

    async def whole(scope, receive, send):
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    with pytest.raises(RuntimeError):
        await _observed(streaming_then_failing)(scope, None, send)
    await _observed(whole)(dict(scope, state={}), None, send)
    counted = {
        s.labels["status"]: s.value
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "beacon_http_requests_total"
    }
    assert counted == {"200": 1.0, "204": 1.0}
