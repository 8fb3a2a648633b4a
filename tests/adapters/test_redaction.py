"""Secrets stay out of what a send reports, whatever form a destination echoes them in.

Common servers' error pages repeat the request path: nginx and Apache HTML-escape it, a framework writes
"Cannot POST /services/…", PHP's json_encode writes `\\/`, some percent-encode it. The path and query of a
chat or webhook URL are its credential, so no part of them may reach a delivery's `detail`.
"""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, unquote

import pytest
from werkzeug import Request, Response

from adapters import testing as kit
from adapters.base import Adapter, AdapterConfig, DeliveryResult, Message, Secret
from adapters.chat_a import ChatA
from adapters.chat_b import ChatB
from adapters.chat_c import ChatC
from adapters.http import redact
from adapters.incident_b import IncidentB
from adapters.webhook import Webhook, new_signing_secret

SECRET_PATH = "/services/T0SECRET/B0SECRET/zzPathCredentialQQ77"
SECRET_QUERY = "token=QuerySecret123&sig=Sig%2FWith%2BSlash"
TOKENS = ["T0SECRET", "B0SECRET", "zzPathCredentialQQ77", "QuerySecret123", "Sig/With+Slash", "pa55w0rd"]


def shown(text: str) -> str:
    """What a reader of `text` can recover: every percent, HTML and JSON escape undone, case ignored."""
    for _ in range(3):
        text = html.unescape(unquote(text.replace("\\/", "/")))
        text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    return text.lower()


def assert_hidden(text: str, tokens: list[str] = TOKENS) -> None:
    for token in tokens:
        assert token.lower() not in shown(text), f"{token!r} shows in {text!r}"


ECHOES = {
    "framework": lambda target: f"Cannot POST {unquote(target)}",
    "nginx": lambda target: f"<html><body><h1>404 Not Found</h1><p>{html.escape(target)} was not found</p></body>",
    "json": lambda target: json.dumps({"error": "no route", "path": target}).replace("/", "\\/"),
    "json_unicode": lambda target: json.dumps({"path": target.replace("/", "\u2215")}, ensure_ascii=True).replace(
        "\\u2215", "\\u002F"
    ),
    "encoded": lambda target: f"no such webhook: {quote(target, safe='')}",
    "double": lambda target: f"bad target {quote(quote(target, safe=''), safe='')}",
    "lowercase_hex": lambda target: f"missing {quote(target, safe='').lower()}",
}


@pytest.mark.parametrize("form", list(ECHOES))
def test_every_part_is_masked_in_every_form(form):
    url = f"https://user:pa55w0rd@hooks.example.com{SECRET_PATH}?{SECRET_QUERY}"
    text = ECHOES[form](f"{SECRET_PATH}?{SECRET_QUERY}")
    masked = redact(text, [url])
    assert_hidden(masked)
    assert "**********" in masked


def test_parts_alone_and_credentials_are_masked_and_the_rest_is_kept():
    url = f"https://user:pa55w0rd@hooks.example.com{SECRET_PATH}?{SECRET_QUERY}"
    basic = base64.b64encode(b"user:pa55w0rd").decode()
    text = (
        "HTTP 404 from hooks.example.com: team T0SECRET has no channel B0SECRET; "
        f"token QuerySecret123 unknown; Authorization: Basic {basic}; pa55w0rd; ünïcode stays"
    )
    masked = redact(text, [url])
    assert_hidden(masked)
    assert basic not in masked
    assert masked.startswith("HTTP 404 from hooks.example.com: team **********")
    assert masked.endswith("ünïcode stays")
    # Short segments and values (`v1`, `api`, `1`) are not worth garbling every such word for.
    assert redact("api v1 error 1", ["https://h.example/api/v1?x=1"]) == "api v1 error 1"


def _echo(form: str):
    def handler(request: Request) -> Response:
        target = request.environ.get("REQUEST_URI") or request.full_path
        auth = request.headers.get("Authorization", "")
        return Response(ECHOES[form](target) + f" (auth: {auth})", status=404)

    return handler


@pytest.mark.parametrize("adapter_cls", [ChatA, ChatB, ChatC, Webhook], ids=lambda a: a.type)
async def test_an_echoing_destination_cannot_show_the_url(httpserver, ctx, adapter_cls):
    host = httpserver.url_for("").split("//", 1)[1].rstrip("/")
    url = f"http://user:pa55w0rd@{host}{SECRET_PATH}?{SECRET_QUERY}"
    config = {"url": url, **({"signing_secret": new_signing_secret()} if adapter_cls is Webhook else {})}
    adapter = kit.adapter(adapter_cls, config, ctx)
    for form in ECHOES:
        httpserver.clear()
        httpserver.expect_request(re.compile(".*")).respond_with_handler(_echo(form))
        result = await adapter.send(adapter.render(kit.sample_events()["test"]))
        assert not result.ok and result.status == 404
        assert_hidden(result.detail)
        assert "**********" in result.detail, result.detail
        received = unquote(httpserver.log[0][0].environ["REQUEST_URI"])
        assert "zzPathCredentialQQ77" in received  # it did echo the secret


async def test_an_echoed_integration_key_is_masked(httpserver, ctx):
    key = "GENIE/key+secret=0001"  # characters that come back percent-encoded or escaped

    def echo(request: Request) -> Response:
        auth = request.headers["Authorization"]
        return Response(f"<p>{html.escape(auth)}</p> {quote(auth)} " + json.dumps(auth).replace("/", "\\/"), 403)

    httpserver.expect_request("/og/v2/alerts", method="POST").respond_with_handler(echo)
    adapter = kit.adapter(IncidentB, {"integration_key": key}, ctx)
    result = await adapter.send(adapter.render(kit.sample_events()["triggered"]))
    assert result.status == 403 and "GenieKey **********" in result.detail
    assert_hidden(result.detail, [key])


class LeakyConfig(AdapterConfig):
    url: Secret
    token: Secret


class Leaky(Adapter[LeakyConfig]):
    """A plugin that reports its destination carelessly, in every form it could."""

    type = "leaky"
    Config = LeakyConfig

    @classmethod
    def target(cls, config: LeakyConfig) -> str:
        return "leaky"

    async def send(self, message: Message) -> DeliveryResult:
        url, token = self.config.url, self.config.token
        return DeliveryResult(ok=False, detail=f"{url} {quote(url, safe='')} {html.escape(url)} {token.lower()}")


class LeakierStill(Leaky):
    type = "leakier"

    async def send(self, message: Message) -> DeliveryResult:
        result = await super().send(message)
        return DeliveryResult(ok=False, detail=result.detail + " " + quote(self.config.token))


async def test_a_plugin_adapter_is_masked_too():
    url = f"https://hooks.example.com{SECRET_PATH}?{SECRET_QUERY}"
    for adapter_cls in (Leaky, LeakierStill):
        adapter = kit.adapter(adapter_cls, {"url": url, "token": "PluginToken/42"})
        result = await adapter.send(Message(payload={}))
        assert_hidden(result.detail, [*TOKENS[:5], "PluginToken/42"])
        assert result.detail.startswith("********** **********")
