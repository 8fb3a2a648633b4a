"""Beacon's own Prometheus metrics (`GET /metrics`, text format, no token).

One `Metrics` per app (a member of its Services), with its own registry: nothing is registered at import, and each
app (each test's too) counts from zero. Labels never carry tenant data — no dataset names, token ids or
notifier names; routes are their templates (`/v1/ingest/{dataset}`), never the path that was asked.

With several processes (`beacon serve --workers N`) a scrape reaches one of them, so each process writes its
values to files in `PROMETHEUS_MULTIPROC_DIR` (set by `serve`) and a scrape adds up every process's files —
prometheus_client's multiprocess mode. That mode has no gauges that live in a process; the one gauge here
(pending deliveries) is read from the database at scrape time instead, which is right with any number of
processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Seconds: from a fast API call (a few ms) to a long query or a slow destination (the 10 s send timeout).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.http_requests = Counter(
            "beacon_http_requests",
            "HTTP requests answered, by route template and status.",
            ["method", "route", "status"],
            registry=r,
        )
        self.http_duration = Histogram(
            "beacon_http_request_duration_seconds",
            "Time from a request's start to its last byte, by route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.events_ingested = Counter("beacon_events_ingested", "Events stored by ingest.", registry=r)
        self.events_failed = Counter("beacon_events_failed", "Events refused by ingest (its `failed`).", registry=r)
        self.query_duration = Histogram(
            "beacon_query_duration_seconds",
            "Query and export time until the answer starts, by kind and outcome.",
            ["kind", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.monitor_evaluations = Counter(
            "beacon_monitor_evaluations",
            "Monitor evaluations, by the state found (ok, alerting, no_data, error).",
            ["outcome"],
            registry=r,
        )
        self.monitor_lag = Histogram(
            "beacon_monitor_evaluation_lag_seconds",
            "How late a monitor's evaluation started after it was due.",
            buckets=LAG_BUCKETS,
            registry=r,
        )
        self.deliveries = Counter(
            "beacon_deliveries",
            "Delivery attempts, by notifier type and outcome (succeeded, retrying, failed).",
            ["type", "outcome"],
            registry=r,
        )
        self.delivery_duration = Histogram(
            "beacon_delivery_duration_seconds",
            "Time of one send to a destination, by notifier type.",
            ["type"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.alerts_received = Counter(
            "beacon_alerts_received",
            "Alerts received for routing, by source (external, monitor).",
            ["source"],
            registry=r,
        )
        self.notifications = Counter(
            "beacon_notifications",
            "Group notifications queued by routing, by reason (first, new_alerts, resolved, repeat).",
            ["reason"],
            registry=r,
        )

    @contextmanager
    def timed_query(self, kind: str) -> Iterator[None]:
        """Times a query or export until its answer starts; outcome `error` when it raised (a bad query, a
        timeout, a cancel), `ok` otherwise."""
        started, outcome = time.perf_counter(), "error"
        try:
            yield
            outcome = "ok"
        finally:
            self.query_duration.labels(kind, outcome).observe(time.perf_counter() - started)

    def render(self, pending_deliveries: int | None) -> bytes:
        """The text exposition: every process's values under multiprocess mode, this app's otherwise; plus the
        pending deliveries read for this scrape."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            collected = CollectorRegistry()
            MultiProcessCollector(collected)
        else:
            collected = self.registry
        text = generate_latest(collected)
        if pending_deliveries is not None:
            scrape = CollectorRegistry()
            scrape.register(_Pending(pending_deliveries))
            text += generate_latest(scrape)
        return text


class _Pending:
    """A value read for one scrape: a metric family of its own, so multiprocess mode keeps no file of it."""

    def __init__(self, value: int) -> None:
        self.value = value

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "beacon_deliveries_pending",
            "Deliveries waiting to be sent (pending, retrying, or deferred by a mute).",
            value=self.value,
        )
