"""Monitor timelines: state stretches between changes, ticks for every history event."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.ui.timeline import HistoryEvent, state_timeline

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
END = START + timedelta(hours=10)


def at(hours: float) -> datetime:
    return START + timedelta(hours=hours)


def ev(hours: float, kind: str, state: str, group: str = "") -> HistoryEvent:
    return HistoryEvent(at(hours), kind, state, group, kind)


def stretches(tl):
    return [(s.state, round(s.x, 1), round(s.width, 1)) for s in tl.stretches]


def test_changes_split_the_window_into_states():
    tl = state_timeline(
        [ev(7, "resolved", "ok"), ev(2, "triggered", "alerting"), ev(8, "error", "error")],
        created_at=at(-5),
        start=START,
        end=END,
        width=1000,
    )
    assert stretches(tl) == [("ok", 0, 200), ("alerting", 200, 500), ("ok", 700, 100), ("error", 800, 200)]
    assert [(m.kind, m.x) for m in tl.marks] == [("triggered", 200), ("resolved", 700), ("error", 800)]
    assert tl.marks[0].time == "2026-11-21T02:00:00.000Z"


def test_a_change_before_the_window_sets_its_opening_state():
    tl = state_timeline(
        [ev(-3, "triggered", "alerting"), ev(4, "resolved", "ok")], created_at=at(-9), start=START, end=END, width=1000
    )
    assert stretches(tl) == [("alerting", 0, 400), ("ok", 400, 600)]
    assert [m.kind for m in tl.marks] == ["resolved"]  # only what happened inside the window is ticked


def test_nothing_is_drawn_before_the_monitor_existed():
    tl = state_timeline([], created_at=at(6), start=START, end=END, width=1000)
    assert stretches(tl) == [("ok", 600, 400)]
    assert state_timeline([], created_at=at(11), start=START, end=END).stretches == []


def test_matches_are_ticks_only():
    tl = state_timeline([ev(5, "matched", "ok")], created_at=at(-1), start=START, end=END, width=1000)
    assert stretches(tl) == [("ok", 0, 1000)]
    assert [(m.kind, m.x) for m in tl.marks] == [("matched", pytest.approx(500))]


def test_a_grouped_monitor_is_alerting_while_any_group_is():
    api, web = '{"service":"api"}', '{"service":"web"}'
    tl = state_timeline(
        [
            ev(2, "triggered", "alerting", api),
            ev(3, "triggered", "alerting", web),
            ev(4, "resolved", "ok", api),  # web still alerts
            ev(6, "resolved", "ok", web),
            ev(7, "triggered", "alerting", web),
        ],
        created_at=at(-1),
        start=START,
        end=END,
        width=1000,
    )
    assert stretches(tl) == [("ok", 0, 200), ("alerting", 200, 400), ("ok", 600, 100), ("alerting", 700, 300)]
    assert [m.kind for m in tl.marks] == ["triggered", "triggered", "resolved", "resolved", "triggered"]


def test_a_grouped_monitor_through_an_error_and_its_recovery():
    api = '{"service":"api"}'
    tl = state_timeline(
        [
            ev(-2, "triggered", "alerting", api),  # before the window: it opens alerting
            ev(3, "error", "error"),
            ev(5, "resolved", "alerting"),  # recovered: the api group still alerts
            ev(8, "resolved", "ok", api),
        ],
        created_at=at(-5),
        start=START,
        end=END,
        width=1000,
    )
    assert stretches(tl) == [("alerting", 0, 300), ("error", 300, 200), ("alerting", 500, 300), ("ok", 800, 200)]
