"""Garbage-collector settings for a serving process (`beacon serve`, and tests/servers.py for a server in a test's
process)."""

from __future__ import annotations

import gc

SERVING_THRESHOLDS = (10_000, 10, 1_000)


def settle_heap() -> None:
    """Call once the app is built, before it serves.

    Everything alive then (modules, routes, templates) lives as long as the process: freezing it keeps the
    collector from walking it again, which took 66 ms per full collection in bench/query.py. And a higher
    first threshold makes young collections rarer: a query result of 1,000 events set off two per request
    at the default of 700 (about 0.3 ms of the request, measured).

    Full collections are rare too (one per 1,000 middle ones, not 10): each walks every live object, and a view
    of 12,000 alerts keeps a few hundred thousand alive, so at 10 the passes during one view held the event loop
    (and /healthz) 50-170 ms; at 1,000, 30-55 ms (bench/RESULTS.md). The price: a cycle that reaches the oldest
    generation waits longer to be freed (about 100 million allocations).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
