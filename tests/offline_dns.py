"""DNS for the tests: a fixed table, nothing sent to a name server (the tests use no network beyond loopback).

Names not in the table do not resolve, like on a machine without DNS. The public address below is only ever
*checked* by the private-network guard, never connected to: tests that send use loopback addresses.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.guard import Unresolvable
from adapters.http import HttpSender
from app.deliveries.sending import DeliveryEnv
from app.notifiers.service import build_notifier_env
from app.settings import Settings

PUBLIC_ADDRESS = "93.184.215.14"

TABLE: dict[str, list[str]] = {
    "localhost": ["127.0.0.1"],
    "public.example": [PUBLIC_ADDRESS],
    "intranet.example": ["10.1.2.3"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": [PUBLIC_ADDRESS, "192.168.1.5"],
    "v6loop.example": ["::1"],
}


async def offline_resolve(host: str, port: int) -> list[str]:
    try:
        return list(TABLE[host.lower().rstrip(".")])
    except KeyError:
        raise Unresolvable(f"{host} does not resolve (offline test DNS)") from None


def offline_delivery_env(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> DeliveryEnv:
    """What a server's loops run with (notifier adapters, HTTP sender), with this DNS, on the test's database.
    The caller closes its `http`."""
    notifier_env = build_notifier_env(settings, resolve=offline_resolve)
    return DeliveryEnv(settings, notifier_env, HttpSender(notifier_env.guard, timeout=5.0), sessionmaker)
