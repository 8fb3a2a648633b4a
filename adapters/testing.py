"""A small kit to check an adapter (built in or from a plugin) against the contract.

    from adapters import testing as kit

    def test_my_adapter():                                                   # a plain pytest function
        kit.check_config(MyAdapter, valid={...}, invalid={"url": {...}})      # ConfigError names the key
        kit.check_render(kit.adapter(MyAdapter, {...}))                         # every event kind, hostile text
        kit.check_retry_classification(MyAdapter, lambda base: {"url": base + "/hook"})

Every check is called from plain `def` tests: the one that sends runs its own event loop there, so a plugin's
tests need no pytest plugin and no `asyncio_mode`. Inside a running event loop (an `async def` test) it returns a
coroutine to await instead. docs/plugins.md has a whole plugin package with its tests.

The retry check runs the adapter against a real HTTP server on 127.0.0.1 that answers 2xx, 4xx, 408, 429 with
`Retry-After`, 5xx, and against a closed port; that server echoes what it received in its error bodies (the
request path and query as careless servers do: as sent, decoded, percent-encoded, HTML-escaped, JSON-escaped;
the headers; the body), so the check also proves that no part of a secret leaks into a `DeliveryResult.detail`
(`assert_no_secret`).
"""

from __future__ import annotations

import asyncio
import html
import json
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote

import msgspec

from adapters.base import Adapter
from adapters.contract import (
    AdapterContext,
    AdapterSettings,
    AlertGroup,
    ConfigError,
    DeliveryResult,
    Event,
    GroupAlert,
    Message,
    RecentChange,
)
from adapters.guard import DestinationGuard
from adapters.http import HttpSender
from adapters.redaction import secret_parts

HOSTILE_TEXT = "Quote \" apostrophe ' back\\slash\nnew line\ttab {{ 7*7 }} {% if %} <script>alert(1)</script> & ünï 🚨"


def sample_events() -> dict[str, Event]:
    """One event of each kind, as monitors fill them."""
    base = Event(
        kind="triggered",
        monitor_id="mon_0123456789abcdef",
        monitor_event_id="mev_0123456789abcdef",
        monitor_name="API 5xx rate",
        description="Too many server errors on the public API.",
        state="alerting",
        value=12.5,
        threshold=10.0,
        operator="above",
        query="['web-logs'] | where status >= 500 | summarize count() by bin(_time, 1m)",
        start_time="2026-11-21T08:00:00.000Z",
        end_time="2026-11-21T08:05:00.000Z",
        group={"service": "api"},
        link="https://beacon.example.com/monitors/mon_0123456789abcdef",
        time="2026-11-21T08:05:00.123Z",
    )
    return {
        "triggered": base,
        "resolved": replace_event(base, kind="resolved", state="ok", value=3.0),
        "matched": replace_event(
            base, kind="matched", state="ok", value=None, threshold=None, operator=None, matches=[{"status": 503}]
        ),
        "no_data": replace_event(base, kind="no_data", state="no_data", value=None),
        "error": replace_event(base, kind="error", state="error", value=None, error="query timed out"),
        "test": Event(kind="test", time="2026-11-21T08:05:00.123Z", link="https://beacon.example.com"),
    }


def sample_group_events() -> dict[str, Event]:
    """A routed group notification: two alerts firing and one resolved, then the whole group resolved."""
    common = {"alertname": "HighLatency", "team": "payments", "severity": "critical"}

    def alert(instance: str, status: str, summary: str) -> GroupAlert:
        return GroupAlert(
            fingerprint=f"f00d{instance[-1]}{'0' * 11}",
            status=status,  # type: ignore[arg-type]
            labels={**common, "instance": instance},
            annotations={"summary": summary, "runbook": "https://runbooks.example.com/latency"},
            starts_at="2026-11-21T08:00:00.000Z",
            ends_at=None if status == "firing" else "2026-11-21T08:04:00.000Z",
            generator_url="https://prometheus.example.com/graph?g0.expr=latency",
        )

    firing = [
        alert("db-1", "firing", "p99 latency 2.1 s on db-1"),
        alert("db-2", "firing", "p99 latency 1.7 s on db-2"),
        alert("db-3", "resolved", "p99 latency 1.2 s on db-3"),
    ]
    group = AlertGroup(
        key='{}/{team="payments"}:{alertname="HighLatency"}',
        reason="new_alerts",
        status="firing",
        labels={"alertname": "HighLatency"},
        common_labels=common,
        common_annotations={"runbook": "https://runbooks.example.com/latency"},
        alerts=firing,
    )
    resolved = [msgspec.structs.replace(a, status="resolved", ends_at="2026-11-21T08:09:00.000Z") for a in firing]
    base = Event(
        kind="triggered",
        state="alerting",
        monitor_name="HighLatency",
        description="2 firing, 1 resolved",
        link="https://beacon.example.com/ui/alerts",
        time="2026-11-21T08:05:00.123Z",
        alert_group=group,
    )
    return {
        "group_firing": base,
        "group_resolved": replace_event(
            base,
            kind="resolved",
            state="ok",
            description="All 3 alerts resolved.",
            alert_group=msgspec.structs.replace(group, reason="resolved", status="resolved", alerts=resolved),
        ),
    }


def replace_event(event: Event, **changes: Any) -> Event:
    return msgspec.structs.replace(event, **changes)


def sample_changes() -> list[RecentChange]:
    """What changed before a message (as app/annotations/changes.py finds it): a deploy matched by its labels and
    a config change matched by its dataset."""
    return [
        RecentChange(
            id="ann_00000000000000000000000a",
            type="deploy",
            title="checkout 1.4.2",
            labels={"service": "checkout", "env": "prod"},
            datasets=["*"],
            time="2026-11-21T07:56:00.000Z",
            url="https://ci.example.com/runs/1042",
            when="4 min before the first alert",
            why="env=prod, service=checkout",
        ),
        RecentChange(
            id="ann_00000000000000000000000b",
            type="config",
            title="raise pool size",
            datasets=["web-logs"],
            time="2026-11-21T07:30:00.000Z",
            end_time="2026-11-21T07:31:00.000Z",
            when="from 30 min before the first alert to 29 min before the first alert",
            why="dataset web-logs",
        ),
    ]


def hostile_event() -> Event:
    hostile_change = RecentChange(
        id="ann_00000000000000000000000c",
        type=HOSTILE_TEXT,
        title=HOSTILE_TEXT,
        labels={"service": HOSTILE_TEXT},
        time="2026-11-21T07:56:00.000Z",
        url="https://ci.example.com/runs/1?a=|<>)",
        when="4 min before the first alert",
        why=f"service={HOSTILE_TEXT}",
    )
    return replace_event(
        sample_events()["triggered"],
        monitor_name=HOSTILE_TEXT,
        description=HOSTILE_TEXT,
        query=HOSTILE_TEXT,
        group={"service": HOSTILE_TEXT},
        changes=[hostile_change],
        more_changes=3,
    )


def context(
    settings: AdapterSettings | None = None, *, message_id: str = "dlv_kit", signing_secrets: tuple[str, ...] = ()
) -> AdapterContext:
    """A context for tests: loopback destinations allowed (the kit's servers run there)."""
    return AdapterContext(
        settings=settings or AdapterSettings(),
        http=HttpSender(DestinationGuard(allow_private=True), timeout=5.0),
        message_id=message_id,
        signing_secrets=signing_secrets,
    )


def adapter(
    adapter_cls: type[Adapter[Any]], config: Mapping[str, Any], ctx: AdapterContext | None = None
) -> Adapter[Any]:
    return adapter_cls(adapter_cls.validate(config), ctx or context())


# --- config --------------------------------------------------------------------------------------------------
def check_config(
    adapter_cls: type[Adapter[Any]], *, valid: Mapping[str, Any], invalid: Mapping[str, Mapping[str, Any]]
) -> None:
    """`valid` is accepted; each `invalid[key]` is refused with a ConfigError naming `config.<key>`; an unknown
    key is refused; secret fields are masked in the config's repr."""
    config = adapter_cls.validate(valid)
    shown = repr(config)
    for name in config.secret_fields():
        value = getattr(config, name)
        assert not value or value not in shown, f"secret field {name} shows in repr"
    assert isinstance(adapter_cls.target(config), str) and adapter_cls.target(config)
    for key, bad in invalid.items():
        try:
            adapter_cls.validate(bad)
        except ConfigError as exc:
            assert exc.param == f"config.{key}", f"{bad!r}: param {exc.param!r}, expected config.{key}"
            for secret in _secret_strings(adapter_cls, bad):
                assert secret not in exc.message, f"the error for {key} shows a secret value"
        else:
            raise AssertionError(f"config {bad!r} was accepted; expected an error on config.{key}")
    try:
        adapter_cls.validate({**valid, "no_such_key_for_sure": 1})
    except ConfigError as exc:
        assert exc.param == "config.no_such_key_for_sure"
    else:
        raise AssertionError("an unknown config key was accepted")


def _secret_strings(adapter_cls: type[Adapter[Any]], raw: Mapping[str, Any]) -> list[str]:
    names = adapter_cls.Config.secret_fields()
    return [v for k, v in raw.items() if k in names and isinstance(v, str) and len(v) >= 4]


# --- rendering -----------------------------------------------------------------------------------------------
def check_render(instance: Adapter[Any]) -> dict[str, Message]:
    """Every kind of event renders to a JSON-serialisable message; hostile text never breaks the payload and
    arrives as text (possibly truncated), never interpreted."""
    rendered = {kind: instance.render(event) for kind, event in sample_events().items()}
    rendered["hostile"] = instance.render(hostile_event())
    for kind, message in rendered.items():
        encoded = msgspec.json.encode(message.payload)
        assert json.loads(encoded) == message.payload, f"{kind}: payload does not survive JSON"
    text = json.dumps(rendered["hostile"].payload, ensure_ascii=False)
    assert "49" not in text.replace("2026", ""), "a template expression in the data was evaluated"
    assert "{{ 7*7 }}" in text or "{{ 7*7 }}".replace("<", "&lt;") in text, "hostile text was lost"
    return rendered


def check_group_render(instance: Adapter[Any]) -> dict[str, Message]:
    """A routed group notification (firing, then resolved) renders to a JSON-serialisable message that names the
    group (the built-in types from `templates/<type>/group*`; a plugin may keep rendering `monitor_name` and
    `description`, which a group event also fills)."""
    rendered = {kind: instance.render(event) for kind, event in sample_group_events().items()}
    for kind, message in rendered.items():
        encoded = msgspec.json.encode(message.payload)
        assert json.loads(encoded) == message.payload, f"{kind}: payload does not survive JSON"
    assert "HighLatency" in json.dumps(rendered["group_firing"].payload), "the group's name is missing"
    return rendered


# --- sending -------------------------------------------------------------------------------------------------
@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    echo: bool = False  # append what was received (a careless server that echoes secrets)


@dataclass
class Received:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class LocalServer:
    """A real HTTP/1.1 server on 127.0.0.1 that answers with scripted replies and records what it receives."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.received: list[Received] = []
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aenter__(self) -> LocalServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.received.append(Received(method, target, headers, body))
            reply = self.replies.pop(0) if self.replies else Reply(200)
            text = reply.body + (" " + echo(target, headers, body, first=len(self.received)) if reply.echo else "")
            payload = text.encode()
            extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
            status_line = f"HTTP/1.1 {reply.status} X\r\n"
            fixed = f"Content-Length: {len(payload)}\r\nConnection: close\r\n"
            writer.write((status_line + fixed + extra + "\r\n").encode() + payload)
            await writer.drain()
        finally:
            writer.close()


def echo(target: str, headers: Mapping[str, str], body: bytes, *, first: int = 0) -> str:
    """The request as careless servers' error pages repeat it. Each reply starts with another of its forms
    (`first`), so that every form comes before the cut an adapter makes in a long error body."""
    forms = [
        target,
        f"Cannot POST {unquote(target)}",
        f"<p>{html.escape(target)}</p>",
        json.dumps({"path": target}).replace("/", "\\/"),
        quote(target, safe=""),
        json.dumps(dict(headers)),
        body.decode("utf-8", "replace"),
    ]
    first %= len(forms)
    return " ".join(forms[first:] + forms[:first])


def assert_no_secret(text: str, secrets: Iterable[str], label: str = "") -> None:
    """No part of any secret (a URL's path, segments, query values, userinfo) shows in `text`, as written or
    percent-encoded, HTML-escaped or JSON-escaped."""
    for secret in secrets:
        for part in secret_parts(secret):
            forms = {part, unquote(part), quote(part, safe=""), quote(part), html.escape(part)}
            forms |= {f.replace("/", "\\/") for f in forms} | {json.dumps(part)[1:-1]}
            for form in forms:
                assert form not in text, f"{label}: a part of a secret shows in {text!r}"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


EXPECTED: list[tuple[Reply, bool, bool, float | None]] = [
    # reply, ok, retryable, retry_after
    (Reply(200), True, False, None),
    (Reply(202), True, False, None),
    (Reply(204), True, False, None),
    (Reply(400, body="bad request", echo=True), False, False, None),
    (Reply(401, echo=True), False, False, None),
    (Reply(403, echo=True), False, False, None),
    (Reply(404, echo=True), False, False, None),
    (Reply(408, echo=True), False, True, None),
    (Reply(429, {"Retry-After": "7"}, echo=True), False, True, 7.0),
    (Reply(500, body="oops", echo=True), False, True, None),
    (Reply(502), False, True, None),
    (Reply(503, {"Retry-After": "2"}, echo=True), False, True, 2.0),
]


def check_retry_classification(
    adapter_cls: type[Adapter[Any]],
    config_for: Callable[[str], Mapping[str, Any]],
    *,
    settings_for: Callable[[str], AdapterSettings] | None = None,
    signing_secrets: tuple[str, ...] = (),
) -> Any:
    """Send to a local server answering each status of EXPECTED, then to a closed port; check every
    outcome's `ok`, `retryable`, `retry_after`, `status`, and that no secret appears in any `detail`.

    Called from synchronous code (a plain test function) it runs to the end in an event loop of its own and
    returns the results; called inside a running loop it returns the coroutine, to be awaited. (A coroutine
    left un-awaited in a plain test would check nothing and pass: that is never what this returns there.)"""
    work = _retry_classification(adapter_cls, config_for, settings_for=settings_for, signing_secrets=signing_secrets)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    return work


async def _retry_classification(
    adapter_cls: type[Adapter[Any]],
    config_for: Callable[[str], Mapping[str, Any]],
    *,
    settings_for: Callable[[str], AdapterSettings] | None,
    signing_secrets: tuple[str, ...],
) -> list[DeliveryResult]:
    results: list[DeliveryResult] = []
    async with LocalServer() as server:
        for base, expect_status in ((server.base_url, True), (f"http://127.0.0.1:{closed_port()}", False)):
            ctx = context(settings_for(base) if settings_for else None, signing_secrets=signing_secrets)
            instance = adapter_cls(adapter_cls.validate(config_for(base)), ctx)
            try:
                cases = EXPECTED if expect_status else [(Reply(0), False, True, None)]
                for reply, ok, retryable, retry_after in cases:
                    server.replies = [reply]
                    result = await instance.send(instance.render(sample_events()["triggered"]))
                    results.append(result)
                    label = f"HTTP {reply.status}" if expect_status else "closed port"
                    assert result.ok is ok, f"{label}: ok={result.ok} ({result.detail})"
                    assert result.retryable is retryable, f"{label}: retryable={result.retryable}"
                    assert result.retry_after == retry_after, f"{label}: retry_after={result.retry_after}"
                    if expect_status:
                        assert result.status == reply.status, f"{label}: status={result.status}"
                    assert_no_secret(result.detail, instance.secret_values(), label)
            finally:
                await ctx.http.aclose()
    return results


def settings_with(**changes: Any) -> AdapterSettings:
    """The settings adapters see, with `changes` (the SMTP relay, the incident services' URLs, …)."""
    return replace(AdapterSettings(), **changes)
