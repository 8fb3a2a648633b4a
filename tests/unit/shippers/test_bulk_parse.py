"""Bulk bodies: the uniform reading (one action line repeated, app/shippers/elastic/bulk.py `_uniform`) gives what
the line-by-line reading gives, and steps aside for any other body."""

from __future__ import annotations

import pytest

from app.shippers.elastic import bulk

ACTION = b'{"index":{"_index":"web"}}'
DOC = b'{"message":"m","@timestamp":"2026-11-21T08:15:30Z"}'


def _both(body: bytes, **kw):
    args = {
        "path_index": kw.get("path_index"),
        "pinned": kw.get("pinned"),
        "may_use": kw.get("may_use", lambda n: True),
    }
    fast = bulk._uniform(body, args["path_index"], args["pinned"], args["may_use"], 100_000)
    slow = bulk._parse(body, args["path_index"], args["pinned"], args["may_use"], 100_000)
    return fast, slow


def _same(fast: bulk.Bulk, slow: bulk.Bulk) -> None:
    assert fast.runs == slow.runs and fast.positions == slow.positions and fast.documents == slow.documents
    assert [(i.action, i.index, i.id, i.error) for i in fast.items] == [
        (i.action, i.index, i.id, i.error) for i in slow.items
    ]


@pytest.mark.parametrize("count", [1, 3, bulk.SLICE + 5])
def test_a_uniform_body_reads_the_same(count):
    body = (ACTION + b"\n" + DOC + b"\n") * count
    fast, slow = _both(body)
    assert fast is not None
    _same(fast, slow)
    fast, slow = _both(body.rstrip(b"\n"))  # no final newline
    assert fast is not None
    _same(fast, slow)


@pytest.mark.parametrize(
    ("body", "kw"),
    [
        ((ACTION + b"\n\n" + DOC + b"\n") * 2, {}),  # blank lines (rsyslog)
        ((ACTION + b"\r\n" + DOC + b"\r\n") * 2, {}),  # CRLF
        (ACTION + b"\n" + DOC + b"\n" + b'{"create":{"_index":"web"}}\n' + DOC + b"\n", {}),  # two action lines
        (b'{"index":{"_index":"web","_id":"1"}}\n' + DOC + b"\n", {}),  # an id
        (b'{"delete":{"_index":"web","_id":"1"}}\n' + DOC + b"\n", {}),
        (ACTION + b"\n" + DOC + b"\n" + ACTION + b"\n", {}),  # an action without its document
        (b'{"index":{}}\n' + DOC + b"\n", {}),  # no index
        (ACTION + b"\n" + DOC + b"\n", {"may_use": lambda n: False}),  # not the token's
        (ACTION + b"\n   \n" + ACTION + b"\n" + DOC + b"\n", {}),  # a line of spaces
        (b"not json\n" + DOC + b"\n", {}),
        (b"\n" + ACTION + b"\n" + DOC + b"\n", {}),
    ],
)
def test_any_other_body_is_left_to_the_line_by_line_reading(body, kw):
    fast, _ = _both(body, **kw)
    assert fast is None
