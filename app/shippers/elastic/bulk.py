"""Elasticsearch's bulk body: action lines and their documents -> events, and the per-item results.

The body is NDJSON: an action line (`{"index": {"_index": ..., "_id": ...}}`, or `create`), then the document;
blank lines between them are skipped (rsyslog sends them). Each document is one event of the dataset its
action names (`_index`, else the index in the path; `X-Beacon-Dataset` pins one for all), with `@timestamp` as
its time. An item that cannot be stored (a bad action line, `delete`/`update`, an index that is not a valid
dataset name or not the token's, a document the ingest path refuses) gets an error in its own result, as
Elasticsearch answers, and the rest of the body is stored: shippers retry only the items that failed.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from app.datasets.names import is_dataset_name
from app.errors import BeaconError
from app.ingest.batches import DatasetResult

_ACTIONS = ("index", "create", "delete", "update")
_decode = msgspec.json.Decoder().decode
# Shippers repeat the same few action lines: each distinct one is parsed once per request (up to this many).
_ACTION_CACHE = 256


@dataclass(slots=True)
class Item:
    action: str
    index: str | None
    id: str | None
    status: int = 201
    error: tuple[str, str] | None = None  # Elasticsearch's error type and reason

    def fail(self, status: int, es_type: str, reason: str) -> None:
        self.status, self.error = status, (es_type, reason)


@dataclass
class Bulk:
    """A parsed bulk body: its items in order, and the documents to store as (dataset, JSON) pairs."""

    items: list[Item] = field(default_factory=list)
    documents: list[tuple[str, bytes]] = field(default_factory=list)
    positions: dict[str, list[int]] = field(default_factory=dict)  # dataset -> its documents' item positions

    def settle(self, results: dict[str, DatasetResult]) -> None:
        """Mark the items whose documents the ingest path refused (`failures` index a dataset's documents)."""
        for name, result in results.items():
            positions = self.positions[name]
            for failure in result.failures:
                self.items[positions[failure.index]].fail(400, "document_parsing_exception", failure.error)

    def answer(self, took_ms: int) -> bytes:
        """Elasticsearch's bulk answer, `{took, errors, items}`, as JSON. Written by hand: a request holds up to
        100,000 items, and an item's result is a fixed shape around its index, id and position."""
        prefix = secrets.token_urlsafe(9)  # ids of the items that came without one: unique to this request
        names: dict[str | None, bytes] = {}
        parts = []
        errors = False
        for seq, item in enumerate(self.items):
            index = names.get(item.index)
            if index is None:
                index = names[item.index] = _encode(item.index)
            ident = _encode(item.id) if item.id is not None else b'"%s%x"' % (prefix.encode(), seq)
            if item.error is None:
                parts.append(_CREATED % (item.action.encode(), index, ident, seq))
            else:
                errors = True
                es_type, reason = item.error
                failed = {"type": es_type, "reason": reason}
                parts.append(_FAILED % (item.action.encode(), index, ident, item.status, _encode(failed)))
        head = b'{"took":%d,"errors":%s,"items":[' % (took_ms, b"true" if errors else b"false")
        return head + b",".join(parts) + b"]}"


_encode = msgspec.json.Encoder().encode
_CREATED = (
    b'{"%s":{"_index":%s,"_id":%s,"_version":1,"result":"created",'
    b'"_shards":{"total":1,"successful":1,"failed":0},"_seq_no":%d,"_primary_term":1,"status":201}}'
)
_FAILED = b'{"%s":{"_index":%s,"_id":%s,"status":%d,"error":%s}}'


def _action(line: bytes) -> tuple[str, dict[str, Any]] | str:
    """(action, metadata), or why the line is not an action line."""
    try:
        parsed = _decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        return f"the action line is not valid JSON: {exc}"
    if type(parsed) is not dict or len(parsed) != 1:
        return "an action line is an object with one key: create, delete, index or update"
    ((action, meta),) = parsed.items()
    if action not in _ACTIONS:
        return f"expected field [create], [delete], [index] or [update] but found [{action}]"
    if type(meta) is not dict:
        return f"the value of [{action}] is not an object"
    return action, meta


def parse(
    body: bytes, *, path_index: str | None, pinned: str | None, may_use: Callable[[str], bool], max_items: int
) -> Bulk:
    bulk = Bulk()
    items, documents, positions = bulk.items, bulk.documents, bulk.positions
    cache: dict[bytes, tuple[str, dict[str, Any]] | str] = {}
    allowed: dict[str, str | None] = {}  # index -> why it cannot be written to (None: it can)
    lines = body.split(b"\n")
    count, i = len(lines), 0
    while i < count:
        line = lines[i]
        i += 1
        if not line or line.isspace():
            continue  # blank lines between action and document lines: skipped (rsyslog sends them)
        number = i
        parsed = cache.get(line)
        if parsed is None:
            parsed = _action(line)
            if len(cache) < _ACTION_CACHE:
                cache[line] = parsed
        if len(items) >= max_items:
            raise BeaconError(
                "too_many_events",
                f"A bulk request may hold at most {max_items:,} actions; nothing was stored. Send smaller batches.",
            )
        if isinstance(parsed, str):
            item = Item("index", pinned or path_index, None)
            item.fail(400, "illegal_argument_exception", f"Malformed action/metadata line [{number}], {parsed}")
            items.append(item)
            i = _skip_document(lines, i)  # its document, unless the next line is an action line itself
            continue
        action, meta = parsed
        raw_id = meta.get("_id")
        index = pinned if pinned is not None else _index(meta, path_index)
        item = Item(action, index, raw_id if isinstance(raw_id, str) else None)
        items.append(item)
        document = None
        if action != "delete":
            while i < count and (not lines[i] or lines[i].isspace()):
                i += 1
            if i < count:
                document = lines[i]
                i += 1
        if action in ("delete", "update"):
            item.fail(
                400,
                "illegal_argument_exception",
                f"Beacon stores events and keeps no documents by id: [{action}] is not supported",
            )
            continue
        if document is None:
            item.fail(400, "action_request_validation_exception", f"the [{action}] action has no document")
            continue
        if index is None:
            item.fail(400, "action_request_validation_exception", "index is missing")
            continue
        if index not in allowed:
            allowed[index] = _index_problem(index, may_use)
        problem = allowed[index]
        if problem is not None:
            status, es_type = (403, "security_exception") if problem.startswith("this token") else (400, _BAD_NAME)
            item.fail(status, es_type, problem)
            continue
        where = positions.get(index)
        if where is None:
            where = positions[index] = []
        where.append(len(items) - 1)
        documents.append((index, document.rstrip(b"\r") if document.endswith(b"\r") else document))
    return bulk


_BAD_NAME = "invalid_index_name_exception"


def _index_problem(index: str, may_use: Callable[[str], bool]) -> str | None:
    if not is_dataset_name(index):
        return (
            f"Invalid index name [{index}]: a dataset name is 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if not may_use(index):
        return f"this token may not write to the dataset [{index}]"
    return None


def _skip_document(lines: list[bytes], i: int) -> int:
    """After a malformed action line: past the next non-blank line, unless that one reads as an action line."""
    j = i
    while j < len(lines) and (not lines[j] or lines[j].isspace()):
        j += 1
    if j < len(lines) and isinstance(_action(lines[j].rstrip(b"\r")), str):
        return j + 1
    return i


def _index(meta: dict[str, Any], path_index: str | None) -> str | None:
    named = meta.get("_index")
    return named if isinstance(named, str) else path_index
