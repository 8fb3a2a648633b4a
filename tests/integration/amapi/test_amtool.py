"""amtool 0.25, the operator's tool, against `beacon serve` as it would be run against Alertmanager."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.integration.amapi.conftest import Amtool, Beacon


def _alerts(amtool: Amtool, *args: str) -> dict[str, dict[str, Any]]:
    """`alert query -o json`, by alertname."""
    return {a["labels"]["alertname"]: a for a in json.loads(amtool("alert", "query", "-o", "json", *args).stdout)}


async def _payments_tree(beacon: Beacon, hook: str) -> dict[str, str]:
    ids = {name: await beacon.notifier(name, hook) for name in ("chat", "pager")}
    await beacon.put_routing({
        "route": {"notifier_ids": [ids["chat"]], "group_by": ["alertname"], "group_wait_seconds": 1,
                  "group_interval_seconds": 1, "repeat_interval_seconds": 3600,
                  "routes": [{"matchers": ["team=payments"], "notifier_ids": [ids["pager"]]}]},
        "inhibit_rules": [{"source_matchers": ["severity=critical"], "target_matchers": ["severity=warning"],
                           "equal": ["cluster"]}],
    })  # fmt: skip
    return ids


async def test_alerts_added_and_queried_silenced_inhibited_and_by_matchers(beacon: Beacon, amtool: Amtool, httpserver):
    await _payments_tree(beacon, httpserver.url_for("/hook"))
    amtool("alert", "add", "alertname=DiskFull", "severity=critical", "cluster=c1", "team=payments",
           "--annotation=summary=disk full")  # fmt: skip
    amtool("alert", "add", "alertname=Latency", "severity=warning", "cluster=c1")
    amtool("alert", "add", "alertname=Cpu", "severity=warning", "cluster=c2")

    # Stored as external alerts, as /v1 shows them.
    v1 = {a["labels"]["alertname"]: a for a in (await beacon.http.get("/v1/alerts")).json()["data"]}
    assert v1["DiskFull"]["source"]["type"] == "external" and v1["DiskFull"]["annotations"] == {"summary": "disk full"}

    # Without --inhibited, the inhibited alert is left out (as Alertmanager does).
    shown = _alerts(amtool)
    assert set(shown) == {"DiskFull", "Cpu"}
    assert shown["DiskFull"]["status"] == {"state": "active", "silencedBy": [], "inhibitedBy": []}
    assert [r["name"] for r in shown["DiskFull"]["receivers"]] == ["pager"]
    assert [r["name"] for r in shown["Cpu"]["receivers"]] == ["chat"]
    # amtool's flags choose the states shown: --inhibited alone shows only the inhibited alerts.
    assert set(_alerts(amtool, "--inhibited")) == {"Latency"}
    with_inhibited = _alerts(amtool, "--active", "--inhibited")
    assert set(with_inhibited) == {"DiskFull", "Latency", "Cpu"}
    assert with_inhibited["Latency"]["status"]["state"] == "suppressed"
    assert with_inhibited["Latency"]["status"]["inhibitedBy"] == [shown["DiskFull"]["fingerprint"]]

    # Matchers, and the simple output's columns.
    assert set(_alerts(amtool, "--active", "--inhibited", "severity=warning")) == {"Latency", "Cpu"}
    assert set(_alerts(amtool, "-a", "-i", 'alertname=~"Disk.*|Cpu"', "cluster!=c2")) == {"DiskFull"}
    table = amtool("alert", "query", "DiskFull").stdout
    assert "DiskFull" in table and "disk full" in table and "active" in table
    assert set(_alerts(amtool, "--receiver=pager")) == {"DiskFull"}

    # A silence hides DiskFull from the default query; --silenced shows it, silenced by that silence.
    silence_id = amtool("silence", "add", "alertname=DiskFull", "--duration=2h", "--comment=disk swap",
                        "--author=ops").stdout.strip()  # fmt: skip
    assert silence_id.startswith("sil_")
    assert set(_alerts(amtool)) == {"Cpu"}
    silenced = _alerts(amtool, "--silenced", "alertname=DiskFull")
    assert silenced["DiskFull"]["status"]["state"] == "suppressed"
    assert silenced["DiskFull"]["status"]["silencedBy"] == [silence_id]


async def test_silences_added_queried_expired_and_imported(beacon: Beacon, amtool: Amtool, tmp_path: Path):
    first = amtool("silence", "add", "alertname=Down", 'instance=~"db-.*"', "--duration=2h",
                   "--comment=db maintenance", "--author=alice").stdout.strip()  # fmt: skip
    second = amtool("silence", "add", "job=batch", "--duration=30m", "--comment=batch window",
                    "--author=bob").stdout.strip()  # fmt: skip
    assert first.startswith("sil_") and second.startswith("sil_") and first != second

    # -q: the ids, the one ending first first (Alertmanager's order).
    assert amtool("silence", "query", "-q").stdout.split() == [second, first]
    table = amtool("silence", "query").stdout
    assert "db maintenance" in table and "alice" in table and 'instance=~"db-.*"' in table
    assert amtool("silence", "query", "-q", "alertname=Down").stdout.split() == [first]
    exported = amtool("silence", "query", "-o", "json").stdout
    as_json = {s["id"]: s for s in json.loads(exported)}
    assert as_json[first]["createdBy"] == "alice" and as_json[first]["status"] == {"state": "active"}
    assert {(m["name"], m["value"], m["isRegex"], m["isEqual"]) for m in as_json[first]["matchers"]} == {
        ("alertname", "Down", False, True),
        ("instance", "db-.*", True, True),
    }

    # Expire both: gone from the query, kept as expired (as /v1 shows).
    amtool("silence", "expire", first, second)
    assert amtool("silence", "query", "-q").stdout.split() == []
    assert (await beacon.http.get(f"/v1/silences/{first}")).json()["state"] == "expired"
    assert set(amtool("silence", "query", "--expired", "-q").stdout.split()) == {first, second}

    # Import the export: expired silences cannot come back in place, so each is created anew (Alertmanager's
    # rule), with the same matchers, comment and author.
    export = tmp_path / "silences.json"
    export.write_text(exported)
    amtool("silence", "import", str(export))
    again = json.loads(amtool("silence", "query", "-o", "json").stdout)
    assert len(again) == 2 and {s["id"] for s in again}.isdisjoint({first, second})
    assert {(s["comment"], s["createdBy"]) for s in again} == {("db maintenance", "alice"), ("batch window", "bob")}

    # Import again while they are active: updated in place, no duplicates.
    export.write_text(json.dumps(again))
    amtool("silence", "import", str(export))
    assert sorted(amtool("silence", "query", "-q").stdout.split()) == sorted(s["id"] for s in again)

    # amtool's own `silence update`: a new end and comment, the same silence.
    kept = again[0]["id"]
    updated = amtool("silence", "update", kept, "--duration=3h", "--comment=extended").stdout
    assert kept in updated and "extended" in updated  # (its -q prints a Go pointer in 0.25, whatever the server)
    assert (await beacon.http.get(f"/v1/silences/{kept}")).json()["comment"] == "extended"

    # What Beacon refuses, amtool prints in Beacon's words (a 400 whose body is the message).
    everything = amtool("silence", "add", 'job=~".*"', "--comment=all", check=False)
    assert everything.returncode != 0 and "would match every alert" in everything.stderr

    # An unknown id: amtool says so, as it does against Alertmanager.
    unknown = amtool("silence", "expire", "sil_000000000000000000000000", check=False)
    assert unknown.returncode != 0 and "silence sil_000000000000000000000000 not found" in unknown.stderr


async def test_config_routes_cluster_and_check_config(beacon: Beacon, amtool: Amtool, httpserver, tmp_path: Path):
    await _payments_tree(beacon, httpserver.url_for("/hook"))
    cluster = amtool("cluster", "show").stdout
    assert "Cluster Status:" in cluster and "disabled" in cluster

    shown = amtool("config", "show").stdout
    assert "receiver: chat" in shown and "team=payments" in shown
    config = tmp_path / "alertmanager.yml"
    config.write_text(shown)
    checked = amtool("check-config", str(config))  # Alertmanager's own loader accepts what /api/v2/status says
    assert "SUCCESS" in checked.stdout and "1 inhibit rules" in checked.stdout

    routes = amtool("config", "routes").stdout
    assert "receiver: chat" in routes and "receiver: pager" in routes
    assert amtool("config", "routes", "test", "team=payments", "alertname=X").stdout.strip() == "pager"
    assert amtool("config", "routes", "test", "team=web").stdout.strip() == "chat"
