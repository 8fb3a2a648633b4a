"""The routing tree compiled from a document: depth-first matching, `continue`, inheritance, group keys, and
validation errors that name the exact place."""

from __future__ import annotations

import msgspec
import pytest

from app.errors import BeaconError
from app.routing import document as d
from app.routing.inhibition import Inhibitor
from app.routing.tree import compile_document

DOC = {
    "route": {
        "notifier_ids": ["ntf_default"],
        "group_by": ["alertname"],
        "group_wait_seconds": 10,
        "routes": [
            {
                "matchers": ["team=payments", "severity=~critical|page"],
                "notifier_ids": ["ntf_pager"],
                "continue": True,
                "group_interval_seconds": 60,
                "mute_time_intervals": ["nights"],
            },
            {
                "matchers": ["team=payments"],
                "notifier_ids": ["ntf_chat"],
                "group_by": ["..."],
                "routes": [{"matchers": ["env=staging"], "repeat_interval_seconds": 3600}],
            },
            {"matchers": ["team=web"], "group_by": ["alertname", "cluster"]},
        ],
    },
    "time_intervals": [{"name": "nights", "intervals": [{"times": [{"start_time": "22:00", "end_time": "07:00"}]}]}],
}
KNOWN = {"ntf_default", "ntf_pager", "ntf_chat"}


def tree(doc=DOC, known=KNOWN):
    return compile_document(msgspec.convert(doc, d.Document), known)


def paths(labels):
    return [r.path for r in tree().match(labels)]


def test_depth_first_continue_and_fallthrough_to_root():
    assert paths({"team": "payments", "severity": "critical"}) == ["route.routes[0]", "route.routes[1]"]
    assert paths({"team": "payments", "severity": "warning"}) == ["route.routes[1]"]
    assert paths({"team": "payments", "env": "staging"}) == ["route.routes[1].routes[0]"]
    assert paths({"team": "web"}) == ["route.routes[2]"]
    assert paths({"team": "ops"}) == ["route"]  # no child takes it: the root handles it


def test_inheritance_of_notifiers_grouping_and_timers():
    t = tree()
    staging = t.match({"team": "payments", "env": "staging"})[0]
    assert staging.notifier_ids == ("ntf_chat",)  # from its parent
    assert staging.group_by is None  # "...": every label, from its parent
    assert (staging.group_wait_seconds, staging.group_interval_seconds, staging.repeat_interval_seconds) == (
        10,  # from the root
        300,  # the default, through the root
        3600,  # its own
    )
    web = t.match({"team": "web"})[0]
    assert web.notifier_ids == ("ntf_default",) and web.group_by == ("alertname", "cluster")
    pager = t.match({"team": "payments", "severity": "page"})[0]
    assert pager.group_interval_seconds == 60 and pager.group_by == ("alertname",)


def test_group_keys():
    t = tree()
    labels = {"alertname": "Down", "team": "web", "cluster": "eu", "instance": "a"}
    (web,) = t.match(labels)
    assert web.group_key(labels) == '{}/{team="web"}:{alertname="Down", cluster="eu"}'
    assert web.group_key({**labels, "instance": "b"}) == web.group_key(labels)  # same group
    (chat,) = t.match({"team": "payments", "x": "1"})
    assert chat.group_labels({"team": "payments", "x": "1"}) == {"team": "payments", "x": "1"}
    assert t.root.group_key({"other": "1"}) == "{}:{}"  # no alertname: the empty group of the route


def test_route_keys_survive_a_new_sibling():
    before = tree()
    doc = msgspec.json.decode(msgspec.json.encode(DOC))
    doc["route"]["routes"].insert(0, {"matchers": ["team=new"]})
    after = tree(doc)
    labels = {"team": "web"}
    assert after.match(labels)[0].key == before.match(labels)[0].key == '{}/{team="web"}'
    assert after.match(labels)[0].path == "route.routes[3]"


@pytest.mark.parametrize(
    ("change", "param"),
    [
        (lambda doc: doc["route"].update(matchers=["a=b"]), "route.matchers"),
        (lambda doc: doc["route"].update(mute_time_intervals=["nights"]), "route.mute_time_intervals"),
        (
            lambda doc: doc["route"]["routes"][1].update(notifier_ids=["ntf_chat", "ntf_gone"]),
            "route.routes[1].notifier_ids[1]",
        ),
        (
            lambda doc: doc["route"]["routes"][0].update(mute_time_intervals=["days"]),
            "route.routes[0].mute_time_intervals[0]",
        ),
        (
            lambda doc: doc["route"]["routes"][1]["routes"][0].update(matchers=['env=~"("']),
            "route.routes[1].routes[0].matchers[0]",
        ),
        (lambda doc: doc["route"]["routes"][2].update(group_by=["alertname", "..."]), "route.routes[2].group_by"),
        (lambda doc: doc["route"]["routes"][2].update(group_by=["not-a-label"]), "route.routes[2].group_by[0]"),
        (
            lambda doc: doc["route"]["routes"][2].update(group_interval_seconds=0),
            "route.routes[2].group_interval_seconds",
        ),
        (lambda doc: doc["route"].update(repeat_interval_seconds=0), "route.repeat_interval_seconds"),
        (lambda doc: doc["time_intervals"].append(doc["time_intervals"][0]), "time_intervals[1].name"),
        (
            lambda doc: doc.update(inhibit_rules=[{"source_matchers": ["a=b"], "target_matchers": ["c"]}]),
            "inhibit_rules[0].target_matchers[0]",
        ),
        (
            lambda doc: doc.update(inhibit_rules=[{"source_matchers": [], "target_matchers": [], "equal": ["a b"]}]),
            "inhibit_rules[0].equal[0]",
        ),
    ],
)
def test_errors_name_the_place(change, param):
    doc = msgspec.json.decode(msgspec.json.encode(DOC))
    change(doc)
    with pytest.raises(BeaconError) as info:
        tree(doc)
    assert info.value.param == param, info.value.message


def test_inhibition_with_equal_and_never_itself():
    rules = tree(
        {
            **DOC,
            "inhibit_rules": [
                {
                    "source_matchers": ["severity=critical"],
                    "target_matchers": ["severity=warning"],
                    "equal": ["cluster"],
                },
                {"source_matchers": ["kind=flappy"], "target_matchers": ["kind=flappy"]},
            ],
        }
    ).inhibit_rules
    firing = [
        ("crit-eu", {"severity": "critical", "cluster": "eu"}),
        ("flap-1", {"kind": "flappy"}),
        ("flap-2", {"kind": "flappy"}),
    ]
    inhibitor = Inhibitor(rules, firing)
    assert inhibitor.inhibited_by("warn-eu", {"severity": "warning", "cluster": "eu"}) == ["crit-eu"]
    assert inhibitor.inhibited_by("warn-us", {"severity": "warning", "cluster": "us"}) == []
    assert inhibitor.inhibited_by("warn-none", {"severity": "warning"}) == []  # "" != "eu"
    assert inhibitor.inhibited_by("crit-eu", {"severity": "critical", "cluster": "eu"}) == []
    # Matching both sides: neither inhibits the other (nor itself).
    assert inhibitor.inhibited_by("flap-1", {"kind": "flappy"}) == []
    lone = Inhibitor(rules, [("w", {"severity": "warning", "cluster": "eu"})])
    assert lone.inhibited_by("w", {"severity": "warning", "cluster": "eu"}) == []


def test_changes_window_is_inherited_like_the_timers():
    doc = msgspec.json.decode(msgspec.json.encode(DOC))
    doc["route"]["routes"][1]["changes_window_seconds"] = 600
    doc["route"]["routes"][2]["changes_window_seconds"] = 0
    t = tree(doc)
    assert t.root.changes_window_seconds == 3600  # the default at the root
    assert t.match({"team": "payments", "severity": "page"})[0].changes_window_seconds == 3600  # from the root
    assert t.match({"team": "payments", "env": "staging"})[0].changes_window_seconds == 600  # from its parent
    assert t.match({"team": "web"})[0].changes_window_seconds == 0  # off
    for bad, param in ((-1, "route.changes_window_seconds"), (7 * 86_400 + 1, "route.changes_window_seconds")):
        broken = msgspec.json.decode(msgspec.json.encode(DOC))
        broken["route"]["changes_window_seconds"] = bad
        with pytest.raises(BeaconError) as info:
            tree(broken)
        assert info.value.param == param
