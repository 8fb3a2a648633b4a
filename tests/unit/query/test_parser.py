"""The parser: every operator and function, precedence, quoting, and errors that say where and what."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.query import ast
from app.query.errors import QueryError, line_column, to_beacon_error
from app.query.parser import parse
from tests.unit.query.sexpr import named, sx


def where(text: str) -> str:
    """The S-expression of a `where` predicate."""
    op = parse(f"['d'] | where {text}").operators[0]
    assert isinstance(op, ast.Where)
    return sx(op.predicate)


def error(text: str) -> tuple[str, int, int]:
    with pytest.raises(QueryError) as info:
        parse(text)
    line, column = line_column(text, info.value.pos)
    return info.value.message, line, column


# ---- dataset references -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("['web-logs']", "web-logs"),
        ('["web-logs"]', "web-logs"),
        ("web_logs", "web_logs"),
        ("web.logs", "web.logs"),
        ("  ['a b']  ", "a b"),  # parses; the service rejects the name as not a dataset name
    ],
)
def test_dataset_reference(text: str, name: str) -> None:
    query = parse(text)
    assert query.dataset == name
    assert query.operators == ()


# ---- operators ----------------------------------------------------------------------------------------


def test_where_extend_project_project_away() -> None:
    q = parse("['d'] | where a > 1 | extend b = a * 2, a + 1 | project a, c = b | project-away a, ['c']")
    w, e, p, pa = q.operators
    assert isinstance(w, ast.Where) and sx(w.predicate) == "(> <a> 1)"
    assert isinstance(e, ast.Extend) and named(e.items) == ["b=(* <a> 2)", "(+ <a> 1)"]
    assert isinstance(p, ast.Project) and named(p.items) == ["<a>", "c=<b>"]
    assert isinstance(pa, ast.ProjectAway) and [f.name for f in pa.names] == ["a", "c"]


def test_summarize_forms() -> None:
    q = parse(
        "['d'] | summarize count(), n = countif(x > 1), avg(d) by bin(_time, 1m), service"
        " | summarize by service | summarize sum(x)"
    )
    s1, s2, s3 = q.operators
    assert isinstance(s1, ast.Summarize)
    assert named(s1.aggregates) == ["count()", "n=countif((> <x> 1))", "avg(<d>)"]
    assert named(s1.by) == ["bin(<_time>, timespan(60s))", "<service>"]
    assert isinstance(s2, ast.Summarize) and s2.aggregates == () and named(s2.by) == ["<service>"]
    assert isinstance(s3, ast.Summarize) and s3.by == () and named(s3.aggregates) == ["sum(<x>)"]


def test_every_aggregation_parses() -> None:
    q = parse(
        "['d'] | summarize count(), countif(ok), sum(x), avg(x), min(x), max(x), dcount(u), "
        "percentile(x, 95), make_set(s)"
    )
    op = q.operators[0]
    assert isinstance(op, ast.Summarize)
    assert named(op.aggregates) == [
        "count()",
        "countif(<ok>)",
        "sum(<x>)",
        "avg(<x>)",
        "min(<x>)",
        "max(<x>)",
        "dcount(<u>)",
        "percentile(<x>, 95)",
        "make_set(<s>)",
    ]


def test_sort_order_take_limit_top_count_distinct() -> None:
    q = parse(
        "['d'] | sort by a asc, b desc nulls first, c | order by d | take 5 | limit 7 "
        "| top 3 by x asc nulls last | count | distinct a, b"
    )
    sort, order, take, limit, top, count, distinct = q.operators
    assert isinstance(sort, ast.Sort)
    assert [(sx(k.expr), k.descending, k.nulls_first) for k in sort.keys] == [
        ("<a>", False, None),
        ("<b>", True, True),
        ("<c>", True, None),  # descending is the default
    ]
    assert isinstance(order, ast.Sort) and order.keys[0].descending
    assert isinstance(take, ast.Take) and take.count == 5
    assert isinstance(limit, ast.Take) and limit.count == 7
    assert isinstance(top, ast.Top) and top.count == 3 and not top.key.descending and top.key.nulls_first is False
    assert isinstance(count, ast.Count)
    assert isinstance(distinct, ast.Distinct) and named(distinct.items) == ["<a>", "<b>"]


# ---- scalar operators and precedence ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a == 1", "(== <a> 1)"),
        ("a != 1", "(!= <a> 1)"),
        ("a <> 1", "(!= <a> 1)"),
        ("a < 1", "(< <a> 1)"),
        ("a <= 1", "(<= <a> 1)"),
        ("a > 1", "(> <a> 1)"),
        ("a >= 1", "(>= <a> 1)"),
        ("a =~ 'X'", "(=~ <a> 'X')"),
        ("a !~ 'X'", "(!~ <a> 'X')"),
        ("a in (1, 'b', true)", "(in <a> [1, 'b', True])"),
        ("a !in ('x')", "(!in <a> ['x'])"),
        ("a contains 'x'", "(contains <a> 'x')"),
        ("a !contains 'x'", "(!contains <a> 'x')"),
        ("a contains_cs 'x'", "(contains_cs <a> 'x')"),
        ("a startswith 'x'", "(startswith <a> 'x')"),
        ("a !startswith 'x'", "(!startswith <a> 'x')"),
        ("a endswith 'x'", "(endswith <a> 'x')"),
        ("a has 'x'", "(has <a> 'x')"),
        ("a !has 'x'", "(!has <a> 'x')"),
        ("a matches regex '^x+$'", "(matches regex <a> '^x+$')"),
        ("a between (1 .. 5)", "(between <a> 1 5)"),
        ("a !between (1..5)", "(!between <a> 1 5)"),
        ("a between (ago(1h) .. now())", "(between <a> ago(timespan(3600s)) now())"),
        ("isnull(a)", "isnull(<a>)"),
        ("isnotnull(a)", "isnotnull(<a>)"),
        ("not(a)", "(not <a>)"),
        ("not a == 1", "(not (== <a> 1))"),
    ],
)
def test_scalar_operators(text: str, tree: str) -> None:
    assert where(text) == tree


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a or b and c", "(or <a> (and <b> <c>))"),
        ("a and b or c", "(or (and <a> <b>) <c>)"),
        ("not a and b", "(and (not <a>) <b>)"),
        ("not (a and b)", "(not (and <a> <b>))"),
        ("a == 1 or b == 2 and c == 3", "(or (== <a> 1) (and (== <b> 2) (== <c> 3)))"),
        ("1 + 2 * 3 > 4", "(> (+ 1 (* 2 3)) 4)"),
        ("(1 + 2) * 3", "(* (+ 1 2) 3)"),
        ("a - b - c", "(- (- <a> <b>) <c>)"),
        ("a / b * c % d", "(% (* (/ <a> <b>) <c>) <d>)"),
        ("-a * 2", "(* (- <a>) 2)"),
        ("-5 + -1.5", "(+ -5 -1.5)"),
        ("x + 1 between (2 .. 3 + 1)", "(between (+ <x> 1) 2 (+ 3 1))"),
        ("a contains 'x' and b has 'y'", "(and (contains <a> 'x') (has <b> 'y'))"),
    ],
)
def test_precedence(text: str, tree: str) -> None:
    assert where(text) == tree


# ---- literals and names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ('a == "dq"', "(== <a> 'dq')"),
        ("a == 'sq'", "(== <a> 'sq')"),
        (r"a == 'it\'s'", '(== <a> "it\'s")'),
        (r'a == "say \"hi\""', "(== <a> 'say \"hi\"')"),
        (r"a == 'tab\there'", "(== <a> 'tab\\there')"),
        (r'a == @"C:\dir"', "(== <a> 'C:\\\\dir')"),
        ('a == @"say ""hi"""', "(== <a> 'say \"hi\"')"),
        ("a == 42", "(== <a> 42)"),
        ("a == 4.5", "(== <a> 4.5)"),
        ("a == 1e3", "(== <a> 1000.0)"),
        ("a == .5", "(== <a> 0.5)"),
        ("a == true", "(== <a> True)"),
        ("a == false", "(== <a> False)"),
        ("a == null", "(== <a> None)"),
        ("a > 5m", "(> <a> timespan(300s))"),
        ("a > 1.5h", "(> <a> timespan(5400s))"),
        ("a > 2d", "(> <a> timespan(172800s))"),
        ("a > 10s", "(> <a> timespan(10s))"),
        ("a > 100ms", "(> <a> timespan(0.1s))"),
        ("a > 250us", "(> <a> timespan(0.00025s))"),
        ("_time > datetime(2026-11-21T10:00:00Z)", "(> <_time> datetime(2026-11-21T10:00:00+00:00))"),
        ("_time > datetime(2026-11-21 10:00:00)", "(> <_time> datetime(2026-11-21T10:00:00+00:00))"),
        ("_time > datetime(2026-11-21T12:00:00+02:00)", "(> <_time> datetime(2026-11-21T10:00:00+00:00))"),
        ('_time > datetime("2026-11-21")', "(> <_time> datetime(2026-11-21T00:00:00+00:00))"),
        ("http.status == 1", "(== <http.status> 1)"),
        ("['http.status'] == 1", "(== <http.status> 1)"),
        ("['any name'] == 1", "(== <any name> 1)"),
        ('["where"] == 1', "(== <where> 1)"),
        ("['http'].status == 1", "(== <http.status> 1)"),
        ("a.b['c d'].e == 1", "(== <a.b.c d.e> 1)"),
        ("_sysTime > ago(5m)", "(> <_sysTime> ago(timespan(300s)))"),
        ("count > 1", "(> <count> 1)"),  # an operator's name is a field name inside an expression
    ],
)
def test_literals_and_names(text: str, tree: str) -> None:
    assert where(text) == tree


def test_datetime_literal_value() -> None:
    op = parse("['d'] | where _time < datetime(2026-11-21T10:00:00.5Z)").operators[0]
    assert isinstance(op, ast.Where) and isinstance(op.predicate, ast.Binary)
    lit = op.predicate.right
    assert isinstance(lit, ast.Literal)
    assert lit.value == datetime(2026, 11, 21, 10, 0, 0, 500000, tzinfo=UTC)


def test_timespan_value_and_negation() -> None:
    op = parse("['d'] | where x > -90s").operators[0]
    assert isinstance(op, ast.Where) and isinstance(op.predicate, ast.Binary)
    lit = op.predicate.right
    assert isinstance(lit, ast.Literal) and lit.value == timedelta(seconds=-90)


def test_comments_and_newlines() -> None:
    q = parse("['d'] // the dataset\n| where a == 1 // errors only\n| count")
    assert [type(o).__name__ for o in q.operators] == ["Where", "Count"]


def test_keywords_are_case_sensitive_names() -> None:
    # `AND` is not `and`: it reads as a field, and the query has a field right after a complete expression.
    msg, line, col = error("['d'] | where a == 1 AND b == 2")
    assert (line, col) == (1, 22)
    assert "expected '|' or the end of the query" in msg


# ---- errors with positions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("", 1, 1, "expected a dataset reference"),
        ("['d'] | wher x", 1, 9, "expected an operator (where, extend"),
        ("['d'] | where", 1, 14, "expected an expression, found the end of the query"),
        ("['d'] | where a ==", 1, 19, "expected an expression"),
        ("['d'] | where (a == 1", 1, 22, "expected ')' to close '('"),
        ("['d']\n| where a == 1\n| take x", 3, 8, "expected a whole number of rows after 'take'"),
        ("['d'] | where a == 'open", 1, 20, "unterminated string literal"),
        ("['d'] | where a == 'x\\q'", 1, 22, "unknown escape sequence"),
        ("['d'] | where a > 5 parsecs", 1, 21, "expected '|' or the end of the query, found 'parsecs'"),
        ("['d'] | where a > 5xs", 1, 20, "unknown timespan unit 'xs'"),
        ("['d'] | where a # 1", 1, 17, "unexpected character '#'"),
        ("['d'] | sort a", 1, 14, "expected 'by' after 'sort'"),
        ("['d'] | top 5 x", 1, 15, "expected 'by' after 'top N'"),
        ("['d'] | summarize", 1, 18, "expected an aggregation such as count() or 'by'"),
        ("['d'] | where a in 1", 1, 20, "expected '(' after 'in'"),
        ("['d'] | where a between (1, 2)", 1, 27, "expected '..'"),
        ("['d'] | where a matches 'x'", 1, 25, "expected 'regex' after 'matches'"),
        ("['d'] | extend 1 = 2", 1, 16, "expected a column name before '='"),
        ("['d'] | where f(1,", 1, 19, "expected an expression"),
        ("['d'] | where _time > datetime(yesterday)", 1, 32, "invalid datetime 'yesterday'"),
        ("['d'] | where [1] == 1", 1, 16, "expected a quoted name inside [ ]"),
        ("['d'] | where [''] == 1", 1, 16, "a field name cannot be empty"),
        ("[d] | count", 1, 2, "expected a quoted dataset name"),
        ("['d'] | project-away 1", 1, 22, "expected a field name"),
        ("['d'] | sort by a nulls middle", 1, 25, "expected 'first' or 'last' after 'nulls'"),
        ("['d'] | take 5 | ", 1, 18, "expected an operator"),
        ("['d'] | where a == 1 |", 1, 23, "expected an operator"),
        ("['d']\n\n  | where a == \"x\0\"", 3, 18, "NUL character"),
        ("['d'] | take 99999999999999999999", 1, 14, "row count 99999999999999999999 is out of range"),
        ("['d'] | where a > 1e999", 1, 19, "number 1e999 is out of range"),
        ("['d'] | where a > 9999999999999d", 1, 19, "timespan 9999999999999d is out of range"),
    ],
)
def test_errors_give_line_column_and_expectation(text: str, line: int, column: int, fragment: str) -> None:
    msg, got_line, got_column = error(text)
    assert fragment in msg
    assert (got_line, got_column) == (line, column), msg


def test_error_message_for_the_client_names_line_and_column() -> None:
    text = "['d']\n| where a ==\n| count"
    with pytest.raises(QueryError) as info:
        parse(text)
    err = to_beacon_error(text, info.value)
    assert err.code == "invalid_query" and err.param == "apl"
    assert err.message == "Line 3, column 1: expected an expression, found '|'."


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    msg, _, _ = error("['d'] | where " + "(" * 5000 + "a" + ")" * 5000)
    assert "nested too deeply" in msg
    msg, _, _ = error("['d'] | where " + " + ".join(["a"] * 5000) + " > 1")
    assert "too deeply nested" in msg
    msg, _, _ = error("['d'] | where " + "not " * 5000 + "a")
    assert "nested too deeply" in msg
    msg, _, _ = error("['d'] | where " + "-" * 5000 + "a > 1")
    assert "nested too deeply" in msg
