"""Chart geometry: bars and annotation markers land where their times fall on the axis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.ui.charts import Annotation, Series, nice_ceiling, time_chart, type_colour

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
END = START + timedelta(hours=24)


def _chart(annotations, points=(), kind="bars"):
    return time_chart(
        [Series("events", list(points))], start=START, end=END, step_seconds=3600, annotations=annotations, kind=kind
    )


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
    assert tallest.height == pytest.approx(chart.plot_height * 230 / 300)
    assert [t.label for t in chart.y_ticks] == ["0", "100", "200", "300"]
    assert chart.bars[3].label.endswith("— 30")


@pytest.mark.parametrize(
    ("top", "labels"),
    [
        (4, ["0", "1", "2", "3", "4"]),
        (5, ["0", "2", "4", "6"]),
        (0.3, ["0", "0.1", "0.2", "0.3"]),
        (0, ["0", "0.25", "0.5", "0.75", "1"]),
    ],
)
def test_y_ticks_are_round_numbers(top, labels):
    chart = _chart([], [(START, float(top))])
    assert [t.label for t in chart.y_ticks] == labels


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 1), (0.3, 0.5), (7, 10), (10, 10), (11, 20), (230, 500), (1001, 2000)]
)
def test_nice_ceiling(value, expected):
    assert nice_ceiling(value) == pytest.approx(expected)


def test_type_colours_are_stable_and_distinct_for_known_types():
    assert type_colour("deploy") != type_colour("incident")
    assert type_colour("custom-kind") == type_colour("custom-kind")


def test_a_line_breaks_where_a_bucket_has_no_value():
    hours = [0, 1, 2, 5, 6, 9]
    chart = _chart([], [(START + timedelta(hours=h), 10.0) for h in hours], kind="line")
    (line,) = chart.lines
    assert [len(seg.split()) for seg in line.segments] == [3, 2]
    assert [x for x, _ in line.dots] == [pytest.approx(chart.left + chart.plot_width * 9.5 / 24)]  # alone: a dot
    first_x = float(line.segments[0].split()[0].split(",")[0])
    # Each point sits in the middle of its bucket.
    assert first_x == pytest.approx(chart.left + chart.plot_width / 48, abs=0.05)


def test_negative_values_get_an_axis_below_zero():
    chart = _chart([], [(START, -30.0), (START + timedelta(hours=1), 70.0)], kind="line")
    labels = [t.label for t in chart.y_ticks]
    assert labels[0] == "-50" and labels[-1] == "100"
    ys = [float(p.split(",")[1]) for p in chart.lines[0].segments[0].split()]
    zero_y = chart.top + chart.plot_height * (100 / 150)
    assert ys[0] > zero_y > ys[1]


def test_negative_bars_hang_from_zero():
    chart = _chart([], [(START, -5.0), (START + timedelta(hours=1), 5.0)])
    down, up = chart.bars
    assert down.y == pytest.approx(up.y + up.height)  # both meet at the zero line
    assert down.height == pytest.approx(up.height)


def test_only_http_urls_become_links():
    chart = _chart(
        [
            Annotation("a", "deploy", "ok", START + timedelta(hours=1), url="https://ci.example/1"),
            Annotation("b", "deploy", "script", START + timedelta(hours=2), url="javascript:alert(1)"),
        ]
    )
    assert [m.url for m in chart.markers] == ["https://ci.example/1", None]


def test_markers_closer_than_a_few_pixels_are_one_that_counts_them():
    near_end = END - timedelta(minutes=3)
    chart = _chart(
        [
            Annotation("a", "deploy", "api v2", near_end),
            Annotation("b", "deploy", "web v7", near_end + timedelta(minutes=1)),
            Annotation("c", "incident", "page", near_end + timedelta(minutes=2)),
            Annotation("d", "deploy", "alone", START + timedelta(hours=6)),
            Annotation("e", "incident", "span", START, START + timedelta(hours=1)),
        ]
    )
    by_id = {m.id: m for m in chart.markers}
    assert set(by_id) == {"a", "d", "e"}
    cluster = by_id["a"]
    assert cluster.count == 3 and cluster.titles == ("api v2", "web v7", "page")
    assert cluster.type == "several" and cluster.url is None
    assert (cluster.time, cluster.end_time) == ("2026-11-21T23:57:00.000Z", "2026-11-21T23:59:00.000Z")
    assert by_id["d"].count == 1 and by_id["e"].width > 0


def test_a_threshold_is_on_the_axis_and_drawn_as_a_line():
    chart = time_chart(
        [Series("value", [(START, 3.0)])],
        start=START,
        end=END,
        step_seconds=3600,
        annotations=[],
        kind="line",
        threshold=40,
    )
    assert chart.threshold is not None and chart.threshold.label == "40"
    assert chart.top <= chart.threshold.pos <= chart.top + chart.plot_height
    assert float(chart.y_ticks[-1].label) >= 40
