"""`beacon alerts`, `beacon silence add|list|expire` and `beacon routing show|test` end to end against
`beacon serve`, and the Python client's alert, silence and routing methods under them."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from beacon_client import BeaconAPIError

REQUEST = re.compile(r"\[status (\d+), request (req_[0-9a-f]+)\]")


@pytest.fixture(scope="module")
def routed(served):
    """A tree that pages payments' critical alerts (and goes on to chat), and alerts of three clusters."""
    with served.client() as beacon:
        pager = beacon.create_notifier("pager", "webhook", {"url": "http://127.0.0.1:9/pager"}).id
        chat = beacon.create_notifier("chat", "webhook", {"url": "http://127.0.0.1:9/chat"}).id
        current = beacon.get_routing()
        beacon.put_routing(
            {
                "route": {
                    "notifier_ids": [chat],
                    "group_by": ["cluster"],
                    "group_wait_seconds": 600,
                    "routes": [
                        {
                            "matchers": ["team=payments", 'severity=~"critical|page"'],
                            "notifier_ids": [pager],
                            "continue": True,
                            "repeat_interval_seconds": 3600,
                        },
                        {"matchers": ["team=payments"], "group_by": ["..."]},
                    ],
                },
                "inhibit_rules": [
                    {
                        "source_matchers": ["alertname=DBDown"],
                        "target_matchers": ["alertname=Latency"],
                        "equal": ["cluster"],
                    }
                ],
            },
            current.version,
        )
        received = beacon.post_alerts(
            [
                {"labels": {"alertname": "DBDown", "cluster": "eu", "team": "payments", "severity": "critical"}},
                {"labels": {"alertname": "Latency", "cluster": "eu", "team": "payments"}},
                {"labels": {"alertname": "DiskFull", "cluster": "us", "instance": "db-1"}},
            ]
        )
    db_down, latency, disk = received.fingerprints
    return {"pager": pager, "chat": chat, "db_down": db_down, "latency": latency, "disk": disk}


def test_alerts_lists_states_and_why(served, routed):
    done = served.beacon("alerts")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["STATE", "SINCE", "ALERT", "LABELS", "WHY", "FINGERPRINT"]
    assert set(lines[1]) == {"-", " "}  # the rule under the header, as every table of the CLI has
    rows = {line.split()[2]: line for line in lines[2:]}
    assert set(rows) == {"DBDown", "Latency", "DiskFull"}
    assert rows["DBDown"].startswith("firing ")
    assert rows["Latency"].startswith("suppressed ") and f"inhibited by {routed['db_down']}" in rows["Latency"]
    assert '{cluster="us", instance="db-1"}' in rows["DiskFull"] and rows["DiskFull"].endswith(routed["disk"])

    eu = served.beacon("alerts", "--filter", 'cluster="eu"', "--filter", "alertname=~D.*", "--format", "json")
    assert eu.returncode == 0, eu.stderr
    found = json.loads(eu.stdout)
    assert [a["labels"]["alertname"] for a in found] == ["DBDown"]
    assert found[0]["state"] == "firing" and found[0]["source"] == {"type": "external", "monitor_id": None}

    suppressed = served.beacon("alerts", "--state", "suppressed")
    assert [line.split()[2] for line in suppressed.stdout.splitlines()[2:]] == ["Latency"]
    assert served.beacon("alerts", "--filter", "alertname=Nothing").stdout == "no alerts\n"

    bad = served.beacon("alerts", "--filter", 'team=~"(unclosed"')
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("error: invalid_parameter: Invalid matcher") and "(param filter)" in bad.stderr
    assert REQUEST.search(bad.stderr)


def test_alert_groups(served, routed):
    done = served.beacon("alerts", "--groups")
    assert done.returncode == 0, done.stderr
    heads = [line for line in done.stdout.splitlines() if line.startswith("route")]
    assert heads == [  # by group key: the route's matchers, then the group's labels; notifiers by name
        'route.routes[0] {cluster="eu"} → pager',
        'route.routes[1] {alertname="DBDown", cluster="eu", severity="critical", team="payments"} → chat',
        'route.routes[1] {alertname="Latency", cluster="eu", team="payments"} → chat',
        'route {cluster="us"} → chat',
    ]
    as_json = json.loads(served.beacon("alerts", "--groups", "--format", "json").stdout)
    with served.client() as beacon:
        groups = beacon.alert_groups()
    assert [g["group_key"] for g in as_json] == [g.group_key for g in groups.data]


def test_silence_add_list_expire(served, routed):
    added = served.beacon(
        "silence", "add", "alertname=DiskFull", 'instance=~"db-.*"', "--duration", "1h30m",
        "--comment", "swap the disk", "--created-by", "ana",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    silence_id = added.stdout.strip()
    assert re.fullmatch(r"sil_[0-9a-f]+", silence_id)
    with served.client() as beacon:
        silence = beacon.get_silence(silence_id)
        assert silence.matchers == ['alertname="DiskFull"', 'instance=~"db-.*"']
        # The end is the command's now + the duration; the start is the server's now, a moment later.
        assert timedelta(minutes=89) < silence.ends_at - silence.starts_at <= timedelta(minutes=90)
        assert (silence.state, silence.comment, silence.created_by) == ("active", "swap the disk", "ana")
        assert beacon.get_alert(routed["disk"]).silenced_by == [silence_id]

    listed = served.beacon("silence", "list", "--state", "active")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith(silence_id))
    assert " active " in row and 'alertname="DiskFull", instance=~"db-.*"' in row and row.endswith("swap the disk")
    alerts = served.beacon("alerts", "--filter", "alertname=DiskFull").stdout
    assert alerts.splitlines()[2].startswith("suppressed ") and f"silenced by {silence_id}" in alerts

    later = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    pending = served.beacon(
        "silence", "add", "cluster=eu", "--starts-at", later.isoformat(), "--ends-at",
        (later + timedelta(hours=2)).isoformat(), "--comment", "tomorrow's maintenance",
    )  # fmt: skip
    assert pending.returncode == 0, pending.stderr
    states = json.loads(served.beacon("silence", "list", "--format", "json").stdout)
    assert {s["id"]: s["state"] for s in states}.items() >= {
        silence_id: "active",
        pending.stdout.strip(): "pending",
    }.items()

    expired = served.beacon("silence", "expire", silence_id, pending.stdout.strip())
    assert expired.returncode == 0, expired.stderr
    assert [line.split()[:2] for line in expired.stdout.splitlines()] == [
        [silence_id, "expired"],
        [pending.stdout.strip(), "expired"],
    ]
    assert silence_id in served.beacon("silence", "list", "--state", "expired").stdout
    assert served.beacon("alerts", "--filter", "alertname=DiskFull").stdout.splitlines()[2].startswith("firing ")
    unknown = served.beacon("silence", "expire", "sil_0000")
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: not_found: ")


def test_silence_add_errors(served):
    bad = served.beacon("silence", "add", "team=payments", 'severity=~"(bad"', "--comment", "x")
    assert bad.returncode == 1 and "error: invalid_field: Invalid matcher" in bad.stderr
    assert "(param matchers[1])" in bad.stderr and REQUEST.search(bad.stderr)
    for args, message in (
        (("team=payments", "--duration", "2 hours", "--comment", "x"), "is not a duration"),
        (("team=payments", "--duration", "1h", "--ends-at", "2030-01-01T00:00:00Z", "--comment", "x"), "not both"),
        (("team=payments", "--ends-at", "tomorrow", "--comment", "x"), "RFC 3339"),
        (("team=payments",), "Missing option '--comment'"),
    ):
        done = served.beacon("silence", "add", *args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
    no_token = served.beacon("silence", "list", BEACON_TOKEN="")
    assert no_token.returncode == 2 and "no API token" in no_token.stderr


def test_routing_show(served, routed):
    done = served.beacon("routing", "show")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("routing version ")
    assert lines[1:7] == [  # notifiers by name (names are unique), not by id
        "route",
        "  → chat; group by cluster; wait 10m, interval 5m, repeat 4h",
        '  route.routes[0]  {team=payments, severity=~"critical|page"}  continue',
        "    → pager; group by cluster*; wait 10m*, interval 5m*, repeat 1h",
        "  route.routes[1]  {team=payments}",
        "    → chat*; group by every label (one alert per group); wait 10m*, interval 5m*, repeat 4h*",
    ]
    # A token that may not read notifiers sees their ids.
    with served.client() as beacon:
        reader = beacon.create_token("routing reader", ["routing:read"]).token
    ids = served.beacon("routing", "show", BEACON_TOKEN=reader).stdout.splitlines()
    assert ids[2] == f"  → {routed['chat']}; group by cluster; wait 10m, interval 5m, repeat 4h"
    assert lines[7] == "inhibit_rules[0]: {alertname=DBDown} firing mutes {alertname=Latency} with equal cluster"

    as_json = served.beacon("routing", "show", "--format", "json")
    doc = json.loads(as_json.stdout)
    with served.client() as beacon:
        assert doc["version"] == beacon.get_routing().version
        # What `show --format json` prints is what `PUT /v1/routing` takes back.
        replaced = beacon.put_routing(doc, doc["version"])
        assert int(replaced.version) == int(doc["version"]) + 1 and replaced.route == doc["route"]
        with pytest.raises(BeaconAPIError) as stale:
            beacon.put_routing(doc, doc["version"])
        assert stale.value.status == 412 and stale.value.code == "version_conflict"


def test_routing_test(served, routed):
    done = served.beacon("routing", "test", "alertname=Latency", "team=payments", 'severity="page"', "cluster=eu")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"fingerprint [0-9a-f]{16}", lines[0])
    assert lines[1] == "route.routes[0] → pager"
    assert (
        lines[2]
        == '  group {}/{team="payments",severity=~"critical|page"}:{cluster="eu"}  (wait 10m, interval 5m, repeat 1h)'
    )
    assert lines[3] == "route.routes[1] → chat"
    assert lines[-4:] == [
        "notifiers: pager, chat",
        "silenced: no",
        f"inhibited: yes, by {routed['db_down']}",
        "muted: no",
    ]
    as_json = json.loads(served.beacon("routing", "test", "alertname=X", "--format", "json").stdout)
    assert [r["route"] for r in as_json["routes"]] == ["route"] and as_json["notifier_ids"] == [routed["chat"]]

    for args, code, message in (
        (("team",), 2, "is not a label such as team=payments"),
        (("a=1", "a=2"), 2, "given twice"),
        (("9lives=x",), 1, "error: invalid_field: Label name '9lives' is not valid"),
    ):
        bad = served.beacon("routing", "test", *args)
        assert bad.returncode == code and message in bad.stderr, (args, bad.stderr)


def test_the_client_reads_and_sets_send_resolved_and_the_resolve_timeout(served):
    with served.client() as beacon:
        quiet = beacon.create_notifier("quiet", "webhook", {"url": "http://127.0.0.1:9/q"}, send_resolved=False)
        assert quiet.send_resolved is False
        assert beacon.update_notifier(quiet.id, send_resolved=True).send_resolved is True
        assert beacon.get_notifier(quiet.id).send_resolved is True
        routing = beacon.get_routing()
        assert routing.resolve_timeout_seconds == 300
        assert beacon.put_routing({**routing.document(), "resolve_timeout_seconds": 60}, version=routing.version)
        assert beacon.get_routing().resolve_timeout_seconds == 60
        beacon.delete_notifier(quiet.id)
