"""Exceptions the client raises: every failure carries what a caller needs to act on it or report it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beacon_client.ingest import IngestTotals


class BeaconClientError(Exception):
    """Base of every error the Beacon client raises."""


class BeaconAPIError(BeaconClientError):
    """The service answered with an error envelope (or a non-2xx response without one).

    `envelope` is the decoded response body as sent; the other attributes are its `error` fields.
    `attempts` counts the requests made, retries included.
    """

    def __init__(
        self,
        *,
        status: int,
        type: str,
        code: str,
        message: str,
        request_id: str | None,
        param: str | None = None,
        doc_url: str | None = None,
        envelope: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        attempts: int = 1,
    ) -> None:
        self.status = status
        self.type = type
        self.code = code
        self.message = message
        self.request_id = request_id
        self.param = param
        self.doc_url = doc_url
        self.envelope: Mapping[str, Any] = envelope or {}
        self.headers: Mapping[str, str] = headers or {}
        self.attempts = attempts
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" (param {self.param})" if self.param else ""
        rid = f" [request {self.request_id}]" if self.request_id else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.status} {self.code}: {self.message}{where}{rid}{tries}"

    @property
    def retry_after(self) -> str | None:
        return self.headers.get("retry-after")


class BeaconConnectionError(BeaconClientError):
    """The service could not be reached (or the connection broke) on every attempt."""

    def __init__(self, message: str, *, attempts: int) -> None:
        self.attempts = attempts
        super().__init__(message)


class IngestBatchError(BeaconClientError):
    """A batch of events was finally not ingested. Nothing is dropped silently: the batch's events are here.

    `events` are the events of that batch as they were added; `first_index` is the position of the first of
    them among all events added to the ingester; `cause` is the error of the last attempt; `totals` are what
    was ingested before this batch.
    """

    def __init__(
        self, *, events: Sequence[Any], first_index: int, cause: BeaconClientError, totals: IngestTotals
    ) -> None:
        self.events = list(events)
        self.first_index = first_index
        self.cause = cause
        self.totals = totals
        super().__init__(
            f"A batch of {len(self.events)} events (events {first_index} to {first_index + len(self.events) - 1}) "
            f"was not ingested: {cause}"
        )


class WebhookVerificationError(Exception):
    """A webhook's signature is missing, malformed, wrong, or its timestamp is outside the tolerance."""
