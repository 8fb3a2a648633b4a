from __future__ import annotations

from beacon_client.call import Call, decode, query_string, segment
from beacon_client.models import Delivery, Page


def list_deliveries(
    *,
    notifier_id: str | None = None,
    monitor_id: str | None = None,
    status: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[Page[Delivery]]:
    params = query_string(notifier_id=notifier_id, monitor_id=monitor_id, status=status, limit=limit, cursor=cursor)
    return Call("GET", "/v1/deliveries", decode(Page[Delivery]), params=params)


def get_delivery(delivery_id: str) -> Call[Delivery]:
    return Call("GET", f"/v1/deliveries/{segment(delivery_id)}", decode(Delivery))


def retry_delivery(delivery_id: str) -> Call[Delivery]:
    return Call("POST", f"/v1/deliveries/{segment(delivery_id)}/retry", decode(Delivery))
