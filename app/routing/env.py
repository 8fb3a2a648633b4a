"""What routing needs from the running app: the delivery environment (to enqueue group notifications), a clock
(tests drive it), and counters kept for metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.deliveries.sending import DeliveryEnv
from app.metrics import Metrics
from app.timefmt import utcnow
from app.timeparams import to_ms


@dataclass
class Counters:
    """Counts since this process started (per process, for `GET /v1/routing/status`; the tables hold the lasting
    record), counted in the app's Prometheus metrics too (`/metrics` adds up every process)."""

    metrics: Metrics = field(default_factory=Metrics)
    alerts_received: Counter[str] = field(default_factory=Counter)  # by source: external, monitor
    notifications: Counter[str] = field(default_factory=Counter)  # by reason: first, new_alerts, resolved, repeat
    groups_created: int = 0
    flushes: int = 0

    def received(self, source: str, count: int) -> None:
        self.alerts_received[source] += count
        self.metrics.alerts_received.labels(source).inc(count)

    def notified(self, reasons: list[str]) -> None:
        self.notifications.update(reasons)
        for reason in reasons:
            self.metrics.notifications.labels(reason).inc()

    def snapshot(self) -> dict[str, Any]:
        return {
            "alerts_received": dict(self.alerts_received),
            "notifications": dict(self.notifications),
            "groups_created": self.groups_created,
            "flushes": self.flushes,
        }


@dataclass
class RoutingEnv:
    delivery: DeliveryEnv
    clock: Callable[[], datetime] = utcnow
    counters: Counters = field(default_factory=Counters)
    last_gc: datetime | None = None
    router: Any = None  # this process's app.routing.jobs.Router (made with the scheduler)

    def now(self) -> datetime:
        return to_ms(self.clock())

    @property
    def link(self) -> str:
        """Where a group notification points: the console's alerts page."""
        return f"{self.delivery.settings.base_url}/ui/alerts"
