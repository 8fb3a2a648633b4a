"""chat_a, chat_b, chat_c against a real local HTTP server: golden payloads, headers, limits, hostile text."""

from __future__ import annotations

import json

import pytest

from adapters import testing as kit
from adapters.chat_a import ChatA
from adapters.chat_b import ChatB
from adapters.chat_c import ChatC
from tests.adapters.conftest import golden

EVENTS = kit.sample_events()


@pytest.mark.parametrize("adapter_cls", [ChatA, ChatB, ChatC])
@pytest.mark.parametrize("kind", ["triggered", "resolved", "test"])
async def test_golden_payloads(httpserver, ctx, adapter_cls, kind):
    httpserver.expect_request("/hooks/T000/B000/secretTOKEN", method="POST").respond_with_data("ok")
    adapter = kit.adapter(adapter_cls, {"url": httpserver.url_for("/hooks/T000/B000/secretTOKEN")}, ctx)
    result = await adapter.send(adapter.render(EVENTS[kind]))
    assert result.ok and result.status == 200, result
    ((request, _),) = httpserver.log
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("Beacon")
    golden(f"{adapter_cls.type}_{kind}", json.loads(request.get_data()))


async def test_chat_b_asks_to_wait_and_keeps_the_url_query(httpserver, ctx):
    httpserver.expect_request("/api/webhooks/1/tok", method="POST").respond_with_json({"id": "1"})
    adapter = kit.adapter(ChatB, {"url": httpserver.url_for("/api/webhooks/1/tok") + "?thread_id=42"}, ctx)
    assert (await adapter.send(adapter.render(EVENTS["triggered"]))).ok
    ((request, _),) = httpserver.log
    assert request.args.to_dict() == {"thread_id": "42", "wait": "true"}


async def test_chat_b_truncates_to_its_limits(httpserver, ctx):
    httpserver.expect_request("/d", method="POST").respond_with_data("")
    long = kit.replace_event(
        EVENTS["triggered"], monitor_name="N" * 3000, description="D" * 9000, query="Q" * 5000, group={"g": "G" * 3000}
    )
    adapter = kit.adapter(ChatB, {"url": httpserver.url_for("/d")}, ctx)
    assert (await adapter.send(adapter.render(long))).ok
    body = json.loads(httpserver.log[0][0].get_data())
    embed = body["embeds"][0]
    assert len(body["content"]) == 2000 and body["content"].endswith("…")
    assert len(embed["title"]) == 256 and embed["title"].endswith("…")
    assert len(embed["description"]) <= 4096
    assert all(len(f["name"]) <= 256 and len(f["value"]) <= 1024 for f in embed["fields"])
    total = len(embed["title"]) + len(embed["description"]) + len(embed["footer"]["text"])
    total += sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
    assert total <= 6000
    assert body["allowed_mentions"] == {"parse": []}  # "@everyone" in data never pings


@pytest.mark.parametrize("adapter_cls", [ChatA, ChatB, ChatC])
async def test_hostile_text_stays_text(httpserver, ctx, adapter_cls):
    httpserver.expect_request("/h", method="POST").respond_with_data("ok")
    adapter = kit.adapter(adapter_cls, {"url": httpserver.url_for("/h")}, ctx)
    assert (await adapter.send(adapter.render(kit.hostile_event()))).ok
    raw = httpserver.log[0][0].get_data()
    body = json.loads(raw)  # valid JSON, whatever the title held
    text = json.dumps(body, ensure_ascii=False)
    assert "{{ 7*7 }}" in text and "49" not in text.replace("2026", "")
    if adapter_cls is ChatA:
        # mrkdwn: the script tag and ampersand are entities, so chat_a shows them as text.
        assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in body["blocks"][1]["text"]["text"]
    else:
        assert any(kit.HOSTILE_TEXT in value for value in strings(body)), "the title arrives verbatim"


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def test_chat_a_is_paced_per_url():
    a = ChatA.validate({"url": "https://hooks.example.com/services/T/B/one"})
    b = ChatA.validate({"url": "https://hooks.example.com/services/T/B/two"})
    assert ChatA.min_interval == 1.0
    assert ChatA.pacing_key(a) != ChatA.pacing_key(b)
    assert "one" not in (ChatA.pacing_key(a) or "")  # a hash: the URL is a secret
    assert ChatB.pacing_key(ChatB.validate({"url": "https://x.example.com/a"})) is None
