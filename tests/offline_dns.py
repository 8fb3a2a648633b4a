"""DNS for the tests: a fixed table, nothing sent to a name server (the tests use no network beyond loopback).

Names not in the table do not resolve, like on a machine without DNS. The public address below is only ever
*checked* by the private-network guard, never connected to: tests that send use loopback addresses.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from adapters.guard import Unresolvable

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


def use_offline_dns(app: Any) -> Any:
    env = app.state.notifier_env
    app.state.notifier_env = replace(env, guard=env.guard.with_resolver(offline_resolve))
    return app
