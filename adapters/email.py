"""`email`: a multipart (text + HTML) message through the SMTP relay of the settings (`BEACON_SMTP_*`).

The relay is the operator's own (often on localhost), so the private-network guard does not apply to it;
recipients are the notifier's `addresses`.

The relay accepts or refuses each recipient on its own. When it refuses some, the message has still gone to
the others: the send fails, naming each refused address and the relay's reason, and is not retried (a retry
would send it again to those who have it). When it refuses all, the send fails and is retried only if every
refusal was temporary (4xx).
"""

from __future__ import annotations

import base64
import email.utils
from email.message import EmailMessage
from typing import Annotated

import aiosmtplib
import msgspec

from adapters.base import Adapter
from adapters.checks import check_email
from adapters.contract import AdapterConfig, DeliveryResult, Event, Message
from adapters.redaction import MIN_PART

MAX_ADDRESSES = 50
SMTP_TIMEOUT_SECONDS = 20.0
REASON_LIMIT = 120  # characters of the relay's reply kept per refused address


class EmailConfig(AdapterConfig):
    addresses: Annotated[list[str], msgspec.Meta(min_length=1, max_length=MAX_ADDRESSES)]


class Email(Adapter[EmailConfig]):
    type = "email"
    send_resolved = False  # Alertmanager's default for Slack and e-mail
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

    def render(self, event: Event) -> Message:
        context = self.template_context(event)
        # A routed group notification has its own subject and bodies (group_*.j2).
        prefix = "group_" if self.template_name(event, "body.txt.j2", "group_body.txt.j2").startswith("group_") else ""
        subject = " ".join(self.templates.text(f"{prefix}subject.txt.j2", **context).split())  # never a header break
        return Message(
            payload={
                "subject": subject,
                "text": self.templates.text(f"{prefix}body.txt.j2", **context),
                "html": self.templates.text(f"{prefix}body.html.j2", **context),
                "to": list(self.config.addresses),
            }
        )

    def build(self, message: Message) -> EmailMessage:
        settings = self.context.settings
        mail = EmailMessage()
        mail["From"] = settings.smtp_from
        mail["To"] = ", ".join(message.payload["to"])
        mail["Subject"] = message.payload["subject"]
        mail["Date"] = email.utils.formatdate(localtime=False)
        domain = settings.smtp_from.rpartition("@")[2] or "beacon.local"
        mail["Message-ID"] = f"<{self.context.message_id}@{domain}>"  # the same on every retry
        mail.set_content(message.payload["text"])
        mail.add_alternative(message.payload["html"], subtype="html")
        return mail

    def secret_values(self) -> list[str]:
        """The relay credentials too, as typed and as AUTH LOGIN and PLAIN send them (base64)."""
        settings = self.context.settings
        user, password = settings.smtp_username or "", settings.smtp_password or ""
        sent = [user, password, f"\0{user}\0{password}"] if password else [user]
        encoded = [base64.b64encode(v.encode()).decode() for v in sent if v]
        named = [user] if len(user) >= MIN_PART else []  # a user name is no secret: only masked when long enough
        return [*super().secret_values(), *named, *(v for v in [password, *encoded] if v)]

    async def send(self, message: Message) -> DeliveryResult:
        settings = self.context.settings
        if not settings.smtp_host:
            return DeliveryResult(ok=False, retryable=False, detail="e-mail is not configured: set BEACON_SMTP_HOST")
        recipients = message.payload["to"]
        try:
            refused, _ = await aiosmtplib.send(
                self.build(message),
                hostname=settings.smtp_host,
                port=settings.smtp_port,
                username=settings.smtp_username,
                password=settings.smtp_password,
                start_tls=settings.smtp_starttls,
                use_tls=False,
                timeout=SMTP_TIMEOUT_SECONDS,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            replies = {r.recipient: (r.code, r.message) for r in exc.recipients}
            codes = [code for code, _ in replies.values()]
            return DeliveryResult(
                ok=False,
                retryable=bool(codes) and all(400 <= c < 500 for c in codes),
                status=codes[0] if codes else None,
                detail=f"SMTP: every recipient was refused: {_refusals(replies)}",
            )
        except aiosmtplib.SMTPResponseException as exc:
            # 4xx replies are transient by definition; 5xx are permanent.
            return DeliveryResult(
                ok=False, retryable=400 <= exc.code < 500, status=exc.code, detail=f"SMTP {exc.code}: {exc.message}"
            )
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            return DeliveryResult(ok=False, retryable=True, detail=f"SMTP network error: {type(exc).__name__}: {exc}")
        if refused:
            replies = {address: (reply.code, reply.message) for address, reply in refused.items()}
            return DeliveryResult(
                ok=False,
                retryable=False,
                status=next(iter(replies.values()))[0],
                detail=(
                    f"SMTP: delivered to {len(recipients) - len(replies)} of {len(recipients)} recipients; "
                    f"refused: {_refusals(replies)}; not retried, so that the others do not get it twice"
                ),
            )
        return DeliveryResult(
            ok=True, status=250, detail=f"accepted by {settings.smtp_host} for {len(recipients)} recipient(s)"
        )


def _refusals(replies: dict[str, tuple[int, str]]) -> str:
    return "; ".join(
        f"{address} ({code} {' '.join(text.split())[:REASON_LIMIT]})" for address, (code, text) in replies.items()
    )
