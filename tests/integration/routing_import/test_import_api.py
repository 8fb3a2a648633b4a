"""POST /v1/routing/import against the real app and PostgreSQL: a dry run changes nothing, losses refuse the
import unless accepted, nothing is half-stored, a second import changes nothing, a changed file updates what
changed (a webhook keeps its signing secret), secrets are sealed and never shown, and who may import."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import asyncpg
import httpx
import pytest
from litestar.testing import AsyncTestClient
from standardwebhooks.webhooks import Webhook as Receiver

from app.settings import asyncpg_dsn
from tests.helpers import assert_error
from tests.servers import served_app

SECRET = "s3cretT0kenInThePath"
CONFIG = f"""
global:
  resolve_timeout: 2m
route:
  receiver: hook
  group_by: [alertname]
  group_wait: 10s
  routes:
  - matchers: [team=payments]
    receiver: pager
receivers:
- name: hook
  webhook_configs: [{{url: 'http://127.0.0.1:9/{SECRET}', max_alerts: 3}}]
- name: pager
  pagerduty_configs: [{{routing_key: 'pd-{SECRET}'}}]
  slack_configs: [{{api_url: 'https://public.example/services/{SECRET}', channel: '#payments'}}]
"""
YAML = {"Content-Type": "application/yaml"}


@pytest.fixture
async def local(app_client, settings) -> AsyncIterator[AsyncTestClient[Any]]:
    async with app_client(replace(settings, allow_private_destinations=True)) as c:
        yield c


async def post(client, auth, body: str, **params: str):
    return await client.post("/v1/routing/import", params=params, content=body.encode(), headers={**auth, **YAML})


async def state(client, auth) -> tuple[str, list[dict[str, Any]]]:
    routing = (await client.get("/v1/routing", headers=auth)).json()
    notifiers = (await client.get("/v1/notifiers", headers=auth, params={"limit": 100})).json()["data"]
    return routing["version"], notifiers


async def test_dry_run_and_refused_imports_change_nothing(local, auth):
    before = await state(local, auth)
    r = await post(local, auth, CONFIG, dry_run="true")
    assert r.status_code == 200, r.text
    plan = r.json()
    assert plan["object"] == "routing_import" and plan["dry_run"] is True and plan["applied"] is False
    assert plan["version"] == "1" and plan["document_changed"] is True and plan["resolve_timeout_seconds"] == 120
    assert [(n["name"], n["type"], n["action"], n["id"]) for n in plan["notifiers"]] == [
        ("hook", "webhook", "create", None),
        ("pager/pagerduty[0]", "incident_a", "create", None),
        ("pager/slack[0]", "chat_a", "create", None),
    ]
    assert [n["send_resolved"] for n in plan["notifiers"]] == [True, True, False]  # Alertmanager's defaults
    assert plan["document"]["route"]["routes"][0]["notifier_ids"] == ["new:pager/pagerduty[0]", "new:pager/slack[0]"]
    assert "receivers[1].slack_configs[0].channel" in {loss["path"] for loss in plan["losses"]}
    assert SECRET not in r.text  # the plan shows where each notifier sends, never its secrets
    assert await state(local, auth) == before

    err = assert_error(await post(local, auth, CONFIG), 409, "losses_not_accepted")
    assert "receivers[1].slack_configs[0].channel" in err["message"] and SECRET not in err["message"]
    assert await state(local, auth) == before


async def test_import_stores_sealed_and_a_second_import_changes_nothing(local, auth, database_url):
    r = await post(local, auth, CONFIG, accept_losses="true")
    assert r.status_code == 200, r.text
    done = r.json()
    assert (
        done["applied"] is True
        and done["version"] == "2"
        and SECRET not in r.text.replace(done["notifiers"][0]["signing_secret"], "")
    )
    hook = done["notifiers"][0]
    assert hook["signing_secret"].startswith("whsec_")  # shown once, as POST /v1/notifiers shows it
    assert all("signing_secret" not in n for n in done["notifiers"][1:])
    ids = {n["name"]: n["id"] for n in done["notifiers"]}
    routing = (await local.get("/v1/routing", headers=auth)).json()
    assert routing["route"]["notifier_ids"] == [ids["hook"]]
    assert routing["route"]["routes"][0]["notifier_ids"] == [ids["pager/pagerduty[0]"], ids["pager/slack[0]"]]
    assert done["document"] == routing
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        sealed = await conn.fetch("SELECT config_sealed FROM notifiers")
        dump = await conn.fetchval("SELECT document::text FROM routing_config")
    finally:
        await conn.close()
    assert len(sealed) == 3 and all(SECRET.encode() not in row["config_sealed"] for row in sealed)
    assert SECRET not in dump

    before = await state(local, auth)
    r = await post(local, auth, CONFIG, accept_losses="true")
    assert r.status_code == 200, r.text
    again = r.json()
    assert again["applied"] is False and again["document_changed"] is False and again["version"] == "2"
    assert [n["action"] for n in again["notifiers"]] == ["keep", "keep", "keep"]
    assert all("signing_secret" not in n for n in again["notifiers"])
    assert await state(local, auth) == before


async def test_a_changed_file_updates_what_changed_and_the_webhook_keeps_its_secret(local, auth, httpserver):
    httpserver.expect_request(f"/{SECRET}", method="POST").respond_with_data("", status=204)
    config = CONFIG.replace(f"http://127.0.0.1:9/{SECRET}", httpserver.url_for(f"/{SECRET}"))
    first = (await post(local, auth, config, accept_losses="true")).json()
    secret = first["notifiers"][0]["signing_secret"]
    changed = config.replace("max_alerts: 3", "max_alerts: 5").replace("group_wait: 10s", "group_wait: 20s")
    r = await post(local, auth, changed, accept_losses="true")
    assert r.status_code == 200, r.text
    done = r.json()
    assert [n["action"] for n in done["notifiers"]] == ["update", "keep", "keep"]
    assert [n["id"] for n in done["notifiers"]] == [n["id"] for n in first["notifiers"]]
    assert done["version"] == "3" and done["document"]["route"]["group_wait_seconds"] == 20
    sent = await local.post(f"/v1/notifiers/{done['notifiers'][0]['id']}/test", headers=auth)
    assert sent.status_code == 201 and sent.json()["status"] == "succeeded", sent.text
    request = httpserver.log[-1][0]
    assert Receiver(secret).verify(request.get_data(), dict(request.headers))  # still signed with the first secret


async def test_if_match_applies_the_import_to_that_version_only(local, auth):
    r = await local.post(
        "/v1/routing/import",
        params={"accept_losses": "true"},
        content=CONFIG.encode(),
        headers={**auth, **YAML, "If-Match": '"7"'},
    )
    assert_error(r, 412, "version_conflict")
    r = await local.post(
        "/v1/routing/import",
        params={"accept_losses": "true"},
        content=CONFIG.encode(),
        headers={**auth, **YAML, "If-Match": '"1"'},
    )
    assert r.status_code == 200 and r.json()["version"] == "2"


async def test_errors_name_the_place_in_the_yaml_and_store_nothing(client, auth):
    before = await state(client, auth)
    # The test app refuses loopback destinations, as a server does by default.
    err = assert_error(await post(client, auth, CONFIG, accept_losses="true"), 400, "invalid_field")
    assert err["param"] == "receivers[0].webhook_configs[0].url" and SECRET not in err["message"]
    err = assert_error(await post(client, auth, "route:\n  receiver: [x\n"), 400, "invalid_yaml")
    assert "line 3" in err["message"]
    no_key = CONFIG.replace(f"routing_key: 'pd-{SECRET}'", "severity: critical")
    err = assert_error(await post(client, auth, no_key), 400, "invalid_field")
    assert err["param"] == "receivers[1].pagerduty_configs[0]"
    r = await client.post("/v1/routing/import", content=b"{}", headers={**auth, "Content-Type": "application/json"})
    assert_error(r, 415, "unsupported_media_type")
    r = await client.post("/v1/routing/import", content=b"x: " + b"y" * (1024 * 1024), headers={**auth, **YAML})
    assert_error(r, 413, "payload_too_large")
    assert await state(client, auth) == before


async def test_a_notifier_of_the_same_name_but_another_type_is_a_conflict(local, auth):
    r = await local.post(
        "/v1/notifiers",
        headers=auth,
        json={"name": "hook", "type": "chat_a", "config": {"url": "https://public.example/x"}},
    )
    assert r.status_code == 201, r.text
    before = await state(local, auth)
    err = assert_error(await post(local, auth, CONFIG, accept_losses="true"), 409, "conflict")
    assert "'hook'" in err["message"] and "receivers[0].webhook_configs[0]" in err["message"]
    assert await state(local, auth) == before


async def test_who_may_import(local, make_token):
    config = "route: {receiver: none}\nreceivers: [{name: none}]\n"
    for scopes, datasets in (
        (["routing:write"], None),
        (["notifiers:write"], None),
        (["routing:write", "notifiers:write"], ["web"]),
    ):
        token = await make_token(scopes, datasets=datasets)
        r = await post(local, {"Authorization": f"Bearer {token}"}, config, dry_run="true")
        assert_error(r, 403, "insufficient_scope")
    token = await make_token(["routing:write", "notifiers:write"])
    r = await post(local, {"Authorization": f"Bearer {token}"}, config, dry_run="true")
    assert r.status_code == 200, r.text


SEND_RESOLVED_OFF = """
route: {receiver: chat}
receivers:
- name: chat
  slack_configs: [{api_url: 'https://public.example/services/x'}]
- name: hook
  webhook_configs: [{url: 'https://public.example/hook', send_resolved: false}]
"""


async def test_the_plan_carries_send_resolved_and_the_resolve_timeout(local, auth):
    plan = (await post(local, auth, SEND_RESOLVED_OFF + "global: {resolve_timeout: 1m}\n", dry_run="true")).json()
    assert {n["name"]: n["send_resolved"] for n in plan["notifiers"]} == {"chat": False, "hook": False}
    assert plan["resolve_timeout_seconds"] == 60


async def test_send_resolved_is_stored_without_a_loss(local, auth):
    done = (await post(local, auth, SEND_RESOLVED_OFF)).json()  # no losses: no accept_losses needed
    assert done["losses"] == [], done
    for notifier in done["notifiers"]:
        shown = (await local.get(f"/v1/notifiers/{notifier['id']}", headers=auth)).json()
        assert shown["send_resolved"] is False


async def test_resolve_timeout_is_stored_without_a_loss(local, auth):
    config = "global: {resolve_timeout: 1m}\nroute: {receiver: none}\nreceivers: [{name: none}]\n"
    done = (await post(local, auth, config)).json()
    assert done["losses"] == [], done
    routing = (await local.get("/v1/routing", headers=auth)).json()
    assert routing["resolve_timeout_seconds"] == 60


async def test_imports_at_the_same_time_make_each_notifier_once(make_app, settings, auth):
    app = make_app(replace(settings, allow_private_destinations=True))
    async with served_app(app) as base:
        async with httpx.AsyncClient(base_url=base, headers={**auth, **YAML}, timeout=60) as http:
            answers = await asyncio.gather(
                *(http.post("/v1/routing/import", params={"accept_losses": "true"}, content=CONFIG) for _ in range(4))
            )
            assert [r.status_code for r in answers] == [200] * 4, [r.text for r in answers]
            assert sorted(r.json()["notifiers"][0]["action"] for r in answers) == ["create", "keep", "keep", "keep"]
            version, notifiers = await state(http, {})
    assert version == "2" and sorted(n["name"] for n in notifiers) == ["hook", "pager/pagerduty[0]", "pager/slack[0]"]


@pytest.mark.parametrize("blank", ["", " "])
async def test_a_blank_if_match_is_refused_not_taken_for_any_version(local, auth, blank):
    """A header that names no version is a mistake (any version is `*`, or no header): 400 naming it, nothing
    imported. Before, it was a 428 that spoke of PUT, where the document calls the header optional."""
    r = await local.post(
        "/v1/routing/import",
        params={"accept_losses": "true"},
        content=CONFIG.encode(),
        headers={**auth, **YAML, "If-Match": blank},
    )
    assert_error(r, 400, "invalid_parameter")
    assert r.json()["error"]["param"] == "If-Match"
    assert (await local.get("/v1/routing", headers=auth)).json()["version"] == "1"
