"""Real local receivers for notifications: an SMTP server (aiosmtpd) that keeps what it gets."""

from __future__ import annotations

from typing import Any


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
