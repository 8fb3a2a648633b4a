"""PagerDuty's change events, sent by `pagerduty` (PyPI, PagerDuty's own Python client: nobody here wrote it)
with a Beacon token as the routing key, and answered as PagerDuty answers."""

from __future__ import annotations

import asyncio
import ssl

import httpx
import pagerduty
import pytest


def send(server: tuple[str, ssl.SSLContext], routing_key: str, **event) -> None:
    base_url, trust = server
    client = pagerduty.EventsApiV2Client(routing_key, base_url=base_url, verify=trust)
    client.max_network_attempts = 1
    try:
        client.send_change_event(**event)
    finally:
        client.close()


async def test_a_change_event_becomes_an_annotation(served_tls, admin_token, client, auth):
    await asyncio.to_thread(
        send,
        served_tls,
        admin_token,
        payload={
            "summary": "Build 1042 deployed checkout 1.4.2",
            "source": "ci-runner-7",
            "timestamp": "2026-11-21T07:56:00.000+0000",
            "custom_details": {"service": "checkout", "env": "prod", "build": 1042, "bad-name": "x"},
        },
        links=[{"href": "https://ci.example.com/runs/1042", "text": "build"}],
    )
    (change,) = (await client.get("/v1/annotations", headers=auth)).json()["data"]
    assert change["type"] == "change" and change["title"] == "Build 1042 deployed checkout 1.4.2"
    assert change["labels"] == {"env": "prod", "service": "checkout"}  # string values with label names
    assert change["datasets"] == ["*"] and change["origin"] == "pagerduty"
    assert change["time"] == "2026-11-21T07:56:00.000Z" and change["url"] == "https://ci.example.com/runs/1042"


async def test_answers_as_pagerduty_does(served, served_tls, admin_token, make_token):
    event = {"payload": {"summary": "deploy"}}
    async with httpx.AsyncClient(base_url=served) as http:
        ok = await http.post("/v2/change/enqueue", json={"routing_key": admin_token, **event})
        assert ok.status_code == 202 and ok.json() == {"status": "success", "message": "Change event processed"}
        for body in ({**event}, {"routing_key": "bcn_unknown", **event}):
            refused = await http.post("/v2/change/enqueue", json=body)
            assert refused.status_code == 400
            assert refused.json()["status"] == "invalid event" and refused.json()["errors"]
        nul = await http.post("/v2/change/enqueue", json={"routing_key": admin_token, "payload": {"summary": "\u0000"}})
        assert nul.status_code == 400 and "NUL" in nul.json()["errors"][0]
        blank = await http.post("/v2/change/enqueue", json={"routing_key": admin_token, "payload": {}})
        assert blank.status_code == 400 and "summary" in blank.json()["errors"][0]
        reader = await make_token(["annotations:read"])
        scoped = await http.post("/v2/change/enqueue", json={"routing_key": reader, **event})
        assert scoped.status_code == 400 and "annotations:write" in scoped.json()["errors"][0]
        limited = await make_token(["annotations:write"], datasets=["pub"])
        assert (await http.post("/v2/change/enqueue", json={"routing_key": limited, **event})).status_code == 202
        huge = await http.post("/v2/change/enqueue", content=b'{"routing_key": "' + b"x" * 600_000 + b'"}')
        assert huge.status_code == 400 and "512 KiB" in huge.json()["errors"][0]
    with pytest.raises(pagerduty.Error):
        await asyncio.to_thread(send, served_tls, "bcn_unknown", payload={"summary": "deploy"})
