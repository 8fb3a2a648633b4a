"""Chart geometry: bars and annotation markers land where their times fall on the axis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.ui.charts import Annotation, nice_ceiling, time_chart, type_colour

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
END = START + timedelta(hours=24)


def _chart(annotations, points=()):
    return time_chart(list(points), start=START, end=END, step_seconds=3600, annotations=annotations)


def test_point_annotation_is_placed_proportionally():
    chart = _chart([Annotation("ann_1", "deploy", "v1.2.3", START + timedelta(hours=6))])
    (m,) = chart.markers
    assert m.width == 0
    assert m.x == pytest.approx(chart.left + chart.plot_width / 4)
    assert m.title == "v1.2.3" and m.time == "2026-11-21T06:00:00.000Z"


def test_span_annotation_is_a_band_clipped_to_the_range():
    chart = _chart([Annotation("ann_2", "incident", "outage", START - timedelta(hours=2), START + timedelta(hours=12))])
    (m,) = chart.markers
    assert m.x == pytest.approx(chart.left)
    assert m.width == pytest.approx(chart.plot_width / 2)


def test_annotations_outside_the_range_are_not_drawn():
    chart = _chart(
        [
            Annotation("a", "deploy", "before", START - timedelta(minutes=1)),
            Annotation("b", "deploy", "after", END + timedelta(minutes=1)),
            Annotation("c", "deploy", "span before", START - timedelta(hours=3), START - timedelta(hours=1)),
        ]
    )
    assert chart.markers == []


def test_bars_scale_to_a_nice_maximum():
    points = [(START + timedelta(hours=h), float(h * 10)) for h in range(24)]
    chart = _chart([], points)
    assert len(chart.bars) == 24
    tallest = max(chart.bars, key=lambda b: b.height)
    assert tallest.height == pytest.approx(chart.plot_height * 230 / 500)
    assert chart.y_ticks[-1].label == "500"
    assert chart.bars[3].label.endswith("— 30")


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 1), (0.3, 0.5), (7, 10), (10, 10), (11, 20), (230, 500), (1001, 2000)]
)
def test_nice_ceiling(value, expected):
    assert nice_ceiling(value) == pytest.approx(expected)


def test_type_colours_are_stable_and_distinct_for_known_types():
    assert type_colour("deploy") != type_colour("incident")
    assert type_colour("custom-kind") == type_colour("custom-kind")
