"""`beacon dev receiver`'s request handler: each POST printed on one or two lines (its type, title and summary),
its Standard Webhooks signature checked first when the receiver has the secret (401 when it does not match)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

import click

MAX_BODY = 1024 * 1024  # a receiver for one person's tests: a larger body is refused


def describe(payload: Any) -> tuple[str, str, str]:
    """(type, title, summary) of a Beacon webhook body (or an Alertmanager-format one), for one line each."""
    if isinstance(payload, dict) and isinstance(payload.get("data"), dict):
        data = payload["data"]
        return str(payload.get("type", "?")), str(data.get("title", "")), str(data.get("summary", ""))
    if isinstance(payload, dict) and "alerts" in payload:  # config.format: alertmanager
        name = (payload.get("commonLabels") or {}).get("alertname", "")
        return f"alertmanager.{payload.get('status', '?')}", str(name), f"{len(payload['alerts'])} alert(s)"
    return "?", json.dumps(payload)[:200], ""


class Receiver(BaseHTTPRequestHandler):
    """Prints each POST; with `secret`, checks its signature first (401 when it does not match)."""

    secret: str | None = None
    show_json = False
    server_version = "beacon-dev-receiver"

    def do_POST(self) -> None:
        from beacon_client.errors import WebhookVerificationError
        from beacon_client.webhooks import verify_webhook

        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._answer(413, f"receiver: {self.path}: a body of {length:,} bytes, refused (over 1 MB)")
            return
        body = self.rfile.read(length)
        head = f"{datetime.now().strftime('%H:%M:%S')} {self.headers.get('webhook-id', '-')}"
        try:
            if self.secret:
                payload = verify_webhook(self.secret, dict(self.headers.items()), body)
                check = "signature ok"
            else:
                payload = json.loads(body)
                check = "signature not checked (no --secret)"
        except WebhookVerificationError as exc:
            self._answer(401, f"receiver: {head}  signature REFUSED: {exc}")
            return
        except ValueError:
            self._answer(400, f"receiver: {head}  not JSON: {body[:200]!r}")
            return
        kind, title, summary = describe(payload)
        lines = [f"receiver: {head}  {check}  {kind}  {title}"]
        if summary:
            lines.append(f"receiver:   {summary}")
        if self.show_json:
            lines.append(json.dumps(payload, indent=2, ensure_ascii=False))
        self._answer(200, "\n".join(lines))

    def do_GET(self) -> None:
        self._answer(200, None, b"Beacon's development webhook receiver: POST to it.\n")

    def _answer(self, status: int, said: str | None, body: bytes = b"") -> None:
        if said:
            click.echo(said)
            sys.stdout.flush()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # each request is printed above, once
        pass
