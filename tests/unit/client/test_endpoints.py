"""Endpoint specs build the request the API contract describes (sans-IO: no server needed). The same calls run
against the real app in tests/integration/client/ (monitors: test_client_monitors.py), and the models they read
the answers into are compared with the served OpenAPI document (test_models_follow_the_api.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from beacon_client import TriggerAfter
from beacon_client.endpoints import annotations, datasets, events, monitors, notifiers


def body(call) -> dict:
    return json.loads(call.content)


def test_create_monitor_sends_only_what_is_given():
    call = monitors.create_monitor(
        "errors", "threshold", "['web'] | summarize count()", notifier_ids=["ntf_1"], operator="above", threshold=10,
        trigger_after=TriggerAfter(m=2, n=3),
    )  # fmt: skip
    assert (call.method, call.path, call.headers["Content-Type"]) == ("POST", "/v1/monitors", "application/json")
    assert body(call) == {
        "name": "errors",
        "type": "threshold",
        "apl": "['web'] | summarize count()",
        "notifier_ids": ["ntf_1"],
        "operator": "above",
        "threshold": 10,
        "trigger_after": {"m": 2, "n": 3},
    }


def test_monitor_labels_go_in_create_and_update():
    call = monitors.create_monitor("errors", "match_event", "['web']", labels={"team": "payments"})
    assert body(call)["labels"] == {"team": "payments"}
    assert body(monitors.update_monitor("mon_1", labels={})) == {"labels": {}}


def test_monitor_repeat_interval_goes_in_create_and_update():
    call = monitors.create_monitor("errors", "threshold", "['web'] | summarize count()", repeat_interval_seconds=600)
    assert body(call)["repeat_interval_seconds"] == 600
    assert body(monitors.update_monitor("mon_1", repeat_interval_seconds=None)) == {"repeat_interval_seconds": None}


def test_partial_updates_leave_out_unset_fields_and_send_null_to_clear():
    call = monitors.update_monitor("mon_1", description=None, interval_seconds=30)
    assert (call.method, call.path) == ("PATCH", "/v1/monitors/mon_1")
    assert body(call) == {"description": None, "interval_seconds": 30}
    assert body(annotations.update_annotation("ann_1", end_time=None)) == {"end_time": None}
    assert body(datasets.update_dataset("web")) == {}
    assert body(notifiers.update_notifier("ntf_1", config={"url": None})) == {"config": {"url": None}}


def test_evaluate_history_and_ids_in_paths_are_escaped():
    assert body(monitors.evaluate_monitor("mon_1", dry_run=True)) == {"dry_run": True}
    history = monitors.monitor_history("mon_1", limit=5)
    assert (history.method, history.path, history.params) == ("GET", "/v1/monitors/mon_1/history", {"limit": "5"})
    assert monitors.get_monitor("../tokens").path == "/v1/monitors/..%2Ftokens"


def test_list_filters_and_times_in_the_query_string():
    t = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
    call = annotations.list_annotations(datasets=["web", "api"], start_time=t, type="deploy", cursor="c1")
    assert call.params == {"datasets": "web,api", "start_time": "2026-11-21T08:00:00+00:00", "type": "deploy",
                           "cursor": "c1"}  # fmt: skip


def test_ingest_and_query_requests():
    raw = events.ingest_raw("web logs", b"x", timestamp_field="ts")
    assert raw.path == "/v1/ingest/web%20logs" and raw.params == {"timestamp-field": "ts"}
    assert raw.headers == {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
    q = events.query("['web'] | count", start_time="now-1h")
    assert body(q) == {"apl": "['web'] | count", "start_time": "now-1h"}
    assert events.export("['web']").headers["Accept-Encoding"] == "gzip"
