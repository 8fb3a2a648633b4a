"""Query results on the console: tables always, lines when a result has `_time` and numbers."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.errors import BeaconError
from app.query.schemas import ColumnOut, QueryResult, QueryStatus
from app.ui.service import cell, chart_query, quote_name, result_view


def _result(columns, rows):
    status = QueryStatus(
        rows_examined=None, rows_returned=len(rows), truncated=False, elapsed_ms=1.0, min_time=None, max_time=None
    )
    return QueryResult(columns=[ColumnOut(n, t) for n, t in columns], rows=rows, status=status)


def test_chart_queries_use_the_pipeline_language():
    assert chart_query("web", "5m", "count", None) == "['web'] | summarize count() by bin(_time, 5m)"
    assert chart_query("web", "1h", "p95", "duration_ms") == (
        "['web'] | summarize percentile(['duration_ms'], 95) by bin(_time, 1h)"
    )
    assert quote_name("it's\\x") == "['it\\'s\\\\x']"


@pytest.mark.parametrize(("fn", "field", "param"), [("median", "x", "fn"), ("avg", None, "field")])
def test_chart_query_errors_name_the_parameter(fn, field, param):
    with pytest.raises(BeaconError) as info:
        chart_query("web", "5m", fn, field)
    assert info.value.param == param


def test_a_time_series_by_group_becomes_one_line_per_group():
    result = _result(
        [("_time", "datetime"), ("service", "string"), ("count_", "long")],
        [
            ["2026-11-21T10:00:00.000Z", "api", 3],
            ["2026-11-21T10:00:00.000Z", "web", 1],
            ["2026-11-21T10:05:00.000Z", "api", 4],
        ],
    )
    view = result_view(result, timedelta(minutes=1))
    assert [s.name for s in view.series] == ["api · count_", "web · count_"]
    assert [v for _, v in view.series[0].points] == [3.0, 4.0]
    assert view.step_seconds == 300  # read from the data, not the default
    assert view.rows[1] == ["2026-11-21T10:00:00.000Z", "web", "1"]


def test_results_without_time_or_numbers_are_tables_only():
    counted = _result([("service", "string"), ("count_", "long")], [["api", 3]])
    events = _result([("_time", "datetime"), ("msg", "string")], [["2026-11-21T10:00:00.000Z", "hello"]])
    assert result_view(counted, timedelta(minutes=5)).series == []
    assert result_view(events, timedelta(minutes=5)).series == []
    nested = _result([("tags", "dynamic"), ("flag", "bool")], [[["a", "b"], True]])
    assert result_view(nested, timedelta(minutes=5)).rows == [['["a","b"]', "true"]]


def test_cells_show_json_values_exactly() -> None:
    assert cell([2**70 + 1, {"a": None}]) == '[1180591620717411303425,{"a":null}]'
