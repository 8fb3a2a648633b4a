"""Beacon notifies as Alertmanager does: Debian's `prometheus-alertmanager` and `beacon serve`, started from the
same configuration (imported into Beacon with `beacon routing import`), get the same alert stream through
`/api/v2/alerts`; one local receiver collects every notification of both, compared per group, times within
±1 s (plus the delay the machine adds to Alertmanager itself: differential.py).

Every scenario runs at once, against one Alertmanager and one Beacon, each under its own `scenario` label and
route, with 1-2 s timers; the run lasts as long as the longest (repeat_interval).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import _with_database
from tests.integration.amapi.conftest import binary
from tests.integration.routing_import.differential import (
    TOLERANCE,
    Alert,
    Alertmanager,
    Groups,
    Received,
    Receiver,
    Step,
    by_group,
    differences,
    machine_delay,
    run_stream,
)
from tests.servers import BEACON, Server, clean_env, free_port

pytestmark = pytest.mark.xdist_group("differential")  # one Alertmanager and one Beacon for the whole module

REPEAT = 6  # the repeat scenario's repeat_interval: the first notification at 1 s, one repeat before END
END = 10.0  # seconds the notifications are collected for

# The root's timers: a group notifies 1 s after its first alert, then every 2 s at most. The stream's later posts
# fall midway between those flushes (at 2, 4 s), a second from each, so that both sides see them in the same one.
CONFIG = f"""
route:
  receiver: unrouted
  group_by: [alertname]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
  routes:
  - matchers: [scenario="grouping"]
    receiver: grouping
    group_wait: 2s
  - matchers: [scenario="resolve_in_wait"]
    receiver: resolve-in-wait
    group_wait: 2s
  - matchers: [scenario="resolve_in_wait_listed"]
    receiver: resolve-in-wait-listed
    group_wait: 2s
  - matchers: [scenario="send_resolved_on"]
    receiver: resolved-on
  - matchers: [scenario="send_resolved_off"]
    receiver: resolved-off
  - matchers: [scenario="repeat"]
    receiver: repeat
    group_interval: 1s
    repeat_interval: {REPEAT}s
  - matchers: ['scenario="continue"', 'severity="page"']
    receiver: continue-pager
    continue: true
  - matchers: [scenario="continue"]
    receiver: continue-chat
  - matchers: [scenario="nested"]
    receiver: nested-parent
    group_by: [alertname, team]
    group_interval: 2s
    routes:
    - matchers: [severity="page"]
      receiver: nested-child
    - match: {{severity: info}}
      receiver: nested-info
      group_by: []
  - matchers: [scenario="group_all"]
    receiver: group-all
    group_by: ['...']
  - matchers: [scenario="inhibit"]
    receiver: inhibit
  - matchers: [scenario="silence"]
    receiver: silence
  - matchers: [scenario="silence_resolve"]
    receiver: silence-resolve
  - matchers: [scenario="old_alert"]
    receiver: old-alert
    group_wait: 3s
  - matchers: [scenario="empty_label"]
    receiver: empty-label
  - matchers: [scenario="repost"]
    receiver: repost

inhibit_rules:
- source_matchers: [scenario="inhibit", alertname="JobDown"]
  target_matchers: [scenario="inhibit", alertname="InstanceDown"]
  equal: [zone]

receivers:
- name: unrouted
  webhook_configs: [{{url: 'HOOK/unrouted'}}]
"""
RECEIVERS = [
    "grouping", "resolve-in-wait", "resolve-in-wait-listed", "resolved-on", "repeat", "continue-pager",
    "continue-chat", "nested-parent", "nested-child", "nested-info", "group-all", "inhibit", "silence",
    "silence-resolve", "old-alert", "empty-label", "repost",
]  # fmt: skip
CONFIG += "".join(f"- name: {r}\n  webhook_configs: [{{url: 'HOOK/{r}'}}]\n" for r in RECEIVERS)
CONFIG += "- name: resolved-off\n  webhook_configs: [{url: 'HOOK/resolved-off', send_resolved: false}]\n"


def a(scenario: str, alertname: str, *, starts: float | None = None, ends: float | None = None, **labels: str) -> Alert:
    return Alert({"scenario": scenario, "alertname": alertname, **labels}, starts=starts, ends=ends)


STREAM = [
    # grouping: two groups; an alert joins within group_wait, another after the first notification. Its own
    # group_wait (2 s) leaves the joining alert 1.6 s before the flush: the step before it waits for both sides'
    # answers, which a loaded machine once took 0.93 s to give (the alert then went out just as one side flushed).
    Step(0.0, [a("grouping", "G", instance="a"), a("grouping", "G", instance="b"), a("grouping", "H", instance="a")]),
    Step(0.4, [a("grouping", "G", instance="c")]),
    Step(3.0, [a("grouping", "G", instance="d")]),
    # resolve within group_wait (2 s): never sent (K is the control that is).
    Step(0.0, [a("resolve_in_wait", "R"), a("resolve_in_wait", "K")]),
    Step(0.8, [a("resolve_in_wait", "R", ends=0.0)]),
    # ... with another alert of its group firing: Alertmanager lists it as resolved in the first notification.
    Step(0.0, [a("resolve_in_wait_listed", "F", instance="a"), a("resolve_in_wait_listed", "F", instance="b")]),
    Step(0.8, [a("resolve_in_wait_listed", "F", instance="b", ends=0.0)]),
    # send_resolved on and off: a firing notification, then the resolve.
    Step(0.0, [a("send_resolved_on", "S"), a("send_resolved_off", "S")]),
    Step(2.0, [a("send_resolved_on", "S", ends=0.0), a("send_resolved_off", "S", ends=0.0)]),
    # repeat_interval: the first notification, and one more once repeat_interval has passed. Alertmanager checks it
    # at each group_interval against the time it logged its last message (just after that flush), so it repeats
    # at repeat_interval or one group_interval later, as its timer drifts: with a 1 s group_interval, both are
    # within the tolerance.
    Step(0.0, [a("repeat", "P")]),
    # continue: the paging route goes on to the chat route.
    Step(0.0, [a("continue", "C", severity="page"), a("continue", "D", severity="info")]),
    # nested routes inherit group_by (group_by: [] included) and timers; the 2nd page joins the child's group later.
    Step(
        0.0,
        [
            a("nested", "N", team="a", severity="page"),
            a("nested", "N", team="b", severity="page"),
            a("nested", "N", team="a", severity="warn"),
            a("nested", "N", team="a", severity="info"),
        ],
    ),
    Step(2.0, [a("nested", "N", team="a", severity="page", instance="2")]),
    # group_by: ['...']: one group per alert.
    Step(0.0, [a("group_all", "A", instance="1"), a("group_all", "A", instance="2")]),
    # inhibition with equal: JobDown mutes InstanceDown of its zone only, until it resolves.
    Step(0.0, [a("inhibit", "InstanceDown", zone="aa"), a("inhibit", "InstanceDown", zone="ab")]),
    Step(0.0, [a("inhibit", "JobDown", zone="aa")]),
    Step(2.0, [a("inhibit", "JobDown", zone="aa", ends=0.0)]),
    # a silence made before the alerts: Quiet is never sent, Loud is.
    Step(0.0, silence={"scenario": "silence", "alertname": "Quiet"}),
    Step(0.0, [a("silence", "Quiet"), a("silence", "Loud")]),
    # a silence made after the first notification: the resolve of the silenced alert is not sent either.
    Step(0.0, [a("silence_resolve", "X")]),
    Step(2.0, silence={"scenario": "silence_resolve", "alertname": "X"}),
    Step(4.0, [a("silence_resolve", "X", ends=0.0)]),
    # an alert that started long before it arrives: its group_wait (3 s) has passed already.
    Step(0.0, [a("old_alert", "O", starts=-10.0)]),
    # a label with an empty value is no label.
    Step(0.0, [a("empty_label", "E", empty="")]),
    # the same alert posted again: the earlier start stays, and of two resolves the later end.
    Step(0.0, [a("repost", "M")]),
    Step(0.3, [a("repost", "M", starts=-0.8)]),
    Step(1.8, [a("repost", "M", ends=0.0)]),
    Step(2.2, [a("repost", "M", ends=-0.6)]),
]
# Groups whose first notification is due 1 s after the stream starts: how late Alertmanager sends them is the
# delay the machine adds (see differential.machine_delay).
DUE_AT_ONE = [
    ("/continue-pager", "alertname=C"), ("/continue-chat", "alertname=D"),
    ("/group-all", "alertname=A,instance=1,scenario=group_all"), ("/silence", "alertname=Loud"),
    ("/resolved-on", "alertname=S"), ("/nested-info", "alertname=N,team=a"), ("/empty-label", "alertname=E"),
]  # fmt: skip


@dataclass
class Run:
    am: list[Received]
    beacon: list[Received]
    tolerance: float
    imported: subprocess.CompletedProcess[str]
    again: subprocess.CompletedProcess[str]
    server: Server
    env: dict[str, str]
    am_log: list[str]  # Alertmanager's own log (warnings and errors): why it did not send, when it did not


@pytest.fixture(scope="module")
def run(clones, pg_server_url, tmp_path_factory) -> Iterator[Run]:
    binary("prometheus-alertmanager")
    amtool = binary("amtool")
    work = tmp_path_factory.mktemp("differential")
    receiver = Receiver()
    config = work / "alertmanager.yml"
    config.write_text(CONFIG.replace("HOOK", receiver.url))
    checked = subprocess.run([amtool, "check-config", str(config)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    database = clones.take()
    env = clean_env(
        BEACON_DATABASE_URL=_with_database(pg_server_url, database),
        BEACON_DATA_DIR=str(work / "beacon"),
        BEACON_SECRET_KEY="differential",
        BEACON_ALLOW_PRIVATE_DESTINATIONS="true",
        BEACON_ROUTING_TICK_SECONDS="0.2",
        BEACON_DELIVERY_POLL_SECONDS="0.2",
    )
    am = Alertmanager(config, work / "am")
    server = Server(env, free_port())
    try:
        am.wait_ready()
        server.wait_ready(120)
        assert server.token, "\n".join(server.lines)
        cli = {**env, "BEACON_URL": f"http://127.0.0.1:{server.port}", "BEACON_TOKEN": server.token}
        command = [BEACON, "routing", "import", str(config), "--accept-losses"]
        imported = subprocess.run(command, env=cli, capture_output=True, text=True, timeout=120)
        assert imported.returncode == 0, imported.stdout + imported.stderr
        again = subprocess.run(command, env=cli, capture_output=True, text=True, timeout=120)
        targets = [(am.url, {}), (f"http://127.0.0.1:{server.port}", {"Authorization": f"Bearer {server.token}"})]
        asyncio.run(run_stream(STREAM, targets, receiver))
        time.sleep(max(0.0, receiver.start + END - time.monotonic()))
        got = list(receiver.got)

        am_got, beacon_got = [r for r in got if not r.beacon], [r for r in got if r.beacon]
        sent = {}
        for name in {path.lstrip("/") for path, _ in DUE_AT_ONE}:
            sent.update(by_group(am_got, beacon=False, path=f"/{name}"))
        tolerance = TOLERANCE + machine_delay(sent, dict.fromkeys(DUE_AT_ONE, 1.0))
        yield Run(am_got, beacon_got, tolerance, imported, again, server, cli, am.log)
    finally:
        server.stop()
        am.stop()
        receiver.close()
        clones.give_back(database)


def groups(run: Run, receivers: list[str]) -> tuple[Groups, Groups]:
    am: Groups = {}
    beacon: Groups = {}
    for name in receivers:
        am.update(by_group(run.am, beacon=False, path=f"/{name}"))
        beacon.update(by_group(run.beacon, beacon=True, path=f"/{name}"))
    return am, beacon


def _received(run: Run) -> str:
    """What the receiver got from each side and when the last arrived: tells a side that stopped sending from a
    receiver that stopped answering."""
    parts = []
    for name, got in (("Alertmanager", run.am), ("Beacon", run.beacon)):
        last = max((r.at for r in got), default=None)
        parts.append(f"{name} {len(got)} (the last at {last} s)")
    return "received: " + ", ".join(parts)


def same(run: Run, receivers: list[str], expected: dict[tuple[str, str], int]) -> None:
    """Both sides sent the same notifications to `receivers`; Alertmanager's count per group is `expected`
    (so that a scenario cannot pass by both sending nothing)."""
    am, beacon = groups(run, receivers)
    assert {group: len(sent) for group, sent in am.items()} == expected, (am, _received(run), run.am_log[-30:])
    problems = differences(am, beacon, run.tolerance)
    assert not problems, "\n".join(problems)


def test_the_file_imports_with_the_cli_and_a_second_import_changes_nothing(run):
    assert "Imported: the routing document is at version 2." in run.imported.stdout
    losses = run.imported.stdout.split("Losses")[1]
    # No loss: send_resolved false is stored as it is.
    assert [line for line in losses.splitlines()[1:] if line.strip()] == []
    assert run.again.returncode == 0 and "Nothing to change" in run.again.stdout


LOSSES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager" / "losses" / "alertmanager.yml"


def cli(run: Run, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BEACON, *args], env=run.env, capture_output=True, text=True, timeout=120)


def test_the_cli_reads_file_secrets_prints_the_plan_and_refuses_losses(run):
    plan = cli(run, "routing", "import", str(LOSSES), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert f"read the secret of receivers[0].slack_configs[0].api_url_file ({LOSSES.parent / 'secrets/slack-url'})" in (
        plan.stderr
    )
    assert plan.stdout.startswith("Dry run: nothing was changed.")
    assert "public.example/…/nXyZ" in plan.stdout  # where the chat notifier sends, secret-free
    assert "s3cretT0ken" not in plan.stdout + plan.stderr  # read, sent, stored sealed: never printed
    listed = [line.split(":")[0].strip() for line in plan.stdout.split("Losses")[1].splitlines()[1:] if line.strip()]
    expected = ["templates[0]", "receivers[0].slack_configs[0].title", "receivers[1].telegram_configs[0]"]
    assert listed == expected

    refused = cli(run, "routing", "import", str(LOSSES))
    assert refused.returncode == 1 and "losses_not_accepted" in refused.stderr
    assert all(path in refused.stderr for path in expected) and "s3cretT0ken" not in refused.stderr
    shown = cli(run, "routing", "show", "--format", "json")
    assert json.loads(shown.stdout)["version"] == "2"  # the differential file's import, nothing since


def test_no_alert_reaches_the_root_receiver(run):
    assert [r.path for r in run.am + run.beacon if r.path.startswith("/unrouted")] == []


def test_grouping_with_group_wait_and_group_interval_and_an_alert_joining(run):
    same(run, ["grouping"], {("/grouping", "alertname=G"): 2, ("/grouping", "alertname=H"): 1})


def test_an_alert_resolved_within_group_wait_is_never_sent(run):
    same(run, ["resolve-in-wait"], {("/resolve-in-wait", "alertname=K"): 1})


def test_an_alert_resolved_within_group_wait_is_listed_beside_a_firing_one(run):
    same(run, ["resolve-in-wait-listed"], {("/resolve-in-wait-listed", "alertname=F"): 1})


def test_send_resolved_on(run):
    same(run, ["resolved-on"], {("/resolved-on", "alertname=S"): 2})


def test_send_resolved_off(run):
    same(run, ["resolved-off"], {("/resolved-off", "alertname=S"): 1})


def test_repeat_interval(run):
    same(run, ["repeat"], {("/repeat", "alertname=P"): 2})


def test_continue(run):
    same(
        run,
        ["continue-pager", "continue-chat"],
        {
            ("/continue-pager", "alertname=C"): 1,
            ("/continue-chat", "alertname=C"): 1,
            ("/continue-chat", "alertname=D"): 1,
        },
    )


def test_nested_routes_inherit_group_by_and_timers(run):
    same(
        run,
        ["nested-parent", "nested-child", "nested-info"],
        {
            ("/nested-child", "alertname=N,team=a"): 2,
            ("/nested-child", "alertname=N,team=b"): 1,
            ("/nested-parent", "alertname=N,team=a"): 1,
            ("/nested-info", "alertname=N,team=a"): 1,
        },
    )


def test_group_by_every_label(run):
    expected = {("/group-all", f"alertname=A,instance={i},scenario=group_all"): 1 for i in ("1", "2")}
    same(run, ["group-all"], expected)


def test_inhibition_with_equal(run):
    same(run, ["inhibit"], {("/inhibit", "alertname=InstanceDown"): 2, ("/inhibit", "alertname=JobDown"): 2})


def test_a_silence(run):
    same(run, ["silence"], {("/silence", "alertname=Loud"): 1})


def test_the_resolve_of_a_silenced_alert_is_not_sent(run):
    same(run, ["silence-resolve"], {("/silence-resolve", "alertname=X"): 1})


def test_an_old_alert_is_sent_at_once(run):
    same(run, ["old-alert"], {("/old-alert", "alertname=O"): 1})


def test_a_label_with_an_empty_value(run):
    same(run, ["empty-label"], {("/empty-label", "alertname=E"): 1})


def test_an_alert_posted_again_keeps_its_earliest_start_and_latest_end(run):
    same(run, ["repost"], {("/repost", "alertname=M"): 2})
