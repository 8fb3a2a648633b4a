"""Alertmanager's own configurations imported: `doc/examples/simple.yml` and the configuration of each of its
acceptance tests (tests/fixtures/alertmanager, with their licence note), each first checked by Debian's
`amtool check-config`: what it accepts imports with exactly the losses listed here, what it refuses Beacon
refuses too."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest
import yaml

from app.errors import BeaconError
from app.notifiers.service import build_notifier_env
from app.routing.importing.draft import read_config
from app.routing.importing.plan import check
from app.routing.importing.yamltext import load
from app.settings import Settings
from tests.integration.amapi.conftest import binary
from tests.offline_dns import offline_resolve

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"
WHOLE_SECONDS = "becomes 1 s: Beacon's timers are whole seconds"


def amtool_accepts(path: Path) -> bool:
    done = subprocess.run([binary("amtool"), "check-config", str(path)], capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and "SUCCESS" in done.stdout


@pytest.fixture
def notifier_env():
    """Notifier checks as the service runs them (no database needed): loopback destinations allowed, as the
    acceptance tests' webhooks are local."""
    env = build_notifier_env(Settings(secret_key="examples", allow_private_destinations=True))
    return replace(env, guard=env.guard.with_resolver(offline_resolve))


# file -> (notifiers: name -> (type, send_resolved), losses other than those the pipeline branch removes)
ACCEPTANCE = {
    "send_test-TestMergeAlerts.yml": (
        {"default": ("webhook", True)},
        {"route.repeat_interval": f"1ms {WHOLE_SECONDS}"},
    ),
    "send_test-TestRepeat.yml": ({"default": ("webhook", True)}, {"route.repeat_interval": f"1ms {WHOLE_SECONDS}"}),
    "send_test-TestRetry.yml": (
        {"default/webhook[0]": ("webhook", True), "default/webhook[1]": ("webhook", True)},
        {},
    ),
    "send_test-TestBatching.yml": (
        {"default": ("webhook", True)},
        {"route.repeat_interval": "4900ms becomes 5 s: Beacon's timers are whole seconds"},
    ),
    "send_test-TestResolved.yml": ({"default": ("webhook", True)}, {}),
    "send_test-TestResolvedFilter.yml": (
        {"default/webhook[0]": ("webhook", True), "default/webhook[1]": ("webhook", False)},
        {},
    ),
    "send_test-TestReload.yml": ({"default": ("webhook", True)}, {}),
    "inhibit_test-TestInhibiting.yml": (
        {"default": ("webhook", True)},
        {},
    ),
    "silence_test-TestSilencing.yml": (
        {"default": ("webhook", True)},
        {"route.repeat_interval": f"1ms {WHOLE_SECONDS}"},
    ),
    "api_test-TestAlertGetReturnsCurrentAlertStatus.yml": ({"default": ("webhook", True)}, {}),
    "utf8_test-TestAddUTF8Alerts.yml": ({"default": ("webhook", True)}, {}),
    "cluster_test-TestClusterDeduplication.yml": ({"default": ("webhook", True)}, {}),
    "cluster_test-TestClusterVSInstance.yml": ({"default": ("webhook", True)}, {}),
    "web_test-TestWebWithPrefix.yml": ({}, {}),
}


def test_every_acceptance_configuration_has_a_case():
    assert {p.name for p in (FIXTURES / "acceptance").glob("*.yml")} == {
        *ACCEPTANCE,
        "utf8_test-TestSendAlertsToUTF8Route.yml",
    }


@pytest.mark.parametrize("name", sorted(ACCEPTANCE))
async def test_acceptance_configuration_imports_with_exactly_these_losses(name, notifier_env):
    path = FIXTURES / "acceptance" / name
    assert amtool_accepts(path)
    notifiers, expected = ACCEPTANCE[name]
    draft = read_config(load(path.read_bytes()))
    checked, losses = await check(notifier_env, draft)
    assert {c.draft.name: (c.adapter.type, c.draft.send_resolved) for c in checked} == notifiers
    assert {c.config.to_dict()["format"] for c in checked} <= {"alertmanager"}  # Alertmanager's webhook body
    assert {loss.path: loss.reason for loss in losses} == expected
    config = yaml.safe_load(path.read_text())
    route = msgspec.to_builtins(draft.document)["route"]
    assert route["notifier_ids"] == list(notifiers)
    if config["route"].get("group_by"):
        assert route["group_by"] == config["route"]["group_by"]
    else:
        assert "group_by" not in route  # `group_by: []`: nothing set (the root groups all alerts in one)
    assert route["group_wait_seconds"] == 1
    rules = config.get("inhibit_rules") or []
    assert len(draft.document.inhibit_rules) == len(rules)
    for rule, imported in zip(rules, draft.document.inhibit_rules, strict=True):
        assert imported.equal == rule["equal"]
        assert imported.source_matchers == [f'{k}="{v}"' for k, v in rule["source_match"].items()]


def test_a_utf8_label_name_is_refused_by_both():
    path = FIXTURES / "acceptance" / "utf8_test-TestSendAlertsToUTF8Route.yml"
    assert not amtool_accepts(path)  # Alertmanager 0.25 reads classic label names only, as Beacon does
    with pytest.raises(BeaconError) as refused:
        read_config(load(path.read_bytes()))
    assert refused.value.param == "route.routes[0].matchers[0]"


def _without_hipchat(source: Path, target: Path) -> Path:
    """simple.yml as Alertmanager 0.25 reads it: HipChat (since removed from Alertmanager) left out."""
    config = yaml.safe_load(source.read_text())
    for key in ("hipchat_auth_token", "hipchat_api_url"):
        del config["global"][key]
    config["receivers"] = [r for r in config["receivers"] if "hipchat_configs" not in r]
    target.write_text(yaml.safe_dump(config, sort_keys=False))
    return target


SIMPLE_NOTIFIERS = {
    "team-X-mails": "email",
    "team-X-pager/email[0]": "email",
    "team-X-pager/pagerduty[0]": "incident_a",
    "team-Y-mails": "email",
    "team-Y-pager": "incident_a",
    "team-DB-pager": "incident_a",
}


async def test_simple_example_as_it_was_written_lists_hipchat(notifier_env):
    source = FIXTURES / "simple.yml"
    assert not amtool_accepts(source)  # HipChat is gone from Alertmanager 0.25 as well
    draft = read_config(load(source.read_bytes()))
    checked, losses = await check(notifier_env, draft)
    assert {c.draft.name: c.adapter.type for c in checked} == SIMPLE_NOTIFIERS
    lost = {loss.path: loss.reason for loss in losses}
    assert lost["receivers[5].hipchat_configs[0]"] == (
        "Beacon has no notifier type for hipchat: this integration is not imported"
    )
    assert lost["global.hipchat_auth_token"] == lost["global.hipchat_api_url"]
    assert lost["global.hipchat_auth_token"].startswith("not a field Alertmanager knows")


async def test_simple_example_imports_and_a_second_import_changes_nothing(client, auth, tmp_path):
    source = _without_hipchat(FIXTURES / "simple.yml", tmp_path / "simple.yml")
    assert amtool_accepts(source)
    headers = {**auth, "Content-Type": "application/yaml"}
    r = await client.post(
        "/v1/routing/import", params={"accept_losses": "true"}, content=source.read_bytes(), headers=headers
    )
    assert r.status_code == 200, r.text
    first = r.json()
    assert {n["name"]: (n["type"], n["action"]) for n in first["notifiers"]} == {
        name: (type_, "create") for name, type_ in SIMPLE_NOTIFIERS.items()
    }
    lost = {loss["path"]: loss["reason"] for loss in first["losses"]}
    assert set(lost) == {
        "templates[0]",
        "global.smtp_smarthost",
        "global.smtp_from",
        "global.smtp_auth_username",
        "global.smtp_auth_password",
        "receivers[1].pagerduty_configs[0].service_key",
        "receivers[3].pagerduty_configs[0].service_key",
        "receivers[4].pagerduty_configs[0].service_key",
    }
    ids = {n["name"]: n["id"] for n in first["notifiers"]}
    stored = (await client.get("/v1/routing", headers=auth)).json()
    assert stored["version"] == first["version"] == "2"
    database = stored["route"]["routes"][2]
    assert database["matchers"] == ['service="database"'] and database["notifier_ids"] == [ids["team-DB-pager"]]
    assert database["group_by"] == ["alertname", "cluster", "database"]
    owner_x = database["routes"][0]
    assert owner_x["continue"] is True
    assert owner_x["notifier_ids"] == [ids["team-X-pager/email[0]"], ids["team-X-pager/pagerduty[0]"]]
    assert stored["route"]["repeat_interval_seconds"] == 3 * 3600
    assert stored["inhibit_rules"] == [
        {"source_matchers": ['severity="critical"'], "target_matchers": ['severity="warning"'],
         "equal": ["alertname", "cluster", "service"]}
    ]  # fmt: skip
    listed = (await client.get("/v1/notifiers", headers=auth, params={"limit": 100})).json()["data"]
    before = {n["id"]: n["updated_at"] for n in listed}
    assert set(before) == set(ids.values())

    r = await client.post(
        "/v1/routing/import", params={"accept_losses": "true"}, content=source.read_bytes(), headers=headers
    )
    assert r.status_code == 200, r.text
    again = r.json()
    assert again["applied"] is False and again["document_changed"] is False and again["version"] == "2"
    assert {n["name"]: (n["id"], n["action"]) for n in again["notifiers"]} == {k: (v, "keep") for k, v in ids.items()}
    listed = (await client.get("/v1/notifiers", headers=auth, params={"limit": 100})).json()["data"]
    assert {n["id"]: n["updated_at"] for n in listed} == before
    assert (await client.get("/v1/routing", headers=auth)).json() == stored
