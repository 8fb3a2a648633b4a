"""The monitor state machine as a pure function: every transition and what it notifies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.monitors.evaluation import series_key
from app.monitors.runner import next_due
from app.monitors.state import Failed, Rules, Series, Values, step_match, step_threshold

ABOVE_10 = Rules(operator="above", threshold=10)


def one(value: float | None) -> Values:
    return Values({} if value is None else {"": ({}, value)})


def run(values, rules=ABOVE_10, state="ok", series=None):
    """Feed observations in order; return (states, [(kind, notify)...] per run)."""
    series = series or {}
    states, changes = [], []
    for v in values:
        observed = v if isinstance(v, Failed) else one(v)
        step = step_threshold(state, series, observed, rules)
        state, series = step.state, step.series
        states.append(state)
        changes.append([(c.kind, c.notify) for c in step.changes])
    return states, changes


def test_ok_alerting_ok():
    states, changes = run([5, 11, 12, 9, 3])
    assert states == ["ok", "alerting", "alerting", "ok", "ok"]
    assert changes == [[], [("triggered", True)], [], [("resolved", True)], []]


def test_operators():
    for operator, breach, clear in [
        ("above", 11, 10),
        ("above_or_equal", 10, 9.99),
        ("below", 9, 10),
        ("below_or_equal", 10, 10.01),
    ]:
        rules = Rules(operator=operator, threshold=10)
        assert run([breach], rules)[0] == ["alerting"], operator
        assert run([clear], rules)[0] == ["ok"], operator


def test_m_of_n_window():
    rules = Rules(operator="above", threshold=10, m=2, n=3)
    states, _ = run([11, 1, 11, 11, 1, 1, 11], rules)
    assert states == ["ok", "ok", "alerting", "alerting", "alerting", "ok", "ok"]


def test_not_resolvable_returns_to_ok_quietly():
    _, changes = run([11, 1], Rules(operator="above", threshold=10, resolvable=False))
    assert changes == [[("triggered", True)], [("resolved", False)]]


def test_error_is_a_condition_of_the_monitor_that_leaves_the_series_alone():
    states, changes = run([11, Failed("boom"), Failed("boom"), 12])
    assert states == ["alerting", "error", "error", "alerting"]
    # One error message; on recovery, a message that the monitor still alerts (same incident key).
    assert changes == [[("triggered", True)], [("error", True)], [], [("triggered", True)]]
    states, changes = run([Failed("boom"), 1])
    assert states == ["error", "ok"] and changes == [[("error", True)], [("resolved", True)]]


def test_no_data():
    rules = Rules(operator="above", threshold=10, alert_on_no_data=True)
    states, changes = run([None, None, 1, None], rules)
    assert states == ["no_data", "no_data", "ok", "no_data"]
    assert changes == [[("no_data", True)], [], [("resolved", True)], [("no_data", True)]]
    # Without alert_on_no_data, no data is "not breached".
    states, changes = run([11, None, None])
    assert states == ["alerting", "ok", "ok"] and changes == [[("triggered", True)], [("resolved", True)], []]


def test_groups():
    rules = Rules(operator="above", threshold=10, grouped=True)
    a, b = {"svc": "a"}, {"svc": "b"}
    series: dict[str, Series] = {}
    step = step_threshold("ok", series, Values({"a": (a, 11), "b": (b, 1)}), rules)
    assert step.state == "alerting" and [(c.kind, c.group) for c in step.changes] == [("triggered", a)]
    assert step.value == 11
    step = step_threshold(step.state, step.series, Values({"a": (a, 12), "b": (b, 13)}), rules)
    assert [(c.kind, c.group) for c in step.changes] == [("triggered", b)]
    step = step_threshold(step.state, step.series, Values({"b": (b, 14)}), rules)  # a went away: not breached
    assert [(c.kind, c.group) for c in step.changes] == [("resolved", a)] and step.state == "alerting"
    assert set(step.series) == {"b"}  # a group with nothing left to remember is dropped
    step = step_threshold(step.state, step.series, Values({}), rules)
    assert [(c.kind, c.group) for c in step.changes] == [("resolved", b)] and step.state == "ok"
    assert step.series == {}


def test_groups_recovering_from_error_close_the_monitor_level_message():
    rules = Rules(operator="above", threshold=10, grouped=True)
    a = {"svc": "a"}
    step = step_threshold("ok", {}, Values({"a": (a, 11)}), rules)
    step = step_threshold(step.state, step.series, Failed("x"), rules)
    assert step.state == "error" and [(c.kind, c.group) for c in step.changes] == [("error", {})]
    step = step_threshold(step.state, step.series, Values({"a": (a, 11)}), rules)
    assert step.state == "alerting" and [(c.kind, c.group) for c in step.changes] == [("resolved", {})]


def test_match():
    assert [c.kind for c in step_match("ok", 3).changes] == ["matched"]
    assert step_match("ok", 0).changes == []
    failed = step_match("ok", Failed("x"))
    assert failed.state == "error" and [c.kind for c in failed.changes] == ["error"]
    assert step_match("error", Failed("x")).changes == []
    assert [c.kind for c in step_match("error", 2).changes] == ["resolved", "matched"]


def test_next_due_skips_missed_runs():
    due = datetime(2026, 1, 1, tzinfo=UTC)
    assert next_due(due, due + timedelta(seconds=3), 60) == due + timedelta(seconds=60)
    # Down for an hour and a bit: the next run is on the old cadence, after now, not 60 runs to catch up.
    assert next_due(due, due + timedelta(seconds=3630), 60) == due + timedelta(seconds=3660)
    assert next_due(due, due + timedelta(seconds=60), 60) == due + timedelta(seconds=120)


def test_series_keys_are_sorted_json_and_take_integers_beyond_64_bits() -> None:
    # Stored states are keyed by this text: it stays what orjson wrote (1e+20, not 1e20).
    assert series_key({"b": 1, "a": 1e20}) == '{"a":1e+20,"b":1}'
    assert series_key({"id": 2**70 + 1}) == '{"id":1180591620717411303425}'


def test_repeat_after_the_interval_since_the_trigger_or_the_last_repeat():
    rules = Rules(operator="above", threshold=10, repeat_seconds=120)
    state, series, kinds = "ok", {}, []
    for t, v in [(0, 11), (60, 12), (120, 13), (180, 14), (240, 15), (300, 3), (360, 11)]:
        step = step_threshold(state, series, one(v), rules, now=float(t))
        state, series = step.state, step.series
        kinds.append([(c.kind, c.value) for c in step.changes])
    assert kinds == [
        [("triggered", 11)],
        [],
        [("repeat", 13)],  # 120 s after the trigger, with the value now
        [],
        [("repeat", 15)],
        [("resolved", 3)],
        [("triggered", 11)],  # a new trigger starts a new clock
    ]
    # Without repeat_seconds (or without a time), a firing alert is told once.
    assert run([11, 12, 13, 14])[1] == [[("triggered", True)], [], [], []]


def test_an_alert_firing_before_repeats_were_asked_for_starts_its_clock_at_the_next_run():
    firing = {"": Series(state="alerting", recent=[True], value=12)}
    rules = Rules(operator="above", threshold=10, repeat_seconds=60)
    first = step_threshold("alerting", firing, one(12), rules, now=1000.0)
    assert first.changes == [] and first.series[""].notified_at == 1000.0
    later = step_threshold("alerting", first.series, one(12), rules, now=1060.0)
    assert [c.kind for c in later.changes] == ["repeat"]


def test_no_repeat_while_the_query_fails():
    rules = Rules(operator="above", threshold=10, repeat_seconds=60)
    step = step_threshold("ok", {}, one(11), rules, now=0.0)
    failed = step_threshold(step.state, step.series, Failed("boom"), rules, now=600.0)
    assert [c.kind for c in failed.changes] == ["error"]
