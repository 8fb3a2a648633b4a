"""Geometry of the server-rendered time charts: buckets as bars or lines, annotations as lines and bands.

Everything here is pure arithmetic on times and values; `templates/ui/chart.html` draws the result as inline
SVG, so the page works offline and needs no chart library.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.timefmt import iso_ms, iso_ms_or_none

PALETTE = ("#2563eb", "#dc2626", "#ea580c", "#7c3aed", "#0d9488", "#ca8a04", "#db2777", "#4b5563")
KNOWN_TYPES = {
    "deploy": PALETTE[0],
    "incident": PALETTE[1],
    "monitor": PALETTE[2],
    "config": PALETTE[3],
    # A monitor's state changes, on its own page: red into alerting, green back to ok.
    "triggered": "#dc2626",
    "resolved": "#16a34a",
    "no_data": "#ca8a04",
    "error": "#ea580c",
    "matched": "#2563eb",
}
MIXED = "#4b5563"  # a cluster of markers of several types
MIN_GAP = 8.0  # point markers closer than this (in chart units, of 960) are drawn as one, with a count
# Series colours: distinct from the annotation colours where they can be, so a line is not read as a marker.
SERIES_COLOURS = ("#2563eb", "#0d9488", "#7c3aed", "#ca8a04", "#db2777", "#4b5563", "#ea580c", "#65a30d")

Point = tuple[datetime, float | None]


def type_colour(kind: str) -> str:
    """A stable colour per annotation type: fixed for the common ones, hashed for the rest."""
    if kind in KNOWN_TYPES:
        return KNOWN_TYPES[kind]
    return PALETTE[hashlib.sha256(kind.encode()).digest()[0] % len(PALETTE)]


@dataclass(frozen=True)
class Annotation:
    id: str
    type: str
    title: str
    time: datetime
    end_time: datetime | None = None
    url: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    silence_id: str | None = None  # a rollout's silence, held while its span lasts
    environment_wide: bool = False


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[Point]


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str  # "<time> — <value>" shown on hover


@dataclass(frozen=True)
class Line:
    name: str
    colour: str
    segments: list[str]  # SVG polyline points; an empty bucket breaks the line
    dots: list[tuple[float, float]]  # points with no neighbour to join, drawn as dots


@dataclass(frozen=True)
class Marker:
    id: str
    type: str
    title: str
    url: str | None
    colour: str
    x: float
    width: float  # 0 for a point (drawn as a line), > 0 for a span (drawn as a band)
    time: str
    end_time: str | None
    titles: tuple[str, ...] = ()  # a cluster: every marker's title, oldest first

    @property
    def count(self) -> int:
        return max(1, len(self.titles))


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str
    time: str | None = None  # a time axis tick: its time, which the page shows in the viewer's time zone


@dataclass
class Chart:
    width: int
    height: int
    left: float
    top: float
    plot_width: float
    plot_height: float
    bars: list[Bar] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    threshold: Tick | None = None  # a horizontal line at a monitor's threshold
    start: str = ""
    end: str = ""
    span_seconds: float = 0.0


def nice_ceiling(value: float) -> float:
    """The smallest 1/2/5 x 10^k at or above `value` (and 1 for nothing), for a readable y axis."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value:
            return float(candidate)
    return float(10 ** (exponent + 1))


def format_value(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:,.3g}" if abs(value) >= 1e-3 else f"{value:.3g}"


def _y_range(series: Sequence[Series], extra: Sequence[float] = ()) -> tuple[float, float, float]:
    """Axis bounds and tick step: four or fewer ticks of a 1/2/5 x 10^k step, zero always on the axis."""
    values = [v for s in series for _, v in s.points if v is not None and math.isfinite(v)]
    values += [v for v in extra if math.isfinite(v)]
    high_value = max(values, default=0.0)
    low_value = min(values, default=0.0)
    span = max(high_value, 0.0) - min(low_value, 0.0)
    step = nice_ceiling(span / 4) if span > 0 else 0.25
    high = math.ceil(max(high_value, 0.0) / step) * step
    low = math.floor(min(low_value, 0.0) / step) * step
    if high == low:
        high = low + 4 * step
    return low, high, step


def time_chart(
    series: Sequence[Series],
    *,
    start: datetime,
    end: datetime,
    step_seconds: float,
    annotations: Sequence[Annotation],
    kind: str = "bars",
    width: int = 960,
    height: int = 260,
    threshold: float | None = None,
) -> Chart:
    """Place buckets and annotations on a [start, end) time axis.

    `kind="bars"` draws the first series as bars (event counts); `"line"` draws every series as a line,
    with each point in the middle of its bucket.
    """
    left, top, right, bottom = 64.0, 12.0, 12.0, 28.0
    chart = Chart(width, height, left, top, width - left - right, height - top - bottom)
    span = (end - start).total_seconds() or 1.0

    def x_of(t: datetime) -> float:
        return left + (t - start).total_seconds() / span * chart.plot_width

    y_low, y_high, y_step = _y_range(series, () if threshold is None else (threshold,))

    def y_of(v: float) -> float:
        return top + chart.plot_height * (1 - (v - y_low) / ((y_high - y_low) or 1.0))

    bucket_width = step_seconds / span * chart.plot_width
    if kind == "bars":
        base = y_of(max(y_low, 0.0))
        for t, v in series[0].points if series else ():
            if v is None or not math.isfinite(v) or not start <= t < end:
                continue
            y = y_of(v)
            chart.bars.append(
                Bar(
                    x_of(t),
                    min(y, base),
                    max(1.0, bucket_width - 1),
                    abs(base - y),
                    f"{iso_ms(t)} — {format_value(v)}",
                )
            )
    else:
        for i, s in enumerate(series):
            runs: list[list[tuple[float, float]]] = []
            current: list[tuple[float, float]] = []
            previous: datetime | None = None
            for t, v in sorted(s.points, key=lambda p: p[0]):
                if not start <= t < end:
                    continue
                gap = previous is not None and (t - previous).total_seconds() > step_seconds * 1.5
                if v is None or not math.isfinite(v) or gap:
                    runs.append(current)
                    current = []
                if v is not None and math.isfinite(v):
                    current.append((x_of(t) + bucket_width / 2, y_of(v)))
                previous = t
            runs.append(current)
            chart.lines.append(
                Line(
                    s.name,
                    SERIES_COLOURS[i % len(SERIES_COLOURS)],
                    [" ".join(f"{x:.1f},{y:.1f}" for x, y in run) for run in runs if len(run) > 1],
                    [run[0] for run in runs if len(run) == 1],
                )
            )

    for a in annotations:
        a_end = a.end_time or a.time
        if a_end < start or a.time >= end:
            continue  # entirely outside the range
        x1 = x_of(max(a.time, start))
        x2 = x_of(min(a_end, end))
        chart.markers.append(
            Marker(
                id=a.id,
                type=a.type,
                title=a.title,
                url=a.url if a.url and a.url.startswith(("https://", "http://")) else None,
                colour=type_colour(a.type),
                x=x1,
                width=(x2 - x1) if a.end_time is not None else 0.0,
                time=iso_ms(a.time),
                end_time=iso_ms_or_none(a.end_time),
            )
        )

    chart.markers = cluster(chart.markers)
    if threshold is not None and math.isfinite(threshold):
        chart.threshold = Tick(y_of(threshold), format_value(threshold))
    for i in range(round((y_high - y_low) / y_step) + 1):
        value = y_low + y_step * i
        chart.y_ticks.append(Tick(y_of(value), format_value(value)))
    for i in range(7):
        t = start + (end - start) * i / 6
        fmt = "%H:%M" if span <= 2 * 86400 else "%b %d %H:%M"
        chart.x_ticks.append(Tick(x_of(t), t.strftime(fmt), iso_ms(t)))
    chart.start, chart.end, chart.span_seconds = iso_ms(start), iso_ms(end), span
    return chart


def cluster(markers: Sequence[Marker]) -> list[Marker]:
    """Point markers that would overlap (closer than MIN_GAP, as several deploys or a trigger and its resolve
    near "now" are) drawn as one marker that counts them and lists their titles; bands stay as they are."""
    points = sorted((m for m in markers if m.width == 0), key=lambda m: m.x)
    groups: list[list[Marker]] = []
    for m in points:
        if groups and m.x - groups[-1][0].x < MIN_GAP:
            groups[-1].append(m)
        else:
            groups.append([m])
    out = [m for m in markers if m.width > 0]
    for group in groups:
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        types = {m.type for m in group}
        kind = first.type if len(types) == 1 else "several"
        out.append(
            Marker(
                id=first.id,
                type=kind,
                title=f"{len(group)} × {kind}",
                url=None,
                colour=first.colour if len(types) == 1 else MIXED,
                x=first.x,
                width=0.0,
                time=first.time,
                end_time=group[-1].time if group[-1].time != first.time else None,
                titles=tuple(m.title for m in group),
            )
        )
    return out
