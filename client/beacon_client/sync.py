"""`Client`: the blocking Beacon client. Every endpoint method is bound from `beacon_client.endpoints`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack, cast

import httpx

from beacon_client.backoff import Backoff
from beacon_client.binding import sync_method
from beacon_client.call import Call, TimeArg
from beacon_client.endpoints import alerting, datasets, deliveries, events, monitors, notifiers, tokens
from beacon_client.endpoints import annotations as annotation_specs
from beacon_client.ingest import Ingester, IngesterOptions
from beacon_client.models import Page
from beacon_client.retrying import Attempts, build_request, resolve, tls_context

P = ParamSpec("P")
T = TypeVar("T")


class Client:
    """Talks to Beacon at `url` (default BEACON_URL, else http://127.0.0.1:8000) with `token` (default
    BEACON_TOKEN). Failed requests are retried per the reference back-off; errors raise `BeaconAPIError`
    (with the envelope) or `BeaconConnectionError`."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = httpx.Timeout(60.0, connect=10.0),
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
        http: httpx.Client | None = None,
    ) -> None:
        self.url, self._headers = resolve(url, token)
        self._owns_http = http is None
        self._http = http if http is not None else httpx.Client(timeout=timeout, verify=tls_context(self.url))
        self._backoff = backoff or Backoff()
        self._sleep = sleep

    def _perform(self, call: Call[Any], *, stream: bool = False) -> httpx.Response:
        attempts = Attempts(self._backoff, call)
        while True:
            try:
                response = self._http.send(build_request(self._http, self.url, self._headers, call), stream=stream)
                if stream and not response.is_success:
                    try:
                        response.read()
                    finally:
                        response.close()
            except httpx.TransportError as exc:
                delay = attempts.after_error(exc)
            else:
                wait = attempts.after_response(response)
                if wait is None:
                    return response
                delay = wait
            self._sleep(delay)

    def _send(self, call: Call[T]) -> T:
        return call.parse(self._perform(call))

    create_token = sync_method(tokens.create_token)
    list_tokens = sync_method(tokens.list_tokens)
    get_token = sync_method(tokens.get_token)
    revoke_token = sync_method(tokens.revoke_token)

    list_datasets = sync_method(datasets.list_datasets)
    get_dataset = sync_method(datasets.get_dataset)
    list_fields = sync_method(datasets.list_fields)
    update_dataset = sync_method(datasets.update_dataset)
    delete_dataset = sync_method(datasets.delete_dataset)

    ingest = sync_method(events.ingest)
    ingest_raw = sync_method(events.ingest_raw)
    query = sync_method(events.query)

    create_annotation = sync_method(annotation_specs.create_annotation)
    list_annotations = sync_method(annotation_specs.list_annotations)
    get_annotation = sync_method(annotation_specs.get_annotation)
    update_annotation = sync_method(annotation_specs.update_annotation)
    delete_annotation = sync_method(annotation_specs.delete_annotation)

    create_notifier = sync_method(notifiers.create_notifier)
    list_notifiers = sync_method(notifiers.list_notifiers)
    get_notifier = sync_method(notifiers.get_notifier)
    update_notifier = sync_method(notifiers.update_notifier)
    delete_notifier = sync_method(notifiers.delete_notifier)
    rotate_notifier_secret = sync_method(notifiers.rotate_notifier_secret)
    test_notifier = sync_method(notifiers.test_notifier)
    preview_notifier = sync_method(notifiers.preview_notifier)
    list_notifier_deliveries = sync_method(notifiers.list_notifier_deliveries)

    list_deliveries = sync_method(deliveries.list_deliveries)
    get_delivery = sync_method(deliveries.get_delivery)
    retry_delivery = sync_method(deliveries.retry_delivery)

    create_monitor = sync_method(monitors.create_monitor)
    list_monitors = sync_method(monitors.list_monitors)
    get_monitor = sync_method(monitors.get_monitor)
    update_monitor = sync_method(monitors.update_monitor)
    delete_monitor = sync_method(monitors.delete_monitor)
    evaluate_monitor = sync_method(monitors.evaluate_monitor)
    monitor_history = sync_method(monitors.monitor_history)

    list_alerts = sync_method(alerting.list_alerts)
    get_alert = sync_method(alerting.get_alert)
    alert_groups = sync_method(alerting.alert_groups)
    post_alerts = sync_method(alerting.post_alerts)

    create_silence = sync_method(alerting.create_silence)
    list_silences = sync_method(alerting.list_silences)
    get_silence = sync_method(alerting.get_silence)
    update_silence = sync_method(alerting.update_silence)
    expire_silence = sync_method(alerting.expire_silence)

    get_routing = sync_method(alerting.get_routing)
    put_routing = sync_method(alerting.put_routing)
    test_routing = sync_method(alerting.test_routing)
    import_routing = sync_method(alerting.import_routing)

    def export(
        self, apl: str, *, start_time: TimeArg | None = None, end_time: TimeArg | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every row of the query, streamed (the request is sent when iteration starts; retried before the
        first row arrives, not after)."""
        response = self._perform(events.export(apl, start_time=start_time, end_time=end_time), stream=True)
        try:
            for line in response.iter_lines():
                if line.strip():
                    yield events.export_row(line)
        finally:
            response.close()

    def ingester(self, dataset: str, **options: Unpack[IngesterOptions]) -> Ingester:
        """A batching ingester for `dataset` (see `Ingester`)."""
        return Ingester(self, dataset, **options)

    def iterate(self, list_method: Callable[P, Page[T]], *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        """Every item of a list, page after page: `client.iterate(client.list_annotations, datasets=["web"])`."""
        fetch = cast(Callable[..., Page[T]], list_method)
        cursor = kwargs.pop("cursor", None)
        while True:
            page = fetch(*args, **kwargs, cursor=cursor)
            yield from page.data
            if not page.has_more or not page.next_cursor:
                return
            cursor = page.next_cursor

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
