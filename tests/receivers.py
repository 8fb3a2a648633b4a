"""Real local receivers for notifications: an SMTP server (aiosmtpd) that keeps what it gets, and the base of
hand-written HTTP receivers whose every byte and delay a test controls."""

from __future__ import annotations

import asyncio
from typing import Any, Self


class RawHTTP:
    """A loopback server on a port the system chose, speaking HTTP by hand over asyncio streams: a subclass
    answers each connection in `_handle` (keep-alive, never answering, answering late: whatever its test needs)."""

    path = "/hook"

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}{self.path}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class Sink:
    """An SMTP server's message handler: keeps every envelope; recipients in `reject` get that reply."""

    def __init__(self) -> None:
        self.envelopes: list[Any] = []
        self.reject: dict[str, str] = {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.reject:
            return self.reject[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 Message accepted"
