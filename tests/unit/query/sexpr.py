"""AST to a compact S-expression, so parser tests can state the expected tree in one line."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.query import ast


def sx(node: ast.Expr) -> str:
    if isinstance(node, ast.Literal):
        if isinstance(node.value, datetime):
            return f"datetime({node.value.isoformat()})"
        if isinstance(node.value, timedelta):
            return f"timespan({node.value.total_seconds():g}s)"
        return repr(node.value)
    if isinstance(node, ast.Field):
        return f"<{node.name}>"
    if isinstance(node, ast.Call):
        return f"{node.name}({', '.join(sx(a) for a in node.args)})"
    if isinstance(node, ast.Unary):
        return f"({node.op} {sx(node.operand)})"
    if isinstance(node, ast.Binary):
        return f"({node.op} {sx(node.left)} {sx(node.right)})"
    if isinstance(node, ast.InList):
        return f"({'!in' if node.negated else 'in'} {sx(node.operand)} [{', '.join(sx(i) for i in node.items)}])"
    if isinstance(node, ast.Between):
        return f"({'!between' if node.negated else 'between'} {sx(node.operand)} {sx(node.low)} {sx(node.high)})"
    raise AssertionError(node)


def named(items: tuple[ast.Named, ...]) -> list[str]:
    return [f"{i.name}={sx(i.expr)}" if i.name else sx(i.expr) for i in items]
