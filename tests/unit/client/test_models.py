"""Response Structs are tolerant: a newer server's extra fields are ignored; datetimes come back as datetimes."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from beacon_client import Annotation, Page


def test_extra_fields_are_ignored_and_times_are_parsed():
    body = (
        b'{"object":"list","has_more":false,"next_cursor":null,"later":1,"data":[{"object":"annotation","id":"ann_1",'
        b'"type":"deploy","title":"x","datasets":["web"],"time":"2026-11-21T08:15:30.123Z","new_field":{"a":1}}]}'
    )
    page = msgspec.json.decode(body, type=Page[Annotation])
    (ann,) = page.data
    assert ann.id == "ann_1" and ann.time == datetime(2026, 11, 21, 8, 15, 30, 123000, tzinfo=UTC)
    assert ann.end_time is None and page.next_cursor is None
