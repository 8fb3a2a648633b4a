"""Client-side cost of building ingest batches (gzip NDJSON, 10,000 events / 10 MB) with `BatchBuilder`.

Baseline, measured in the same run: the least a client can do for the same bytes on the wire — encode 10,000
events with msgspec, join them and gzip the whole batch at once. The ratio shows what the incremental,
size-bounded builder costs on top.

    .venv/bin/python bench/client_batching.py [events]
"""

from __future__ import annotations

import gzip
import random
import sys
import time

import msgspec

from beacon_client.batching import BatchBuilder


def make_events(n: int) -> list[dict]:
    rng = random.Random(1)
    services = ["api", "web", "worker", "auth"]
    paths = ["/", "/login", "/api/v1/items", "/api/v1/orders", "/health"]
    return [
        {
            "_time": 1_790_000_000 + i,
            "service": rng.choice(services),
            "status": rng.choice([200, 200, 200, 201, 404, 500]),
            "duration_ms": round(rng.random() * 250, 3),
            "http": {"method": "GET", "path": rng.choice(paths), "bytes": rng.randint(100, 50_000)},
            "user_id": f"u{rng.randint(1, 10_000)}",
            "message": f"request {i} handled by {rng.choice(services)}",
        }
        for i in range(n)
    ]


def baseline(events: list[dict]) -> tuple[float, int]:
    encode = msgspec.json.Encoder().encode
    start = time.perf_counter()
    size = 0
    for i in range(0, len(events), 10_000):
        body = gzip.compress(b"".join(encode(e) + b"\n" for e in events[i : i + 10_000]), compresslevel=6)
        size += len(body)
    return time.perf_counter() - start, size


def builder(events: list[dict]) -> tuple[float, int]:
    start = time.perf_counter()
    b = BatchBuilder()
    size = 0
    for e in events:
        batch = b.add(e)
        if batch is not None:
            size += len(batch.body)
    last = b.seal()
    size += len(last.body) if last else 0
    return time.perf_counter() - start, size


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    events = make_events(n)
    base_s, base_bytes = min(baseline(events) for _ in range(3))
    ours_s, ours_bytes = min(builder(events) for _ in range(3))
    print(f"events: {n:,}")
    print(f"baseline (encode + one-shot gzip per 10k): {n / base_s:,.0f} events/s, {base_bytes / 1e6:.2f} MB")
    print(f"BatchBuilder (incremental, size-bounded):  {n / ours_s:,.0f} events/s, {ours_bytes / 1e6:.2f} MB")
    print(f"ratio builder/baseline throughput: {base_s / ours_s:.2f}")


if __name__ == "__main__":
    main()
