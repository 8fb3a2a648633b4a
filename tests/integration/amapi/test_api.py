"""/api/v2 in process: Alertmanager's shapes for what its clients post and read, its error shape (a JSON
string), Beacon's tokens and scopes, and the routing tree shown as an Alertmanager configuration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml


@pytest.fixture
async def client(app_client):
    async with app_client(allow_private_destinations=True) as c:  # notifiers on 127.0.0.1
        yield c


def _when(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).isoformat().replace("+00:00", "Z")


def _silence(matchers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"matchers": matchers, "startsAt": _when(), "endsAt": _when(hours=1), "createdBy": "ops",
            "comment": "maintenance", **extra}  # fmt: skip


async def _notifier(client, auth, name: str) -> str:
    body = {"name": name, "type": "webhook", "config": {"url": "http://127.0.0.1:9/hook"}}
    r = await client.post("/v1/notifiers", headers=auth, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def _routing(client, auth, document: dict[str, Any]) -> None:
    version = (await client.get("/v1/routing", headers=auth)).json()["version"]
    r = await client.put("/v1/routing", headers={**auth, "If-Match": version}, json=document)
    assert r.status_code == 200, r.text


async def test_alerts_posted_as_prometheus_and_amtool_send_them(client, auth):
    r = await client.post("/api/v2/alerts", headers=auth, json=[
        # Prometheus: nanosecond times, a generatorURL.
        {"labels": {"alertname": "Up", "job": "node"}, "annotations": {"summary": "s"},
         "startsAt": "2026-01-01T00:00:00.123456789Z", "endsAt": _when(minutes=10),
         "generatorURL": "http://prometheus:9090/graph?g0.expr=up"},
        # amtool: Go's zero time for what it leaves unset, and a field this API does not know.
        {"labels": {"alertname": "Manual"}, "startsAt": "0001-01-01T00:00:00.000Z",
         "endsAt": "0001-01-01T00:00:00.000Z", "extra": 1},
        # Resolved: its end has passed.
        {"labels": {"alertname": "Gone"}, "startsAt": _when(minutes=-10), "endsAt": _when(minutes=-1)},
    ])  # fmt: skip
    assert r.status_code == 200 and r.content == b""
    v1 = {a["labels"]["alertname"]: a for a in (await client.get("/v1/alerts", headers=auth)).json()["data"]}
    assert v1["Up"]["starts_at"] == "2026-01-01T00:00:00.123Z"
    assert v1["Up"]["generator_url"] == "http://prometheus:9090/graph?g0.expr=up"
    assert v1["Manual"]["state"] == "firing" and v1["Manual"]["ends_at"] is not None  # resolve timeout
    assert v1["Gone"]["state"] == "resolved"

    listed = (await client.get("/api/v2/alerts", headers=auth)).json()
    assert {a["labels"]["alertname"] for a in listed} == {"Up", "Manual"}  # resolved ones are not listed
    up = next(a for a in listed if a["labels"]["alertname"] == "Up")
    assert set(up) == {"labels", "annotations", "receivers", "fingerprint", "startsAt", "updatedAt", "endsAt",
                       "status", "generatorURL"}  # fmt: skip
    assert up["status"] == {"state": "active", "silencedBy": [], "inhibitedBy": [], "mutedBy": []}
    assert up["receivers"] == [{"name": "none"}] and up["fingerprint"] == v1["Up"]["fingerprint"]


async def test_bad_input_is_a_400_whose_body_is_the_message(client, auth, capfd):
    async def error(method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        r = await client.request(method, path, headers=auth, **kwargs)
        return r.status_code, r.json()

    status, body = await error("GET", "/api/v2/alerts", params={"filter": 'job=~"("'})
    assert status == 400 and isinstance(body, str) and body.startswith('bad matcher format: job=~"("')
    capfd.readouterr()
    status, body = await error("GET", "/api/v2/alerts", params={"receiver": "("})
    assert status == 400 and "receiver" in body
    assert "Error parsing" not in capfd.readouterr().err  # a user's bad pattern writes nothing to the server's log
    status, body = await error("POST", "/api/v2/alerts", json=[{"labels": {"bad name": "x"}}])
    assert status == 400 and isinstance(body, str) and "bad name" in body
    status, body = await error("POST", "/api/v2/alerts", json={"labels": {}})
    assert status == 400 and isinstance(body, str)
    status, body = await error(
        "POST", "/api/v2/silences", json=_silence([{"name": "a", "value": "(", "isRegex": True}])
    )
    assert status == 400 and "invalid regular expression" in body
    # The sizes are checked before any regular expression is compiled: too many matchers is the answer.
    many = [{"name": "a", "value": "(", "isRegex": True}] + [
        {"name": f"l{i}", "value": "x", "isRegex": False} for i in range(64)
    ]
    status, body = await error("POST", "/api/v2/silences", json=_silence(many))
    assert status == 400 and "length <= 64" in body and "regular expression" not in body, body
    status, body = await error(
        "POST", "/api/v2/silences", json=_silence([{"name": "a", "value": "", "isRegex": False}])
    )
    assert status == 400 and "every alert" in body
    past = _silence([{"name": "a", "value": "b", "isRegex": False}], endsAt=_when(hours=-1))
    status, body = await error("POST", "/api/v2/silences", json=past)
    assert status == 400 and "ends_at" in body
    status, body = await error("GET", "/api/v2/alerts", params={"filter": "a=\x00"})
    assert status == 400 and isinstance(body, str)


async def test_unknown_silence_ids_answer_as_alertmanager_does(client, auth):
    r = await client.get("/api/v2/silence/sil_unknown", headers=auth)
    assert r.status_code == 404 and r.json() == "silence sil_unknown not found"
    # amtool's `silence import` retries as a new silence when the message says "not found".
    r = await client.post("/api/v2/silences", headers=auth,
                          json=_silence([{"name": "a", "value": "b", "isRegex": False}], id="sil_unknown"))  # fmt: skip
    assert r.status_code == 404 and "not found" in r.json()
    # Alertmanager's API defines only 200 and 500 here; amtool prints the message of a 500.
    r = await client.delete("/api/v2/silence/sil_unknown", headers=auth)
    assert r.status_code == 500 and r.json() == "silence sil_unknown not found"


async def test_tokens_and_scopes_decide_and_refusals_keep_beacons_envelope(client, auth, make_token):
    r = await client.get("/api/v2/alerts")
    assert r.status_code == 401 and r.json()["error"]["code"] == "missing_token"
    r = await client.get("/api/v2/status", headers={"Authorization": "Bearer bcn_nope"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_token"
    reader = {"Authorization": f"Bearer {await make_token(['silences:read'])}"}
    assert (await client.get("/api/v2/silences", headers=reader)).status_code == 200
    for method, path in (("GET", "/api/v2/alerts"), ("POST", "/api/v2/silences"), ("GET", "/api/v2/status"),
                         ("GET", "/api/v2/receivers"), ("DELETE", "/api/v2/silence/x")):  # fmt: skip
        r = await client.request(method, path, headers=reader, json=_silence([]) if method == "POST" else None)
        assert r.status_code == 403 and r.json()["error"]["code"] == "insufficient_scope", (method, path)
    limited = {"Authorization": f"Bearer {await make_token(['*'], datasets=['web'])}"}
    r = await client.post("/api/v2/alerts", headers=limited, json=[{"labels": {"alertname": "X"}}])
    assert r.status_code == 403
    # The token is refused before the alerts are read: a time Beacon cannot store is not what it hears of.
    late = [{"labels": {"alertname": "X"}}, {"labels": {"alertname": "Y"}, "startsAt": "2300-01-01T00:00:00Z"}]
    r = await client.post("/api/v2/alerts", headers=limited, json=late)
    assert r.status_code == 403 and r.json()["error"]["code"] == "insufficient_scope", r.text
    # Refused before the silence is looked for: a limited token learns nothing of which ids exist.
    r = await client.delete("/api/v2/silence/sil_unknown", headers=limited)
    assert r.status_code == 403 and r.json()["error"]["code"] == "insufficient_scope", r.text
    m = [{"name": "alertname", "value": "Down", "isRegex": False, "isEqual": True}]
    for body in (_silence([]), {**_silence(m), "id": "sil_unknown"}):  # neither the body nor the id is looked at
        r = await client.post("/api/v2/silences", headers=limited, json=body)
        assert r.status_code == 403 and r.json()["error"]["code"] == "insufficient_scope", r.text


async def test_silences_update_in_place_or_replace_by_alertmanagers_rules(client, auth):
    m = [{"name": "alertname", "value": "Down", "isRegex": False, "isEqual": True}]
    created = await client.post("/api/v2/silences", headers=auth, json=_silence(m))
    assert created.status_code == 200, created.text
    sid = created.json()["silenceID"]
    got = (await client.get(f"/api/v2/silence/{sid}", headers=auth)).json()
    assert got["status"] == {"state": "active"} and got["matchers"] == m and got["createdBy"] == "ops"

    # Same matchers and start, a later end and a new comment: changed in place.
    same = {**_silence(m, id=sid, comment="longer"), "startsAt": got["startsAt"], "endsAt": _when(hours=3)}
    r = await client.post("/api/v2/silences", headers=auth, json=same)
    assert r.json() == {"silenceID": sid}
    assert (await client.get(f"/api/v2/silence/{sid}", headers=auth)).json()["comment"] == "longer"

    # A replacement that is refused (no comment) leaves the old silence as it was: nothing is expired.
    other = [{"name": "alertname", "value": "Down|Up", "isRegex": True, "isEqual": True}]
    refused = await client.post("/api/v2/silences", headers=auth, json=_silence(other, id=sid, comment=""))
    assert refused.status_code == 400, refused.text
    assert (await client.get(f"/api/v2/silence/{sid}", headers=auth)).json()["status"]["state"] == "active"

    # Other matchers: the old one is expired and a new one replaces it.
    r = await client.post("/api/v2/silences", headers=auth, json=_silence(other, id=sid))
    assert r.status_code == 200, r.text
    new_id = r.json()["silenceID"]
    assert new_id != sid
    assert (await client.get(f"/api/v2/silence/{sid}", headers=auth)).json()["status"]["state"] == "expired"
    v1 = (await client.get(f"/v1/silences/{new_id}", headers=auth)).json()
    assert v1["matchers"] == ['alertname=~"Down|Up"']

    # Alertmanager's filter: a filter matcher holds for the silence's matcher of that label.
    listed = await client.get("/api/v2/silences", headers=auth, params={"filter": "alertname=~Down.*"})
    assert [s["id"] for s in listed.json()] == [new_id, sid]  # active first, then expired
    assert (await client.get("/api/v2/silences", headers=auth, params={"filter": "job=x"})).json() == []

    assert (await client.delete(f"/api/v2/silence/{new_id}", headers=auth)).status_code == 200
    assert (await client.get(f"/v1/silences/{new_id}", headers=auth)).json()["state"] == "expired"


async def test_status_receivers_and_groups_show_the_tree_in_alertmanagers_terms(client, auth):
    chat, pager, phone = [await _notifier(client, auth, n) for n in ("chat", "pager", "phone")]
    await _routing(client, auth, {
        "route": {"notifier_ids": [chat], "group_by": ["alertname"], "group_wait_seconds": 30,
                  "routes": [{"matchers": ["team=payments"], "notifier_ids": [pager, phone], "continue": True,
                              "mute_time_intervals": ["nights"], "repeat_interval_seconds": 3600},
                             {"matchers": ["team=payments"], "group_by": ["..."]}]},
        "inhibit_rules": [{"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"],
                           "equal": ["cluster"]}],
        "time_intervals": [{"name": "nights", "intervals": [{"times": [{"start_time": "22:00", "end_time": "07:00"}],
                            "weekdays": ["monday:friday"], "location": "Europe/Berlin"}]}],
    })  # fmt: skip
    status = (await client.get("/api/v2/status", headers=auth)).json()
    assert status["cluster"]["status"] == "disabled" and status["cluster"]["peers"] == []
    assert status["versionInfo"]["version"] == "0.25.0" and status["versionInfo"]["revision"].startswith("beacon-")
    datetime.fromisoformat(status["uptime"])
    config = yaml.safe_load(status["config"]["original"])
    assert config["route"] == {
        "receiver": "chat", "group_by": ["alertname"], "group_wait": "30s",
        "routes": [{"receiver": "pager+phone", "matchers": ["team=payments"], "continue": True,
                    "repeat_interval": "1h", "mute_time_intervals": ["nights"]},
                   {"group_by": ["..."], "matchers": ["team=payments"]}],
    }  # fmt: skip
    assert config["receivers"] == [{"name": "chat"}, {"name": "pager+phone"}, {"name": "pager"}, {"name": "phone"}]
    assert config["time_intervals"][0]["time_intervals"][0]["times"] == [
        {"start_time": "22:00", "end_time": "24:00"},
        {"start_time": "00:00", "end_time": "07:00"},
    ]
    assert config["inhibit_rules"][0]["equal"] == ["cluster"]
    receivers = (await client.get("/api/v2/receivers", headers=auth)).json()
    assert receivers == [{"name": "chat"}, {"name": "pager+phone"}, {"name": "pager"}, {"name": "phone"}]

    r = await client.post("/api/v2/alerts", headers=auth, json=[
        {"labels": {"alertname": "Pay", "team": "payments", "instance": "a"}},
        {"labels": {"alertname": "Web", "team": "web"}},
    ])  # fmt: skip
    assert r.status_code == 200
    groups = (await client.get("/api/v2/alerts/groups", headers=auth)).json()
    shape = sorted((g["receiver"]["name"], tuple(sorted(g["labels"].items())), len(g["alerts"])) for g in groups)
    assert shape == [
        ("chat", (("alertname", "Pay"), ("instance", "a"), ("team", "payments")), 1),  # group_by ...
        ("chat", (("alertname", "Web"),), 1),
        ("pager+phone", (("alertname", "Pay"),), 1),
    ]
    pay = next(
        a for a in (await client.get("/api/v2/alerts", headers=auth)).json() if a["labels"]["alertname"] == "Pay"
    )
    assert pay["receivers"] == [{"name": "pager+phone"}, {"name": "chat"}]
    by_receiver = await client.get("/api/v2/alerts", headers=auth, params={"receiver": "pager.*"})
    assert [a["labels"]["alertname"] for a in by_receiver.json()] == ["Pay"]
    only_web = await client.get("/api/v2/alerts/groups", headers=auth, params={"filter": "team=web"})
    assert [g["receiver"]["name"] for g in only_web.json()] == ["chat"]
