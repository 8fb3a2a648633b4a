"""Recursive-descent parser for the pipeline query language; the grammar is written out in GRAMMAR.md.

Each grammar rule is the method of the same name (`field` is `field_path`, `part` is `path_part`). Errors
say what was expected and what was found, at the offending token's position (the caller turns that into
line and column).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NoReturn

from app.query import ast
from app.query.errors import QueryError
from app.query.lexer import STRING_OPS, Kind, Lexer, Token

OPERATORS = (
    "where",
    "extend",
    "project",
    "project-away",
    "summarize",
    "sort",
    "order",
    "take",
    "limit",
    "top",
    "count",
    "distinct",
)
_COMPARISONS = ("==", "!=", "<>", "<", "<=", ">", ">=", "=~", "!~")
_NEGATED_STRING_OPS = tuple("!" + op for op in STRING_OPS)
# Words that end an expression list or start an operator-level clause; never read as field names there.
_RESERVED = {"and", "or", "by", "asc", "desc", "in", "between", "matches", *STRING_OPS}
# Bounds on recursion for pathological input (10,000 nested parentheses, `a+a+...+a` 50,000 times): the parser
# and the compiler recurse once per level, far below Python's recursion limit at these depths.
MAX_DEPTH = 64
MAX_TREE_DEPTH = 128


def parse(source: str) -> ast.Query:
    query = _Parser(source).query()
    for op in query.operators:
        for expr in ast.expressions_of(op):
            _check_depth(expr)
    return query


def _check_depth(root: ast.Expr) -> None:
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise QueryError(f"expression too deeply nested (more than {MAX_TREE_DEPTH} levels)", node.pos)
        stack.extend((child, depth + 1) for child in ast.children(node))


def parse_datetime(text: str, pos: int) -> datetime:
    """The body of `datetime(...)`: ISO 8601 / RFC 3339; a value without an offset is UTC."""
    cleaned = text.strip()
    if len(cleaned) >= 2 and cleaned[0] == cleaned[-1] and cleaned[0] in "\"'":
        cleaned = cleaned[1:-1]
    try:
        value = datetime.fromisoformat(cleaned)
    except ValueError:
        raise QueryError(
            f"invalid datetime {cleaned!r}: use RFC 3339 such as datetime(2026-11-21T10:00:00Z)", pos
        ) from None
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the year 1 in UTC
        raise QueryError(f"datetime {cleaned!r} is out of range (years 1 to 9999 in UTC)", pos) from None


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lexer = Lexer(source)
        self.buffer: list[Token] = []
        self.depth = 0

    # ---- token helpers --------------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        while len(self.buffer) <= ahead:
            self.buffer.append(self.lexer.next())
        return self.buffer[ahead]

    def advance(self) -> Token:
        tok = self.peek()
        self.buffer.pop(0)
        return tok

    def at_op(self, *symbols: str) -> bool:
        tok = self.peek()
        return tok.kind is Kind.OP and tok.text in symbols

    def at_word(self, *words: str) -> bool:
        tok = self.peek()
        return tok.kind is Kind.IDENT and tok.text in words

    def expect_op(self, symbol: str, context: str) -> Token:
        if not self.at_op(symbol):
            self.fail(f"expected '{symbol}' {context}")
        return self.advance()

    def expect_word(self, word: str, context: str) -> Token:
        if not self.at_word(word):
            self.fail(f"expected '{word}' {context}")
        return self.advance()

    def fail(self, expected: str) -> NoReturn:
        tok = self.peek()
        raise QueryError(f"{expected}, found {tok.describe()}", tok.pos)

    # ---- query and operators --------------------------------------------------------------------------

    def query(self) -> ast.Query:
        dataset, pos = self.dataset()
        operators: list[ast.Operator] = []
        while self.at_op("|"):
            self.advance()
            operators.append(self.operator())
        if self.peek().kind is not Kind.EOF:
            self.fail("expected '|' or the end of the query")
        return ast.Query(dataset=dataset, dataset_pos=pos, operators=tuple(operators))

    def dataset(self) -> tuple[str, int]:
        tok = self.peek()
        if self.at_op("["):
            self.advance()
            name_tok = self.advance()
            if name_tok.kind is not Kind.STRING:
                raise QueryError(
                    f"expected a quoted dataset name such as ['web-logs'], found {name_tok.describe()}", name_tok.pos
                )
            self.expect_op("]", "after the dataset name")
            return str(name_tok.value), tok.pos
        if tok.kind is Kind.IDENT:
            return self.advance().text, tok.pos
        self.fail("expected a dataset reference such as ['web-logs']")

    def operator(self) -> ast.Operator:
        tok = self.peek()
        if tok.kind is not Kind.IDENT or tok.text not in OPERATORS:
            self.fail(f"expected an operator ({', '.join(OPERATORS)}) after '|'")
        word = self.advance().text
        pos = tok.pos
        if word == "where":
            return ast.Where(self.expr(), pos)
        if word == "extend":
            return ast.Extend(self.named_list("extend"), pos)
        if word == "project":
            return ast.Project(self.named_list("project"), pos)
        if word == "project-away":
            return ast.ProjectAway(self.field_list(), pos)
        if word == "summarize":
            return self.summarize(pos)
        if word in ("sort", "order"):
            self.expect_word("by", f"after '{word}'")
            keys = [self.sort_key()]
            while self.at_op(","):
                self.advance()
                keys.append(self.sort_key())
            return ast.Sort(tuple(keys), pos)
        if word in ("take", "limit"):
            return ast.Take(self.row_count(word), pos)
        if word == "top":
            count = self.row_count("top")
            self.expect_word("by", "after 'top N'")
            return ast.Top(count, self.sort_key(), pos)
        if word == "count":
            return ast.Count(pos)
        return ast.Distinct(self.named_list("distinct"), pos)

    def row_count(self, word: str) -> int:
        tok = self.peek()
        if tok.kind is not Kind.LONG:
            self.fail(f"expected a whole number of rows after '{word}'")
        self.advance()
        count = int(tok.value)  # type: ignore[call-overload]
        if count > 2**63 - 1:
            raise QueryError(f"row count {tok.text} is out of range", tok.pos)
        return count

    def summarize(self, pos: int) -> ast.Summarize:
        aggregates: tuple[ast.Named, ...] = ()
        if self.peek().kind is Kind.EOF or self.at_op("|"):
            self.fail("expected an aggregation such as count() or 'by' after 'summarize'")
        if not self.at_word("by"):
            aggregates = self.named_list("summarize")
        by: tuple[ast.Named, ...] = ()
        if self.at_word("by"):
            self.advance()
            by = self.named_list("summarize ... by")
        return ast.Summarize(aggregates, by, pos)

    def sort_key(self) -> ast.SortKey:
        pos = self.peek().pos
        expr = self.expr()
        descending = True  # the language's default order is descending
        if self.at_word("asc", "desc"):
            descending = self.advance().text == "desc"
        nulls_first: bool | None = None
        if self.at_word("nulls"):
            self.advance()
            if not self.at_word("first", "last"):
                self.fail("expected 'first' or 'last' after 'nulls'")
            nulls_first = self.advance().text == "first"
        return ast.SortKey(expr, descending, nulls_first, pos)

    def named_list(self, context: str) -> tuple[ast.Named, ...]:
        items = [self.named(context)]
        while self.at_op(","):
            self.advance()
            items.append(self.named(context))
        return tuple(items)

    def named(self, context: str) -> ast.Named:
        tok = self.peek()
        if tok.kind is Kind.EOF or self.at_op("|"):
            self.fail(f"expected an expression after '{context}'")
        expr = self.expr()
        if self.at_op("="):  # `name = expr`: the left side must be a plain name
            if not isinstance(expr, ast.Field):
                raise QueryError("expected a column name before '='", tok.pos)
            self.advance()
            return ast.Named(expr.name, self.expr(), tok.pos)
        return ast.Named(None, expr, tok.pos)

    def field_list(self) -> tuple[ast.Field, ...]:
        fields = [self.field_name()]
        while self.at_op(","):
            self.advance()
            fields.append(self.field_name())
        return tuple(fields)

    def field_name(self) -> ast.Field:
        tok = self.peek()
        if tok.kind is Kind.IDENT and tok.text not in _RESERVED:
            return self.field_path()
        if self.at_op("["):
            return self.field_path()
        self.fail("expected a field name")

    # ---- expressions ----------------------------------------------------------------------------------

    def expr(self) -> ast.Expr:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError("expression nested too deeply", self.peek().pos)
        try:
            return self.or_expr()
        finally:
            self.depth -= 1

    def or_expr(self) -> ast.Expr:
        left = self.and_expr()
        while self.at_word("or"):
            tok = self.advance()
            left = ast.Binary("or", left, self.and_expr(), tok.pos)
        return left

    def and_expr(self) -> ast.Expr:
        left = self.not_expr()
        while self.at_word("and"):
            tok = self.advance()
            left = ast.Binary("and", left, self.not_expr(), tok.pos)
        return left

    def not_expr(self) -> ast.Expr:
        if self.at_word("not") and not self.at_op_ahead(1, "=", "==", "!=", ",", ")", "|"):
            tok = self.advance()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise QueryError("expression nested too deeply", tok.pos)
            try:
                return ast.Unary("not", self.not_expr(), tok.pos)
            finally:
                self.depth -= 1
        return self.comparison()

    def at_op_ahead(self, ahead: int, *symbols: str) -> bool:
        tok = self.peek(ahead)
        return (tok.kind is Kind.OP and tok.text in symbols) or tok.kind is Kind.EOF

    def comparison(self) -> ast.Expr:
        left = self.additive()
        tok = self.peek()
        if tok.kind is Kind.OP and tok.text in _COMPARISONS:
            self.advance()
            op = "!=" if tok.text == "<>" else tok.text
            return ast.Binary(op, left, self.additive(), tok.pos)
        if self.at_word("in") or self.at_op("!in"):
            self.advance()
            self.expect_op("(", f"after '{tok.text}'")
            items = [self.expr()]
            while self.at_op(","):
                self.advance()
                items.append(self.expr())
            self.expect_op(")", f"to close the '{tok.text}' list")
            return ast.InList(left, tuple(items), tok.text == "!in", tok.pos)
        if self.at_word("between") or self.at_op("!between"):
            self.advance()
            self.expect_op("(", f"after '{tok.text}'")
            low = self.additive()
            self.expect_op("..", "between the bounds of 'between (low .. high)'")
            high = self.additive()
            self.expect_op(")", "to close 'between (low .. high)'")
            return ast.Between(left, low, high, tok.text == "!between", tok.pos)
        if (tok.kind is Kind.IDENT and tok.text in STRING_OPS) or (
            tok.kind is Kind.OP and tok.text in _NEGATED_STRING_OPS
        ):
            self.advance()
            return ast.Binary(tok.text, left, self.additive(), tok.pos)
        if self.at_word("matches"):
            self.advance()
            self.expect_word("regex", "after 'matches'")
            return ast.Binary("matches regex", left, self.additive(), tok.pos)
        return left

    def additive(self) -> ast.Expr:
        left = self.multiplicative()
        while self.at_op("+", "-"):
            tok = self.advance()
            left = ast.Binary(tok.text, left, self.multiplicative(), tok.pos)
        return left

    def multiplicative(self) -> ast.Expr:
        left = self.unary()
        while self.at_op("*", "/", "%"):
            tok = self.advance()
            left = ast.Binary(tok.text, left, self.unary(), tok.pos)
        return left

    def unary(self) -> ast.Expr:
        if self.at_op("-", "+"):
            tok = self.advance()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise QueryError("expression nested too deeply", tok.pos)
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            if tok.text == "+":
                return operand
            # Fold `-5`, `-1.5`, `-1h` into literals so that they can be used where a constant is required.
            if isinstance(operand, ast.Literal) and operand.kind in ("long", "real", "timespan"):
                return ast.Literal(operand.kind, -operand.value, tok.pos)  # type: ignore[operator]
            return ast.Unary("-", operand, tok.pos)
        return self.primary()

    def primary(self) -> ast.Expr:
        tok = self.peek()
        if tok.kind is Kind.STRING:
            self.advance()
            return ast.Literal("string", tok.value, tok.pos)  # type: ignore[arg-type]
        if tok.kind is Kind.LONG:
            self.advance()
            return ast.Literal("long", tok.value, tok.pos)  # type: ignore[arg-type]
        if tok.kind is Kind.REAL:
            self.advance()
            return ast.Literal("real", tok.value, tok.pos)  # type: ignore[arg-type]
        if tok.kind is Kind.TIMESPAN:
            self.advance()
            return ast.Literal("timespan", tok.value, tok.pos)  # type: ignore[arg-type]
        if self.at_op("("):
            self.advance()
            inner = self.expr()
            self.expect_op(")", "to close '('")
            return inner
        if self.at_op("["):
            return self.field_path()
        if tok.kind is Kind.IDENT:
            if tok.text in ("true", "false"):
                self.advance()
                return ast.Literal("bool", tok.text == "true", tok.pos)
            if tok.text == "null":
                self.advance()
                return ast.Literal("null", None, tok.pos)
            if self.peek(1).kind is Kind.OP and self.peek(1).text == "(":
                return self.call()
            if tok.text in _RESERVED:
                self.fail("expected an expression")
            return self.field_path()
        self.fail("expected an expression")

    def call(self) -> ast.Expr:
        name_tok = self.advance()
        self.advance()  # "("
        if name_tok.text == "datetime":
            text, pos = self.lexer.raw_until_close_paren()
            self.expect_op(")", "to close 'datetime('")
            return ast.Literal("datetime", parse_datetime(text, pos), name_tok.pos)
        args: list[ast.Expr] = []
        if not self.at_op(")"):
            args.append(self.expr())
            while self.at_op(","):
                self.advance()
                args.append(self.expr())
        self.expect_op(")", f"to close '{name_tok.text}('")
        return ast.Call(name_tok.text, tuple(args), name_tok.pos)

    def field_path(self) -> ast.Field:
        """`a.b.c`, `['any name']`, or a mix (`['http'].status`): the parts joined with '.'."""
        start = self.peek().pos
        parts = [self.path_part()]
        while True:
            if self.at_op("["):
                parts.append(self.path_part())
            elif self.at_op("."):
                self.advance()
                parts.append(self.path_part())
            else:
                return ast.Field(".".join(parts), start)

    def path_part(self) -> str:
        tok = self.peek()
        if self.at_op("["):
            self.advance()
            name = self.advance()
            if name.kind is not Kind.STRING:
                raise QueryError(f"expected a quoted name inside [ ], found {name.describe()}", name.pos)
            self.expect_op("]", "after the quoted name")
            if not name.value:
                raise QueryError("a field name cannot be empty", name.pos)
            return str(name.value)
        if tok.kind is Kind.IDENT:
            self.advance()
            return tok.text
        self.fail("expected a field name")
