"""`email`: a multipart (text + HTML) message through the SMTP relay of the settings (`BEACON_SMTP_*`)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from adapters.base import Adapter, AdapterConfig
from adapters.checks import check_email

MAX_ADDRESSES = 50


class EmailConfig(AdapterConfig):
    addresses: Annotated[list[str], msgspec.Meta(min_length=1, max_length=MAX_ADDRESSES)]


class Email(Adapter[EmailConfig]):
    type = "email"
    Config = EmailConfig
    description = "E-mail through the configured SMTP relay"

    @classmethod
    def check(cls, config: EmailConfig) -> None:
        for i, address in enumerate(config.addresses):
            check_email(address, "addresses", i)

    @classmethod
    def target(cls, config: EmailConfig) -> str:
        first, rest = config.addresses[0], len(config.addresses) - 1
        return f"{first} +{rest} more" if rest else first
