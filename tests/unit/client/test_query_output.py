"""`beacon query` output formats, from a result as the service returns it."""

from __future__ import annotations

import csv
import io
import json

import msgspec

from beacon_client import QueryResult
from beacon_client.cli.output import render_rows

RESULT = msgspec.json.decode(
    json.dumps(
        {
            "object": "query_result",
            "columns": [
                {"name": "_time", "type": "datetime"},
                {"name": "service", "type": "string"},
                {"name": "count_", "type": "long"},
                {"name": "tags", "type": "dynamic"},
            ],
            "rows": [
                ["2026-11-21T08:00:00.000Z", "api", 1200, ["a", "b"]],
                ["2026-11-21T08:01:00.000Z", 'web, "edge"', 7, None],
            ],
            "status": {"rows_examined": 5000, "rows_returned": 2, "truncated": True, "elapsed_ms": 12.5},
        }
    ),
    type=QueryResult,
)


def test_table_aligns_columns_and_right_aligns_numbers():
    lines = render_rows(RESULT, "table").splitlines()
    assert lines[0].split() == ["_time", "service", "count_", "tags"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].startswith("2026-11-21T08:00:00.000Z  api") and '["a","b"]' in lines[2]
    # count_ is numeric: right-aligned in its column.
    col = lines[0].index("count_")
    assert lines[2][col : col + 6] == "  1200" and lines[3][col : col + 6] == "     7"
    assert lines[-1] == "(2 rows, truncated: raise take or narrow the query, 12.5 ms)"


def test_json_and_ndjson_are_row_objects():
    records = json.loads(render_rows(RESULT, "json"))
    assert records[0] == {"_time": "2026-11-21T08:00:00.000Z", "service": "api", "count_": 1200, "tags": ["a", "b"]}
    lines = render_rows(RESULT, "ndjson").splitlines()
    assert [json.loads(line) for line in lines] == records


def test_csv_quotes_and_encodes_nested_values():
    rows = list(csv.reader(io.StringIO(render_rows(RESULT, "csv"))))
    assert rows[0] == ["_time", "service", "count_", "tags"]
    assert rows[1] == ["2026-11-21T08:00:00.000Z", "api", "1200", '["a","b"]']
    assert rows[2] == ["2026-11-21T08:01:00.000Z", 'web, "edge"', "7", ""]
