"""An Alertmanager configuration read as Beacon's notifiers and routing document, with every loss named by its
path in the YAML: receivers of each kind and `global` defaults, the route tree (matchers, inheritance, timers),
inhibit rules and time intervals; what Alertmanager itself refuses is a 400 naming the place."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import msgspec
import pytest

from app.errors import BeaconError
from app.routing.importing.draft import Draft, read_config
from app.routing.importing.losses import HTTP_CONFIG, MESSAGE_TEXT, TEMPLATES, UNKNOWN
from app.routing.importing.receivers import FILE_SECRET, RELAY
from app.routing.importing.yamltext import load
from beacon_client.cli.routing_import import body_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"


def read(text: str) -> Draft:
    return read_config(load(dedent(text).encode()))


def losses(draft: Draft) -> dict[str, str]:
    return {loss.path: loss.reason for loss in draft.losses}


def error(text: str) -> BeaconError:
    with pytest.raises(BeaconError) as caught:
        read(text)
    return caught.value


def routes(draft: Draft) -> dict:
    return msgspec.to_builtins(draft.document)["route"]


WEBHOOK = "receivers: [{name: hook, webhook_configs: [{url: 'http://127.0.0.1:5001/'}]}]\n"


def test_the_losses_fixture_as_sent_by_the_cli_and_as_a_raw_request():
    source = FIXTURES / "losses" / "alertmanager.yml"
    body, read_files = body_of(source)  # what `beacon routing import` sends: the file's secret inlined
    assert read_files == [f"receivers[0].slack_configs[0].api_url_file ({source.parent / 'secrets/slack-url'})"]
    draft = read_config(load(body))
    assert losses(draft) == {
        "templates[0]": TEMPLATES,
        "receivers[0].slack_configs[0].title": MESSAGE_TEXT,
        "receivers[1].telegram_configs[0]": (
            "Beacon has no notifier type for telegram: this integration is not imported"
        ),
    }
    (chat,) = draft.notifiers
    assert (chat.name, chat.type, chat.send_resolved) == ("chat", "chat_a", False)
    assert chat.config == {"url": "https://public.example/services/T000/B000/s3cretT0kenXyZ"}
    assert routes(draft)["routes"][0]["notifier_ids"] == []  # phone: nothing Beacon can send to

    raw = read_config(load(source.read_bytes()))  # the server reads no file: that integration is a loss too
    assert losses(raw) == {**losses(draft), "receivers[0].slack_configs[0].api_url_file": FILE_SECRET}
    assert raw.notifiers == [] and routes(raw)["notifier_ids"] == []


def test_each_kind_of_receiver_and_the_global_defaults_it_takes():
    draft = read(
        """
        global:
          slack_api_url: https://public.example/slack/T1/B1/abcd
          opsgenie_api_key: og-key
          opsgenie_api_url: https://api.eu.opsgenie.com/
          smtp_smarthost: smtp.example:587
          smtp_from: am@example.org
          smtp_require_tls: true
          http_config: {proxy_url: 'http://proxy:3128', follow_redirects: true}
        route: {receiver: all}
        receivers:
        - name: all
          webhook_configs:
          - {url: 'https://public.example/hook', max_alerts: 5, send_resolved: false}
          slack_configs:
          - {channel: '#ops', title: '{{ template "slack.default.title" . }}', send_resolved: true}
          discord_configs: [{webhook_url: 'https://public.example/discord'}]
          msteams_configs: [{webhook_url: 'https://public.example/teams'}]
          msteamsv2_configs: [{webhook_url: 'https://public.example/flow', http_config: {bearer_token: x}}]
          pagerduty_configs:
          - {routing_key: pd-key, url: 'https://events.pagerduty.com/v2/enqueue', severity: warning}
          opsgenie_configs: [{}]
          email_configs: [{to: 'Ops <ops@example.org>, dev@example.org'}]
        """
    )
    found = {n.name: (n.type, n.config, n.send_resolved) for n in draft.notifiers}
    assert found == {
        "all/webhook[0]": (
            "webhook",
            {"url": "https://public.example/hook", "format": "alertmanager", "max_alerts": 5},
            False,
        ),
        "all/slack[0]": ("chat_a", {"url": "https://public.example/slack/T1/B1/abcd"}, True),
        "all/discord[0]": ("chat_b", {"url": "https://public.example/discord"}, True),
        "all/msteams[0]": ("chat_c", {"url": "https://public.example/teams"}, True),
        "all/msteamsv2[0]": ("chat_c", {"url": "https://public.example/flow"}, True),
        "all/pagerduty[0]": ("incident_a", {"integration_key": "pd-key"}, True),
        "all/opsgenie[0]": ("incident_b", {"integration_key": "og-key"}, True),
        "all/email[0]": ("email", {"addresses": ["ops@example.org", "dev@example.org"]}, False),
    }
    assert routes(draft)["notifier_ids"] == list(found)
    lost = losses(draft)
    assert lost.pop("global.http_config.proxy_url") == HTTP_CONFIG  # given to every HTTP integration without its own
    assert lost.pop("receivers[0].msteamsv2_configs[0].http_config.bearer_token") == HTTP_CONFIG
    assert lost.pop("receivers[0].slack_configs[0].channel").startswith("Beacon posts to the channel")
    assert "Adaptive Card" in lost.pop("receivers[0].msteams_configs[0].webhook_url")
    assert lost.pop("receivers[0].pagerduty_configs[0].severity") == MESSAGE_TEXT
    assert "BEACON_INCIDENT_B_URL" in lost.pop("global.opsgenie_api_url")  # not Opsgenie's default (the EU one)
    assert lost.pop("global.smtp_smarthost") == lost.pop("global.smtp_from") == RELAY
    assert "'Ops' is dropped" in lost.pop("receivers[0].email_configs[0].to")
    assert lost == {}  # the slack title is Alertmanager's default; require_tls: true too


def test_one_integration_takes_its_receivers_name_and_a_receiver_without_any_sends_nowhere():
    draft = read(
        """
        route:
          receiver: blackhole
          routes: [{matchers: [team=a], receiver: pager}]
        receivers:
        - name: blackhole
        - name: pager
          pagerduty_configs: [{service_key: v1-key}]
        """
    )
    assert [n.name for n in draft.notifiers] == ["pager"]
    assert routes(draft)["notifier_ids"] == [] and routes(draft)["routes"][0]["notifier_ids"] == ["pager"]
    assert "Events API v2" in losses(draft)["receivers[1].pagerduty_configs[0].service_key"]


def test_the_route_tree_matchers_inheritance_and_timers():
    draft = read(
        """
        route:
          receiver: hook
          group_by: [alertname]
          group_wait: 1500ms
          repeat_interval: 1ms
          routes:
          - match: {team: payments, code: 500}
            match_re: {severity: 'critical|page'}
            matchers: ['{env!="dev", team="payments"}']
            group_by: []
            group_interval: 1y
            continue: true
            routes: [{group_by: ['...'], receiver: hook}]
        """
        + WEBHOOK
    )
    root = routes(draft)
    assert root["group_wait_seconds"] == 2 and root["repeat_interval_seconds"] == 1
    child = root["routes"][0]
    # One list, sorted as Alertmanager sorts a route's matchers (name, value, type): group keys read as its do.
    assert child["matchers"] == [
        'code="500"', 'env!="dev"', 'severity=~"critical|page"', 'team="payments"', 'team="payments"'
    ]  # fmt: skip
    assert "group_by" not in child and "notifier_ids" not in child  # group_by: [] inherits, as in Alertmanager
    assert child["continue"] is True and child["group_interval_seconds"] == 30 * 86_400
    assert child["routes"][0]["group_by"] == ["..."]
    assert losses(draft) == {
        "route.group_wait": "1500ms becomes 2 s: Beacon's timers are whole seconds",
        "route.repeat_interval": "1ms becomes 1 s: Beacon's timers are whole seconds",
        "route.routes[0].group_interval": "1y becomes 2592000 s: Beacon's longest group_interval is 30 days",
    }


@pytest.mark.parametrize(
    ("config", "param", "fragment"),
    [
        ("route: {receiver: nobody}\n" + WEBHOOK, "route.receiver", "no receiver is named 'nobody'"),
        ("route: {receiver: hook, continue: true}\n" + WEBHOOK, "route", "cannot have continue"),
        ("route: {receiver: hook, matchers: [a=b]}\n" + WEBHOOK, "route", "cannot have matchers"),
        ("route: {group_wait: 1s}\n" + WEBHOOK, "route", "needs a `receiver`"),
        ("route: {receiver: hook, group_interval: 0s}\n" + WEBHOOK, "route.group_interval", "cannot be zero"),
        ("route: {receiver: hook, routes: [{receiver: hook, group_by: [a, '...']}]}\n" + WEBHOOK,
         "route.routes[0].group_by", "only entry"),
        ("route: {receiver: hook, routes: [{mute_time_intervals: [nights]}]}\n" + WEBHOOK,
         "route.routes[0].mute_time_intervals[0]", "no time interval"),
        ("route: {receiver: hook}\nreceivers: [{name: hook}, {name: hook}]\n", "receivers[1].name", "two receivers"),
        ("route: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: x}]}]\n",
         "receivers[0].slack_configs[0]", "global.slack_api_url"),
        ("route: {receiver: a}\nreceivers: [{name: a, webhook_configs: [{url: x, url_file: y}]}]\n",
         "receivers[0].webhook_configs[0]", "at most one"),
        ("route: {receiver: hook}\ninhibit_rules: [{equal: [a-b]}]\n" + WEBHOOK, "inhibit_rules[0].equal[0]",
         "not a label name"),
        ("route: {receiver: hook}\ntime_intervals: [{name: x, time_intervals: [{weekdays: [someday]}]}]\n"
         + WEBHOOK, "time_intervals[0].time_intervals[0].weekdays[0]", "not a weekday"),
    ],
)  # fmt: skip
def test_what_alertmanager_refuses_is_a_400_naming_the_place(config, param, fragment):
    err = error(config)
    assert err.code == "invalid_field" and err.param == param and fragment in err.message, err.message


def test_inhibit_rules_and_time_intervals_both_blocks():
    draft = read(
        """
        global: {resolve_timeout: 90s, smtp_hello: x, victorops_api_key: y, made_up: z}
        tracing: {endpoint: x}
        route:
          receiver: hook
          routes:
          - {receiver: hook, matchers: [a=b], mute_time_intervals: [nights], active_time_intervals: [office]}
        inhibit_rules:
        - source_match: {severity: critical}
          source_matchers: [alertname=JobDown]
          target_match_re: {severity: 'warning|info'}
          equal: [zone]
          made_up: 1
        mute_time_intervals:
        - name: nights
          time_intervals: [{times: [{start_time: '00:00', end_time: '06:00'}], location: Local}]
        time_intervals:
        - name: office
          time_intervals:
          - {weekdays: ['monday:friday'], days_of_month: [1, '-3:-1'], months: [1, 'may:july'], years: [2024],
             times: [{start_time: '09:00', end_time: '17:00'}], location: Europe/Berlin}
        """
        + WEBHOOK
    )
    doc = msgspec.to_builtins(draft.document)
    assert doc["inhibit_rules"] == [
        {
            "source_matchers": ['alertname="JobDown"', 'severity="critical"'],
            "target_matchers": ['severity=~"warning|info"'],
            "equal": ["zone"],
        }
    ]
    assert doc["time_intervals"] == [
        {"name": "nights", "intervals": [{"times": [{"start_time": "00:00", "end_time": "06:00"}]}]},
        {
            "name": "office",
            "intervals": [
                {
                    "times": [{"start_time": "09:00", "end_time": "17:00"}],
                    "weekdays": ["monday:friday"],
                    "days_of_month": ["1", "-3:-1"],
                    "months": ["1", "may:july"],
                    "years": ["2024"],
                    "location": "Europe/Berlin",
                }
            ],
        },
    ]
    assert draft.resolve_timeout_seconds == 90
    lost = losses(draft)
    assert lost == {
        "tracing": UNKNOWN,
        "global.made_up": UNKNOWN,
        "inhibit_rules[0].made_up": UNKNOWN,
        "mute_time_intervals[0].time_intervals[0].location": (
            "`Local` is the Alertmanager machine's own zone, which Beacon cannot know: read as UTC"
        ),
    }  # smtp_hello and victorops_api_key: no receiver uses them, as in Alertmanager


def test_an_import_makes_at_most_so_many_notifiers():
    hooks = ", ".join(f"{{url: 'https://public.example/{i}'}}" for i in range(1_001))
    err = error(f"route: {{receiver: many}}\nreceivers: [{{name: many, webhook_configs: [{hooks}]}}]\n")
    assert err.param == "receivers[0].webhook_configs[1000]" and "at most 1,000" in err.message
