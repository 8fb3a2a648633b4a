"""Prometheus 2.42 as the alert source: `alerting.alertmanagers` pointing at `beacon serve` (`api_version: v2`,
a Beacon token as its `authorization`), a rule that fires every second; then the rule file changed and
Prometheus reloaded, and the resolved notification follows. The same Prometheus scrapes Beacon's /metrics with
BEACON_METRICS_TOKEN as its scrape `authorization`."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.integration.amapi.conftest import Beacon, binary, wait_for
from tests.servers import free_port

RULE = """groups:
- name: beacon
  interval: 1s
  rules:
  - alert: AlwaysFiring
    expr: {expr}
    labels: {{severity: page, team: sre}}
    annotations: {{summary: "vector(1) is above zero"}}
"""


def prometheus_config(beacon: Beacon) -> str:
    host = beacon.url.removeprefix("http://")
    return f"""global:
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
  - api_version: v2
    authorization:
      type: Bearer
      credentials: {beacon.token}
    static_configs:
    - targets: ['{host}']
scrape_configs:
- job_name: beacon
  scrape_interval: 1s
  authorization:
    type: Bearer
    credentials: {beacon.metrics_token}
  static_configs:
  - targets: ['{host}']
"""


def start_prometheus(directory: Path, port: int) -> subprocess.Popen[bytes]:
    """Prometheus on `port`, its log in prometheus.log. `--rules.alert.resend-delay=1s`: its first
    notifications can go out before it has discovered its Alertmanagers and are dropped; it sends firing alerts
    again every resend-delay (default: a minute)."""
    with (directory / "prometheus.log").open("w") as log:
        return subprocess.Popen(
            [binary("prometheus"), f"--config.file={directory / 'prometheus.yml'}",
             f"--storage.tsdb.path={directory / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}",
             "--rules.alert.resend-delay=1s"],
            cwd=directory, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip


@pytest.mark.long
async def test_prometheus_alert_is_routed_and_resolves_after_reload(beacon: Beacon, httpserver, tmp_path: Path):
    hook = await beacon.notifier("hook", httpserver.url_for("/hook"))
    await beacon.put_routing({"route": {"notifier_ids": [hook], "group_by": ["alertname"], "group_wait_seconds": 1,
                                        "group_interval_seconds": 1, "repeat_interval_seconds": 3600}})  # fmt: skip
    (tmp_path / "prometheus.yml").write_text(prometheus_config(beacon))
    rules = tmp_path / "rules.yml"
    rules.write_text(RULE.format(expr="vector(1) > 0"))
    port = free_port()
    prometheus = start_prometheus(tmp_path, port)

    async def alert() -> dict | None:
        found = (await beacon.http.get("/v1/alerts", params={"filter": "alertname=AlwaysFiring"})).json()["data"]
        return found[0] if found else None

    async def notified(reason: str) -> bool:
        return any(d["reason"] == reason for d in beacon.received)

    try:
        await wait_for(lambda: _is(alert(), lambda a: a is not None and a["state"] == "firing"), 60, "the alert")
        got = await alert()
        assert got is not None
        assert got["labels"] == {"alertname": "AlwaysFiring", "severity": "page", "team": "sre"}
        assert got["annotations"] == {"summary": "vector(1) is above zero"}
        assert got["source"] == {"type": "external"}
        assert got["generator_url"].endswith("/graph?g0.expr=vector%281%29+%3E+0&g0.tab=1")

        await wait_for(lambda: notified("first"), 30, "the first notification")
        first = next(d for d in beacon.received if d["reason"] == "first")
        assert [a["labels"]["alertname"] for a in first["alerts"]] == ["AlwaysFiring"]
        assert first["alerts"][0]["generator_url"] == got["generator_url"]

        # The rule stops firing: change the file, reload (SIGHUP), and Prometheus sends it resolved.
        rules.write_text(RULE.format(expr="vector(1) < 0"))
        prometheus.send_signal(signal.SIGHUP)
        await wait_for(lambda: notified("resolved"), 30, "the resolved notification")
        resolved = next(d for d in beacon.received if d["reason"] == "resolved")
        assert [a["status"] for a in resolved["alerts"]] == ["resolved"]
        assert (await alert() or {}).get("state") == "resolved"
        assert [d["reason"] for d in beacon.received] == ["first", "resolved"]  # once each

        async def scraped() -> bool:
            query = {"query": 'beacon_notifications_total{job="beacon"}'}
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as api:
                found = (await api.get("/api/v1/query", params=query)).json()["data"]["result"]
            return any(r["metric"].get("reason") == "resolved" for r in found)

        await wait_for(scraped, 30, "Prometheus to scrape /metrics with the metrics token")
    finally:
        prometheus.terminate()
        await asyncio.to_thread(prometheus.wait, 20)
    # Loaded at start and again on SIGHUP: the resolution followed the reload.
    assert (tmp_path / "prometheus.log").read_text().count("Completed loading of configuration file") == 2


async def _is(value, check) -> bool:
    return bool(check(await value))
