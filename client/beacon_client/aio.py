"""`AsyncClient`: the asyncio Beacon client. Every endpoint method is bound from `beacon_client.endpoints`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack, cast

import httpx

from beacon_client.backoff import Backoff
from beacon_client.binding import async_method
from beacon_client.call import Call, TimeArg
from beacon_client.endpoints import alerting, datasets, deliveries, events, monitors, notifiers, tokens
from beacon_client.endpoints import annotations as annotation_specs
from beacon_client.ingest import AsyncIngester, IngesterOptions
from beacon_client.models import Page
from beacon_client.retrying import Attempts, build_request, resolve, tls_context

P = ParamSpec("P")
T = TypeVar("T")


class AsyncClient:
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
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.url, self._headers = resolve(url, token)
        self._owns_http = http is None
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout, verify=tls_context(self.url))
        self._backoff = backoff or Backoff()
        self._sleep = sleep

    async def _perform(self, call: Call[Any], *, stream: bool = False) -> httpx.Response:
        attempts = Attempts(self._backoff, call)
        while True:
            try:
                response = await self._http.send(
                    build_request(self._http, self.url, self._headers, call), stream=stream
                )
                if stream and not response.is_success:
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
            except httpx.TransportError as exc:
                delay = attempts.after_error(exc)
            else:
                wait = attempts.after_response(response)
                if wait is None:
                    return response
                delay = wait
            await self._sleep(delay)

    async def _send(self, call: Call[T]) -> T:
        return call.parse(await self._perform(call))

    create_token = async_method(tokens.create_token)
    list_tokens = async_method(tokens.list_tokens)
    get_token = async_method(tokens.get_token)
    revoke_token = async_method(tokens.revoke_token)

    list_datasets = async_method(datasets.list_datasets)
    get_dataset = async_method(datasets.get_dataset)
    list_fields = async_method(datasets.list_fields)
    update_dataset = async_method(datasets.update_dataset)
    delete_dataset = async_method(datasets.delete_dataset)

    ingest = async_method(events.ingest)
    ingest_raw = async_method(events.ingest_raw)
    query = async_method(events.query)

    create_annotation = async_method(annotation_specs.create_annotation)
    list_annotations = async_method(annotation_specs.list_annotations)
    get_annotation = async_method(annotation_specs.get_annotation)
    update_annotation = async_method(annotation_specs.update_annotation)
    delete_annotation = async_method(annotation_specs.delete_annotation)

    create_notifier = async_method(notifiers.create_notifier)
    list_notifiers = async_method(notifiers.list_notifiers)
    get_notifier = async_method(notifiers.get_notifier)
    update_notifier = async_method(notifiers.update_notifier)
    delete_notifier = async_method(notifiers.delete_notifier)
    rotate_notifier_secret = async_method(notifiers.rotate_notifier_secret)
    test_notifier = async_method(notifiers.test_notifier)
    preview_notifier = async_method(notifiers.preview_notifier)
    list_notifier_deliveries = async_method(notifiers.list_notifier_deliveries)

    list_deliveries = async_method(deliveries.list_deliveries)
    get_delivery = async_method(deliveries.get_delivery)
    retry_delivery = async_method(deliveries.retry_delivery)

    create_monitor = async_method(monitors.create_monitor)
    list_monitors = async_method(monitors.list_monitors)
    get_monitor = async_method(monitors.get_monitor)
    update_monitor = async_method(monitors.update_monitor)
    delete_monitor = async_method(monitors.delete_monitor)
    evaluate_monitor = async_method(monitors.evaluate_monitor)
    monitor_history = async_method(monitors.monitor_history)

    list_alerts = async_method(alerting.list_alerts)
    get_alert = async_method(alerting.get_alert)
    alert_groups = async_method(alerting.alert_groups)
    post_alerts = async_method(alerting.post_alerts)

    create_silence = async_method(alerting.create_silence)
    list_silences = async_method(alerting.list_silences)
    get_silence = async_method(alerting.get_silence)
    update_silence = async_method(alerting.update_silence)
    expire_silence = async_method(alerting.expire_silence)

    get_routing = async_method(alerting.get_routing)
    put_routing = async_method(alerting.put_routing)
    test_routing = async_method(alerting.test_routing)
    import_routing = async_method(alerting.import_routing)

    async def export(
        self, apl: str, *, start_time: TimeArg | None = None, end_time: TimeArg | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Every row of the query, streamed (the request is sent when iteration starts; retried before the
        first row arrives, not after)."""
        response = await self._perform(events.export(apl, start_time=start_time, end_time=end_time), stream=True)
        try:
            async for line in response.aiter_lines():
                if line.strip():
                    yield events.export_row(line)
        finally:
            await response.aclose()

    def ingester(self, dataset: str, **options: Unpack[IngesterOptions]) -> AsyncIngester:
        """A batching ingester for `dataset` (see `Ingester`)."""
        return AsyncIngester(self, dataset, **options)

    async def iterate(
        self, list_method: Callable[P, Awaitable[Page[T]]], *args: P.args, **kwargs: P.kwargs
    ) -> AsyncIterator[T]:
        """Every item of a list, page after page: `async for a in client.iterate(client.list_annotations)`."""
        fetch = cast(Callable[..., Awaitable[Page[T]]], list_method)
        cursor = kwargs.pop("cursor", None)
        while True:
            page = await fetch(*args, **kwargs, cursor=cursor)
            for item in page.data:
                yield item
            if not page.has_more or not page.next_cursor:
                return
            cursor = page.next_cursor

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
