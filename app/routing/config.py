"""The stored routing document: read (compiled once per version and process), and replaced as a whole under
`If-Match` (412 `version_conflict` when another write came first, 428 without the header)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import msgspec

from app.db.advisory import Space, lock
from app.errors import BeaconError
from app.routing import document as d
from app.routing.tree import Tree, compile_document, compiled


@dataclass(frozen=True)
class Stored:
    version: int
    updated_at: datetime
    tree: Tree


# The trees this process compiled, by the identity of the row they were read from: its database, version, write
# time and the transaction that wrote it (xmin). The routing job reads the document twice per batch; a read that
# hits here fetches those four values, not the document (1,000 routes are 170 KB: 3.2 ms a read whole, 0.15 ms
# this way; bench/routing_document.py). Any write of the row (PUT, an import, an UPDATE by hand, a restore) gives it
# a new xmin, so the next read misses and compiles what was written.
_TREES: OrderedDict[tuple[object, ...], Tree] = OrderedDict()
_TREES_KEPT = 8
_IDENTITY = "version, updated_at, xmin::text AS xmin, current_database() AS db"


def _identity(row: asyncpg.Record) -> tuple[object, ...]:
    return row["version"], row["updated_at"], row["xmin"], row["db"]


async def _read(conn: asyncpg.Connection) -> tuple[asyncpg.Record, Tree] | None:
    row = await conn.fetchrow(f"SELECT {_IDENTITY} FROM routing_config WHERE id = 1")
    if row is None:
        return None
    if (tree := _TREES.get(_identity(row))) is not None:
        return row, tree
    # Read again with the document, and keep the tree under the identity of the row it was compiled from: the row
    # may have been written in between (read committed).
    row = await conn.fetchrow(f"SELECT {_IDENTITY}, document::text AS document FROM routing_config WHERE id = 1")
    if row is None:
        return None
    tree = _TREES[_identity(row)] = compiled(row["version"], row["document"])
    while len(_TREES) > _TREES_KEPT:
        _TREES.popitem(last=False)
    return row, tree


async def current(conn: asyncpg.Connection, *, for_update: bool = False) -> Stored:
    """The stored document; `for_update`: held until the transaction ends (one writer at a time: an advisory
    lock, as `routing_config` is a reference table on Citus) and read once held."""
    if for_update:
        await lock(conn, Space.ROUTING, 1)
    found = await _read(conn)
    if found is None:  # only if someone deleted the row by hand: the default document, never stored
        return Stored(0, datetime.min.replace(tzinfo=UTC), compile_document(d.default_document()))
    row, tree = found
    return Stored(row["version"], row["updated_at"], tree)


def parse_if_match(value: str | None) -> str:
    """The version an `If-Match` header names (quotes and a weak `W/` prefix allowed; `*` matches any)."""
    if value is None or not value.strip():
        raise BeaconError(
            "precondition_required",
            "Replacing the routing document needs `If-Match: <version>` (the `version` from GET /v1/routing), "
            "so that a change made meanwhile by someone else is not overwritten.",
        )
    return value.strip().removeprefix("W/").strip('"')


def _named_notifiers(doc: d.Document) -> set[str]:
    found: set[str] = set()
    stack = [doc.route]
    while stack:
        route = stack.pop()
        found.update(route.notifier_ids or ())
        stack.extend(route.routes)
    return found


async def replace(conn: asyncpg.Connection, doc: d.Document, if_match: str | None, now: datetime) -> Stored:
    """Check the whole document, then store it as the next version (the caller commits)."""
    wanted = parse_if_match(if_match)
    named = _named_notifiers(doc)
    known = {r["id"] for r in await conn.fetch("SELECT id FROM notifiers WHERE id = ANY($1::text[])", list(named))}
    tree = compile_document(doc, known)
    stored = await current(conn, for_update=True)
    if wanted != "*" and wanted != str(stored.version):
        raise BeaconError(
            "version_conflict",
            f"The routing document is at version {stored.version}, not {wanted}: someone changed it meanwhile. "
            "Read it again, apply your change, and send it with the new version.",
        )
    stored_fields = {k: v for k, v in msgspec.to_builtins(doc).items() if k not in ("object", "version")}
    text = msgspec.json.encode(stored_fields).decode()
    version = stored.version + 1
    await conn.execute(
        "UPDATE routing_config SET version = $1, document = $2::jsonb, updated_at = $3 WHERE id = 1", version, text, now
    )
    await conn.execute("DELETE FROM routing_notifiers")
    # A notifier deleted since the check above fails this insert (foreign key): the caller's transaction aborts.
    await conn.execute(
        "INSERT INTO routing_notifiers (notifier_id) SELECT unnest($1::text[])", sorted(tree.notifier_ids())
    )
    return Stored(version, now, tree)


def document_of(stored: Stored) -> d.Document:
    return msgspec.structs.replace(stored.tree.document, object="routing", version=str(stored.version))


def uses_of(tree: Tree, notifier_id: str) -> list[str]:
    """Where the document names a notifier (`route.routes[1].notifier_ids[0]`)."""
    found: list[str] = []
    stack = [(tree.document.route, "route")]
    while stack:
        route, path = stack.pop()
        found.extend(f"{path}.notifier_ids[{i}]" for i, n in enumerate(route.notifier_ids or ()) if n == notifier_id)
        stack.extend((child, f"{path}.routes[{i}]") for i, child in enumerate(route.routes))
    return sorted(found)


async def check_unused(conn: asyncpg.Connection, notifier_id: str) -> None:
    """409 when the routing document sends to this notifier (it cannot be deleted then)."""
    uses = uses_of((await current(conn)).tree, notifier_id)
    if uses:
        raise BeaconError(
            "conflict",
            f"The routing document sends to this notifier (at {', '.join(uses[:5])}); "
            "remove it there (PUT /v1/routing) before deleting it.",
        )
