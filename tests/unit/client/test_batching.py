"""Batch boundaries: 10,000 events or 10 MB of gzip NDJSON, whichever comes first; nothing lost or reordered."""

from __future__ import annotations

import base64
import gzip
import json
import os

import pytest

from beacon_client.batching import MAX_BYTES, MAX_EVENTS, BatchBuilder


def lines_of(body: bytes) -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(body).splitlines()]


def feed(builder: BatchBuilder, events):
    batches = [b for b in (builder.add(e) for e in events) if b is not None]
    last = builder.seal()
    return batches + ([last] if last else [])


def test_defaults_are_the_service_limits():
    assert MAX_EVENTS == 10_000 and MAX_BYTES <= 10 * 1024 * 1024


def test_a_batch_is_sealed_at_exactly_10000_events():
    builder = BatchBuilder()
    sealed = [builder.add({"n": n}) for n in range(10_000)]
    assert all(b is None for b in sealed[:-1])
    batch = sealed[-1]
    assert batch is not None and len(batch.events) == 10_000 and batch.first_index == 0
    assert lines_of(batch.body) == [{"n": n} for n in range(10_000)]
    assert len(builder) == 0 and builder.seal() is None
    builder.add({"n": 10_000})
    rest = builder.seal()
    assert rest is not None and rest.first_index == 10_000 and lines_of(rest.body) == [{"n": 10_000}]


def test_many_events_split_in_order_without_loss():
    events = [{"n": n, "msg": f"request {n}"} for n in range(25_001)]
    batches = feed(BatchBuilder(), events)
    assert [len(b.events) for b in batches] == [10_000, 10_000, 5_001]
    assert [b.first_index for b in batches] == [0, 10_000, 20_000]
    assert [e for b in batches for e in lines_of(b.body)] == events
    assert all(b.events == events[b.first_index : b.first_index + len(b.events)] for b in batches)


def _incompressible(count: int, size: int) -> list[dict]:
    return [{"n": n, "blob": base64.b64encode(os.urandom(size)).decode()} for n in range(count)]


def test_a_batch_is_sealed_before_it_would_pass_10_mb_compressed():
    events = _incompressible(9_000, 1_500)  # about 2 KB per line, 1.5 KB compressed: 10 MB well before 10,000
    batches = feed(BatchBuilder(), events)
    assert len(batches) == 2
    first = batches[0]
    assert len(first.body) <= MAX_BYTES
    # It ends within about one event of the limit: it is full, not cut early.
    assert len(first.body) > MAX_BYTES - 3 * 2_100, len(first.body)
    assert len(first.events) < 10_000
    assert [e for b in batches for e in lines_of(b.body)] == events


@pytest.mark.parametrize("max_bytes", [20_000, 65_536, 200_000])
def test_every_batch_fits_a_small_limit_and_is_nearly_full(max_bytes):
    events = _incompressible(600, 700)
    batches = feed(BatchBuilder(max_bytes=max_bytes), events)
    assert len(batches) > 1
    for b in batches[:-1]:
        assert max_bytes - 2 * 1_200 < len(b.body) <= max_bytes
    assert len(batches[-1].body) <= max_bytes
    assert [e for b in batches for e in lines_of(b.body)] == events


def test_compressible_events_hit_the_count_limit_not_the_size_limit():
    events = [{"n": n, "msg": "x" * 2_000} for n in range(12_000)]  # 24 MB raw, tiny compressed
    batches = feed(BatchBuilder(), events)
    assert [len(b.events) for b in batches] == [10_000, 2_000]
    assert batches[0].raw_bytes > MAX_BYTES > len(batches[0].body)


def test_an_event_too_large_to_send_is_refused_and_changes_nothing():
    builder = BatchBuilder(max_bytes=10_000)
    builder.add({"n": 0})
    with pytest.raises(ValueError, match="does not fit"):
        builder.add({"blob": base64.b64encode(os.urandom(20_000)).decode()})
    # A large but compressible event is fine (the limit is on the compressed size); it starts a new batch.
    first = builder.add({"blob": "a" * 50_000})
    assert first is not None and lines_of(first.body) == [{"n": 0}]
    second = builder.seal()
    assert second is not None and lines_of(second.body) == [{"blob": "a" * 50_000}] and len(second.body) < 10_000
    assert builder.added == 2


def test_an_unencodable_event_is_refused_and_changes_nothing():
    builder = BatchBuilder()
    builder.add({"n": 0})
    with pytest.raises(TypeError):
        builder.add({"n": object()})
    batch = builder.seal()
    assert batch is not None and batch.events == [{"n": 0}]
