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
from collections.abc import Callable, Iterator
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


@dataclass
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

    def answer(self, took_ms: int) -> dict[str, Any]:
        prefix = secrets.token_urlsafe(9)  # ids of the items that came without one: unique to this request
        results = []
        for seq, item in enumerate(self.items):
            result: dict[str, Any] = {"_index": item.index, "_id": item.id or f"{prefix}{seq:x}"}
            if item.error is None:
                result.update(
                    _version=1,
                    result="created",
                    _shards={"total": 1, "successful": 1, "failed": 0},
                    _seq_no=seq,
                    _primary_term=1,
                    status=201,
                )
            else:
                es_type, reason = item.error
                result["status"] = item.status
                result["error"] = {"type": es_type, "reason": reason}
            results.append({item.action: result})
        errors = any(item.error is not None for item in self.items)
        return {"took": took_ms, "errors": errors, "items": results}


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
    cache: dict[bytes, tuple[str, dict[str, Any]] | str] = {}
    lines = _Lines(body)
    for number, line in lines:
        parsed = cache.get(line)
        if parsed is None:
            parsed = _action(line)
            if len(cache) < _ACTION_CACHE:
                cache[line] = parsed
        if len(bulk.items) >= max_items:
            raise BeaconError(
                "too_many_events",
                f"A bulk request may hold at most {max_items:,} actions; nothing was stored. Send smaller batches.",
            )
        if isinstance(parsed, str):
            item = Item("index", pinned or path_index, None)
            item.fail(400, "illegal_argument_exception", f"Malformed action/metadata line [{number}], {parsed}")
            bulk.items.append(item)
            lines.skip_document()  # its document, unless the next line is an action line itself
            continue
        action, meta = parsed
        raw_id = meta.get("_id")
        item = Item(action, _index(meta, path_index, pinned), raw_id if isinstance(raw_id, str) else None)
        bulk.items.append(item)
        document = None if action == "delete" else lines.next_line()
        if action in ("delete", "update"):
            item.fail(
                400,
                "illegal_argument_exception",
                f"Beacon stores events and keeps no documents by id: [{action}] is not supported",
            )
        elif document is None:
            item.fail(400, "action_request_validation_exception", f"the [{action}] action has no document")
        elif item.index is None:
            item.fail(400, "action_request_validation_exception", "index is missing")
        elif not is_dataset_name(item.index):
            item.fail(
                400,
                "invalid_index_name_exception",
                f"Invalid index name [{item.index}]: a dataset name is 1-128 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit",
            )
        elif not may_use(item.index):
            item.fail(403, "security_exception", f"this token may not write to the dataset [{item.index}]")
        else:
            bulk.positions.setdefault(item.index, []).append(len(bulk.items) - 1)
            bulk.documents.append((item.index, document))
    return bulk


def _index(meta: dict[str, Any], path_index: str | None, pinned: str | None) -> str | None:
    if pinned is not None:
        return pinned
    named = meta.get("_index")
    return named if isinstance(named, str) else path_index


class _Lines:
    """The body's non-blank lines with their 1-based line numbers; documents are taken as the next line."""

    def __init__(self, body: bytes) -> None:
        self._lines = body.split(b"\n")
        self._pos = 0

    def _advance(self) -> tuple[int, bytes] | None:
        lines = self._lines
        while self._pos < len(lines):
            line = lines[self._pos]
            self._pos += 1
            if line and not line.isspace():
                return self._pos, line.rstrip(b"\r")
        return None

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        while (found := self._advance()) is not None:
            yield found

    def next_line(self) -> bytes | None:
        found = self._advance()
        return None if found is None else found[1]

    def skip_document(self) -> None:
        """After a malformed action line: skip the line after it, unless that one reads as an action line."""
        saved = self._pos
        found = self._advance()
        if found is not None and not isinstance(_action(found[1]), str):
            self._pos = saved
