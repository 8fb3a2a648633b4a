"""Elasticsearch's bulk body: action lines and their documents -> events, and the per-item results.

The body is NDJSON: an action line (`{"index": {"_index": ..., "_id": ...}}`, or `create`), then the document;
blank lines between them are skipped (rsyslog sends them). Each document is one event of the dataset its
action names (`_index`, else the index in the path; `X-Beacon-Dataset` pins one for all), with `@timestamp` as
its time. An item that cannot be stored (a bad action line, `delete`/`update`, an index that is not a valid
dataset name or not the token's, a document the ingest path refuses) gets an error in its own result, as
Elasticsearch answers, and the rest of the body is stored: shippers retry only the items that failed.

A request holds up to 100,000 items, mostly under a few distinct action lines: each distinct line is read and
judged once (`_Action`), an item that is stored is that shared object in the item list (no object of its own),
and the answer is written from a fixed shape per action.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from app.datasets.names import is_dataset_name
from app.errors import BeaconError
from app.ingest.batches import SLICE, DatasetResult

_ACTIONS = ("index", "create", "delete", "update")
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
# Each distinct action line is read once per request (up to this many; the rest are read each time).
_ACTION_CACHE = 256
_BAD_NAME = "invalid_index_name_exception"
_CREATED_REST = (
    b'"_version":1,"result":"created","_shards":{"total":1,"successful":1,"failed":0},"_seq_no":%d,"_primary_term":1,'
    b'"status":201}}'
)
_CREATED = b'{"%b":{"_index":%b,"_id":%b,' + _CREATED_REST
_FAILED = b'{"%b":{"_index":%b,"_id":%b,"status":%d,"error":%b}}'


@dataclass(slots=True)
class Item:
    """An item with something of its own: an id, or an error."""

    action: str
    index: str | None
    id: str | None
    status: int = 201
    error: tuple[str, str] | None = None  # Elasticsearch's error type and reason


@dataclass(slots=True, eq=False)
class _Action:
    """A distinct action line, read and judged once: what its items are, or why they fail."""

    action: str
    index: str | None
    id: str | None
    error: tuple[int, str, str] | None  # (status, type, reason) of every item of this line
    takes_document: bool  # a document line follows (not for `delete`, nor after a malformed line: see parse)
    malformed: bool = False


@dataclass
class Bulk:
    """A parsed bulk body: its items in order (an `_Action` for an item stored under a line without an id), and the
    documents to store, in runs of one dataset (app/ingest/batches.py)."""

    items: list[Item | _Action] = field(default_factory=list)
    runs: list[tuple[str, list[bytes]]] = field(default_factory=list)
    documents: int = 0
    positions: dict[str, list[int]] = field(default_factory=dict)  # dataset -> its documents' item positions

    def settle(self, results: dict[str, DatasetResult]) -> None:
        """Mark the items whose documents the ingest path refused (`failures` index a dataset's documents)."""
        for name, result in results.items():
            positions = self.positions[name]
            for failure in result.failures:
                at = positions[failure.index]
                item = self.items[at]
                self.items[at] = Item(
                    item.action, item.index, item.id, 400, ("document_parsing_exception", failure.error)
                )

    def answer(self, took_ms: int) -> bytes:
        """Elasticsearch's bulk answer, `{took, errors, items}`, as JSON."""
        prefix = secrets.token_urlsafe(9).encode()  # ids of the items that came without one: unique to this request
        shapes: dict[int, bytes] = {}  # id(_Action) -> its items' answer, with the position left to fill in
        names: dict[str | None, bytes] = {}
        parts = []
        errors = False
        for seq, item in enumerate(self.items):
            if type(item) is _Action:
                shape = shapes.get(id(item))
                if shape is None:  # the answer of this line's items, their position (id and _seq_no) to fill in
                    head = b'{"%b":{"_index":%b,"_id":"%b' % (item.action.encode(), _encode(item.index), prefix)
                    shape = shapes[id(item)] = head.replace(b"%", b"%%") + b'%x",' + _CREATED_REST
                parts.append(shape % (seq, seq))
                continue
            assert isinstance(item, Item)
            index = names.get(item.index)
            if index is None:
                index = names[item.index] = _encode(item.index)
            ident = _encode(item.id) if item.id is not None else b'"%b%x"' % (prefix, seq)
            if item.error is None:
                parts.append(_CREATED % (item.action.encode(), index, ident, seq))
            else:
                errors = True
                es_type, reason = item.error
                failed = _encode({"type": es_type, "reason": reason})
                parts.append(_FAILED % (item.action.encode(), index, ident, item.status, failed))
        head = b'{"took":%d,"errors":%s,"items":[' % (took_ms, b"true" if errors else b"false")
        return head + b",".join(parts) + b"]}"


def _read_action(line: bytes, path_index: str | None, pinned: str | None, may_use: Callable[[str], bool]) -> _Action:
    """An action line, judged: what its items are, or the error each of them gets."""
    try:
        parsed = _decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        return _malformed(f"the action line is not valid JSON: {exc}", path_index, pinned)
    if type(parsed) is not dict or len(parsed) != 1:
        reason = "an action line is an object with one key: create, delete, index or update"
        return _malformed(reason, path_index, pinned)
    ((action, meta),) = parsed.items()
    if action not in _ACTIONS:
        reason = f"expected field [create], [delete], [index] or [update] but found [{action}]"
        return _malformed(reason, path_index, pinned)
    if type(meta) is not dict:
        return _malformed(f"the value of [{action}] is not an object", path_index, pinned)
    raw_id = meta.get("_id")
    named = meta.get("_index")
    index = pinned if pinned is not None else named if isinstance(named, str) else path_index
    item_id = raw_id if isinstance(raw_id, str) else None
    takes_document = action != "delete"
    if action in ("delete", "update"):
        reason = f"Beacon stores events and keeps no documents by id: [{action}] is not supported"
        return _Action(action, index, item_id, (400, "illegal_argument_exception", reason), takes_document)
    if index is None:
        return _Action(action, index, item_id, (400, "action_request_validation_exception", "index is missing"), True)
    if not is_dataset_name(index):
        reason = (
            f"Invalid index name [{index}]: a dataset name is 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
        return _Action(action, index, item_id, (400, _BAD_NAME, reason), True)
    if not may_use(index):
        reason = f"this token may not write to the dataset [{index}]"
        return _Action(action, index, item_id, (403, "security_exception", reason), True)
    return _Action(action, index, item_id, None, True)


def _malformed(reason: str, path_index: str | None, pinned: str | None) -> _Action:
    # The line number is the item's own: it is added where the item is made (the line is judged once).
    return _Action("index", pinned or path_index, None, (400, "illegal_argument_exception", reason), False, True)


def parse(
    body: bytes, *, path_index: str | None, pinned: str | None, may_use: Callable[[str], bool], max_items: int
) -> Bulk:
    fast = _uniform(body, path_index, pinned, may_use, max_items)
    return fast if fast is not None else _parse(body, path_index, pinned, may_use, max_items)


def _uniform(
    body: bytes, path_index: str | None, pinned: str | None, may_use: Callable[[str], bool], max_items: int
) -> Bulk | None:
    """The common body, read without a loop in Python: action and document lines alternating, no blank line and no
    CR, every action line the same one (an `index` or `create` without an id, of a dataset the token may write to).
    Shippers send that (syslog-ng, rsyslog without its blank lines, Elastic's helpers, Fluent Bit). None: any
    other body, which `_parse` reads line by line, to the same result."""
    if b"\n\n" in body or b"\r" in body or body.startswith(b"\n"):
        return None
    lines = body.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if len(lines) % 2 or len(lines) // 2 > max_items:
        return None
    actions, documents = lines[0::2], lines[1::2]
    first = actions[0] if actions else b""
    if not first or actions.count(first) != len(actions):
        return None
    action = _read_action(first, path_index, pinned, may_use)
    if action.error is not None or action.id is not None or not action.takes_document or action.index is None:
        return None
    if any(map(bytes.isspace, documents)):  # a blank line between, which _parse skips
        return None
    bulk = Bulk(items=[action] * len(actions), documents=len(documents))
    bulk.positions[action.index] = list(range(len(documents)))
    bulk.runs = [(action.index, documents[i : i + SLICE]) for i in range(0, len(documents), SLICE)]
    return bulk


def _parse(
    body: bytes, path_index: str | None, pinned: str | None, may_use: Callable[[str], bool], max_items: int
) -> Bulk:
    bulk = Bulk()
    items, runs, positions = bulk.items, bulk.runs, bulk.positions
    run: list[bytes] = []
    run_index = None
    cache: dict[bytes, _Action] = {}
    lines = body.split(b"\n")
    count, i = len(lines), 0
    while i < count:
        line = lines[i]
        i += 1
        if not line or line.isspace():
            continue  # blank lines between action and document lines: skipped (rsyslog sends them)
        action = cache.get(line)
        if action is None:
            action = _read_action(line, path_index, pinned, may_use)
            if len(cache) < _ACTION_CACHE:
                cache[line] = action
        if len(items) >= max_items:
            raise BeaconError(
                "too_many_events",
                f"A bulk request may hold at most {max_items:,} actions; nothing was stored. Send smaller batches.",
            )
        if action.malformed:
            assert action.error is not None
            status, es_type, reason = action.error
            reason = f"Malformed action/metadata line [{i}], {reason}"
            items.append(Item("index", action.index, None, status, (es_type, reason)))
            i = _skip_document(lines, i)  # its document, unless the next line is an action line itself
            continue
        document = None
        if action.takes_document:
            while i < count and (not lines[i] or lines[i].isspace()):
                i += 1
            if i < count:
                document = lines[i]
                i += 1
        if action.error is not None:
            status, es_type, reason = action.error
            items.append(Item(action.action, action.index, action.id, status, (es_type, reason)))
            continue
        if document is None:
            error = ("action_request_validation_exception", f"the [{action.action}] action has no document")
            items.append(Item(action.action, action.index, action.id, 400, error))
            continue
        index = action.index
        assert index is not None
        where = positions.get(index)
        if where is None:
            where = positions[index] = []
        where.append(len(items))
        items.append(action if action.id is None else Item(action.action, index, action.id))
        if index != run_index or len(run) >= SLICE:
            run, run_index = [], index
            runs.append((index, run))
        run.append(document.rstrip(b"\r") if document.endswith(b"\r") else document)
    bulk.documents = sum(len(lines) for _, lines in runs)
    return bulk


def _skip_document(lines: list[bytes], i: int) -> int:
    """After a malformed action line: past the next non-blank line, unless that one reads as an action line."""
    j = i
    while j < len(lines) and (not lines[j] or lines[j].isspace()):
        j += 1
    if j < len(lines):
        try:
            parsed = _decode(lines[j])
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return j + 1
        is_action = type(parsed) is dict and len(parsed) == 1 and next(iter(parsed)) in _ACTIONS
        if not is_action or type(next(iter(parsed.values()))) is not dict:
            return j + 1
    return i
