"""Judging SQL text by the Citus plan (app/db/citus_plan.py): what would not run, or not route, on Citus.

Rules, each a finding:
- `dataset_param`: a statement over a distributed table (events, its daily partitions, event_rollups,
  dataset_fields) without `dataset_id = $n` in the same query block (an INSERT: without `$n` as the value of
  `dataset_id`). Without the id as a parameter Citus sends the statement to every shard, or refuses it.
- `reference_lock`: FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE that locks a reference table
  (named in `OF`, or in the block's FROM when there is no `OF`). Citus turns it into a lock on the whole table
  on every node until commit.
- `distributed_join`: a distributed table in one statement with a reference table that is not joined on the
  distribution column (`<distributed>.dataset_id = <reference>.<column>`), or with any local table.
- `local_with_citus`: a table the plan leaves out of Citus's metadata named with a Citus table, or a reference
  table modified by a statement that reads a local one: Citus cannot run those.
- `on_conflict_param`: INSERT ... SELECT ... ON CONFLICT DO UPDATE into a Citus-managed local table with a
  parameter in the DO UPDATE (a Citus bug seen in issue 32).

The parse is lexical (tokens, parentheses, the FROM lists), made for the SQL Beacon writes: only the plan's table
names count, and DDL, transaction control and settings are not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from app.db.citus_plan import DISTRIBUTION_COLUMN, kind_of


@dataclass(frozen=True)
class Finding:
    rule: str
    detail: str
    sql: str


_SKIPPED = (
    "create", "alter", "drop", "comment", "do", "set", "reset", "show", "begin", "commit", "rollback", "savepoint",
    "release", "start", "end", "abort", "listen", "unlisten", "notify", "copy", "vacuum", "analyze", "grant",
    "revoke", "prepare", "deallocate", "discard", "truncate", "lock", "checkpoint", "refresh",
)  # fmt: skip
_NOT_ALIAS = {
    "where", "on", "join", "left", "right", "inner", "outer", "cross", "full", "natural", "group", "order", "limit",
    "offset", "having", "union", "except", "intersect", "for", "set", "values", "select", "returning", "using",
    "lateral", "window", "fetch", "with", "and", "or", "default", "as", "only", "tablesample",
}  # fmt: skip
_ENDS_FROM = {"where", "group", "order", "limit", "offset", "having", "union", "except", "intersect", "for",
              "returning", "window", "fetch", "on", "set", "values", "select", ")"}  # fmt: skip
_TOKEN = re.compile(r'"[^"]*"|\$\d+|::|[a-z_][a-z0-9_$]*|\d+(?:\.\d+)?|\S')
_PARAM_EQ = re.compile(
    rf"(?:\b[a-z_][a-z0-9_]*\.)?\b{DISTRIBUTION_COLUMN}\s*=\s*\$\d+|\$\d+(?:::[a-z]+)?\s*=\s*(?:[a-z_][a-z0-9_]*\.)?"
    rf"\b{DISTRIBUTION_COLUMN}\b"
)
_LOCK = re.compile(
    r"\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b(?:\s+of\s+([a-z0-9_\",\s]+?))?"
    r"(?=\s+nowait\b|\s+skip\s+locked\b|\s*$|\s+for\b|\s*\))"
)
_JOIN_EQ = re.compile(r"\b([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\s*=\s*([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b")
_SET_OPERATION = re.compile(r"\b(?:union all|union|except|intersect)\b")
SUBQUERY = "(?)"


def normalized(sql: str) -> str:
    """Lower case, comments gone, string literals emptied, whitespace collapsed (quoted names kept)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "'":
            j = i + 1
            while j < n:
                if sql[j] == "'" and sql.startswith("''", j):
                    j += 2
                elif sql[j] == "'":
                    break
                else:
                    j += 1
            out.append("''")
            i = j + 1
        elif c == "$" and (m := re.match(r"\$([A-Za-z_]*)\$", sql[i:])):
            tag = m.group(0)
            j = sql.find(tag, i + len(tag))
            out.append("$$$$")
            i = n if j < 0 else j + len(tag)
        else:
            out.append(c.lower())
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def split_statements(sql: str) -> list[str]:
    """Normalized statements of a string that may hold several (`a; b`)."""
    return [s.strip() for s in _split_top(normalized(sql), ";") if s.strip()]


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


@dataclass
class Block:
    """One query level: its text with nested subqueries replaced by SUBQUERY, and the tables its FROM names."""

    text: str
    tables: dict[str, str] = field(default_factory=dict)  # alias (or name) -> table
    inserted: str | None = None  # the table of INSERT INTO


def _top_level(statement: str) -> str:
    """The statement with every parenthesised part emptied: what is left is its own level."""
    out, depth = [], 0
    for c in statement:
        if c == "(":
            depth += 1
            if depth == 1:
                out.append("(")
        elif c == ")":
            depth -= 1
            if depth == 0:
                out.append(")")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _blocks(statement: str) -> list[Block]:
    """The statement and each parenthesised subquery in it, each as a Block of its own."""
    found: list[str] = []

    def walk(text: str) -> str:
        out, i = [], 0
        while i < len(text):
            if text[i] == "(":
                depth, j = 1, i + 1
                while j < len(text) and depth:
                    depth += {"(": 1, ")": -1}.get(text[j], 0)
                    j += 1
                inner = text[i + 1 : j - 1]
                head = inner.lstrip()
                if head.startswith(("select ", "with ", "values ")):
                    found.append(walk(inner))
                    out.append(SUBQUERY)
                else:
                    out.append("(" + walk(inner) + ")")
                i = j
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    found.append(walk(statement))
    # Each branch of a UNION (EXCEPT, INTERSECT) is a query level of its own.
    return [_tables_of(part) for text in found for part in _SET_OPERATION.split(text)]


def _name(token: str) -> str:
    return token.strip('"')


def _tables_of(text: str) -> Block:
    block = Block(text)
    tokens = _TOKEN.findall(text)
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if word in ("from", "join", "update", "into", "using") and i + 1 < len(tokens):
            in_list = word == "from"
            j = i + 1
            while j < len(tokens):
                if tokens[j] in ("only", "lateral"):
                    j += 1
                    continue
                name = _name(tokens[j])
                if word != "into" and j + 1 < len(tokens) and tokens[j + 1] == "(":  # unnest(...): not a table
                    j += 1
                    name = ""
                j += 1
                alias = None
                if j < len(tokens) and tokens[j] == "as":
                    j += 1
                if j < len(tokens) and re.match(r"^[a-z_\"]", tokens[j]) and tokens[j] not in _NOT_ALIAS:
                    alias = _name(tokens[j])
                    j += 1
                if name and kind_of(name) is not None:
                    block.tables[alias or name] = name
                    block.tables.setdefault(name, name)
                    if word == "into":
                        block.inserted = name
                if not (in_list and j < len(tokens) and tokens[j] == ","):
                    break
                j += 1
            i = j
        else:
            i += 1
    return block


def _insert_value_is_param(statement: str, table: str) -> bool:
    """In `INSERT INTO table [AS a] [(cols)] VALUES (...)` or `... SELECT ...`: is dataset_id's value `$n`? Without a
    column list it is the first value (dataset_id is the first column of every distributed table)."""
    m = re.search(rf'\binto "?{table}"?(?: as [a-z_]+)?(?: \(([^)]*)\))? (values \(|select )', statement)
    if m is None:
        return False
    columns = [c.strip().strip('"') for c in m.group(1).split(",")] if m.group(1) else [DISTRIBUTION_COLUMN]
    if DISTRIBUTION_COLUMN not in columns:
        return False
    rest = statement[m.end() :]
    values = _split_top(re.split(r"\bfrom\b|\bon conflict\b|\)", rest, maxsplit=1)[0], ",")
    index = columns.index(DISTRIBUTION_COLUMN)
    return index < len(values) and re.fullmatch(r"\s*\$\d+(::[a-z]+)?\s*", values[index]) is not None


def _is_skipped(statement: str) -> bool:
    first = statement.split(" ", 1)[0]
    return first in _SKIPPED


def check_statement(statement: str) -> Iterator[Finding]:
    """Findings for one normalized statement."""
    if _is_skipped(statement):
        return
    if statement.startswith("explain "):
        statement = re.sub(r"^explain (\([^)]*\) )?", "", statement)
    blocks = _blocks(statement)
    kinds = {t: kind_of(t) for b in blocks for t in b.tables.values()}
    distributed = sorted(t for t, k in kinds.items() if k == "distributed")
    reference = sorted(t for t, k in kinds.items() if k == "reference")
    local_ones = sorted(t for t, k in kinds.items() if k in ("citus_local", "local"))
    plain = sorted(t for t, k in kinds.items() if k == "local")

    for block in blocks:
        for table in sorted(set(block.tables.values())):
            if kinds[table] != "distributed":
                continue
            if table == block.inserted:
                if not _insert_value_is_param(statement, table):
                    yield Finding("dataset_param", f"INSERT INTO {table} without $n as its {DISTRIBUTION_COLUMN}",
                                  statement)  # fmt: skip
            elif not _PARAM_EQ.search(block.text):
                yield Finding("dataset_param", f"{table} without {DISTRIBUTION_COLUMN} = $n", statement)
        for lock in _LOCK.finditer(block.text):
            named = [_name(x.strip()) for x in lock.group(2).split(",")] if lock.group(2) else list(block.tables)
            for alias in named:
                table = block.tables.get(alias)
                if table is not None and kinds[table] == "reference":
                    yield Finding("reference_lock", f"FOR {lock.group(1).upper()} on reference table {table}",
                                  statement)  # fmt: skip

    if distributed:
        aliases = {a: t for b in blocks for a, t in b.tables.items()}
        for other in reference:
            if not _joined_on_distribution_column(blocks, aliases, other):
                yield Finding("distributed_join", f"{', '.join(distributed)} with reference table {other} not "
                              f"joined on {DISTRIBUTION_COLUMN}", statement)  # fmt: skip
        for other in local_ones:
            yield Finding("distributed_join", f"{', '.join(distributed)} with local table {other}", statement)
    if plain and (distributed or reference or len(local_ones) > len(plain)):
        yield Finding("local_with_citus", f"plain table {', '.join(plain)} with Citus tables", statement)
    top = _SET_OPERATION.split(_top_level(statement))[0]
    modified = re.match(r"^(?:with .*? )?(update|delete from|insert into) \"?([a-z_0-9]+)", top)
    if modified and kind_of(modified.group(2)) == "reference" and local_ones:
        yield Finding("local_with_citus", f"reference table {modified.group(2)} modified from {', '.join(local_ones)}",
                      statement)  # fmt: skip
    if modified and modified.group(1) == "insert into" and kind_of(modified.group(2)) == "citus_local":
        conflict = statement.split(" on conflict ", 1)
        if len(conflict) == 2 and " select " in f" {conflict[0]} " and re.search(r"\$\d+", conflict[1]):
            yield Finding("on_conflict_param", f"INSERT ... SELECT into {modified.group(2)} with a parameter in "
                          "ON CONFLICT DO UPDATE", statement)  # fmt: skip


def _joined_on_distribution_column(blocks: list[Block], aliases: dict[str, str], reference: str) -> bool:
    for block in blocks:
        for m in _JOIN_EQ.finditer(block.text):
            left, lcol, right, rcol = m.groups()
            pairs = [(aliases.get(left), lcol, aliases.get(right)), (aliases.get(right), rcol, aliases.get(left))]
            for dist, col, ref in pairs:
                if dist and kind_of(dist) == "distributed" and col == DISTRIBUTION_COLUMN and ref == reference:
                    return True
    return False


def check(sql: str) -> list[Finding]:
    """Findings for SQL text as sent (one statement or several separated by `;`)."""
    return [f for statement in split_statements(sql) for f in check_statement(statement)]


def check_all(statements: Iterable[str]) -> list[Finding]:
    """Findings for many statements, each distinct finding once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for sql in statements:
        for f in check(sql):
            key = (f.rule, f.detail, f.sql)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out
