"""The parsed query: a dataset reference and a list of tabular operators over scalar expressions.

Every node keeps `pos`, the offset in the query text, so that type errors found later by the compiler can
still name a line and column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

# ---- scalar expressions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    """`kind` is one of string, long, real, bool, null, datetime, timespan."""

    kind: str
    value: str | int | float | bool | datetime | timedelta | None
    pos: int


@dataclass(frozen=True)
class Field:
    """A column or event field; dotted paths are joined (`http.status`), `['any name']` kept as written."""

    name: str
    pos: int


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Expr, ...]
    pos: int


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "not"
    operand: Expr
    pos: int


@dataclass(frozen=True)
class Binary:
    """Arithmetic (+ - * / %), comparison (== != < <= > >= =~ !~), logic (and or) and string operators
    (contains, !contains, startswith, endswith, has, their _cs forms, `matches regex`)."""

    op: str
    left: Expr
    right: Expr
    pos: int


@dataclass(frozen=True)
class InList:
    operand: Expr
    items: tuple[Expr, ...]
    negated: bool
    pos: int


@dataclass(frozen=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr
    negated: bool
    pos: int


Expr = Literal | Field | Call | Unary | Binary | InList | Between


@dataclass(frozen=True)
class Named:
    """`name = expr`, or `expr` alone (name None: the compiler derives one)."""

    name: str | None
    expr: Expr
    pos: int


@dataclass(frozen=True)
class SortKey:
    expr: Expr
    descending: bool
    nulls_first: bool | None  # None: the default for the direction
    pos: int


# ---- tabular operators --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    predicate: Expr
    pos: int


@dataclass(frozen=True)
class Extend:
    items: tuple[Named, ...]
    pos: int


@dataclass(frozen=True)
class Project:
    items: tuple[Named, ...]
    pos: int


@dataclass(frozen=True)
class ProjectAway:
    names: tuple[Field, ...]
    pos: int


@dataclass(frozen=True)
class Summarize:
    aggregates: tuple[Named, ...]
    by: tuple[Named, ...]
    pos: int


@dataclass(frozen=True)
class Sort:
    keys: tuple[SortKey, ...]
    pos: int


@dataclass(frozen=True)
class Take:
    count: int
    pos: int


@dataclass(frozen=True)
class Top:
    count: int
    key: SortKey
    pos: int


@dataclass(frozen=True)
class Count:
    pos: int


@dataclass(frozen=True)
class Distinct:
    items: tuple[Named, ...]
    pos: int


Operator = Where | Extend | Project | ProjectAway | Summarize | Sort | Take | Top | Count | Distinct


@dataclass(frozen=True)
class Query:
    dataset: str
    dataset_pos: int
    operators: tuple[Operator, ...] = field(default_factory=tuple)


# ---- traversal ----------------------------------------------------------------------------------------


def expressions_of(op: Operator) -> list[Expr]:
    """The scalar expressions an operator holds."""
    if isinstance(op, Where):
        return [op.predicate]
    if isinstance(op, (Extend, Project, Distinct)):
        return [item.expr for item in op.items]
    if isinstance(op, Summarize):
        return [item.expr for item in (*op.aggregates, *op.by)]
    if isinstance(op, Sort):
        return [key.expr for key in op.keys]
    if isinstance(op, Top):
        return [op.key.expr]
    return []


def children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, InList):
        return (node.operand, *node.items)
    if isinstance(node, Between):
        return (node.operand, node.low, node.high)
    return ()
