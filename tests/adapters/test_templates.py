"""Template failures name the template and line and send nothing; the JSON filter keeps payloads valid."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from markupsafe import Markup

from adapters import testing as kit
from adapters.base import TemplateFailure
from adapters.chat_a import ChatA
from adapters.templating import Templates
from app.deliveries.sending import send_once


def _adapter_with_templates(directory: Path, ctx):
    class Broken(ChatA):
        templates_dir = directory

    return kit.adapter(Broken, {"url": "http://127.0.0.1:9/never"}, ctx)


async def test_undefined_variable_fails_with_name_and_line(tmp_path, httpserver, ctx):
    (tmp_path / "message.json.j2").write_text(
        '{\n  "text": {{ event.monitor_name | json }},\n  "x": {{ nope | json }}\n}\n'
    )
    adapter = _adapter_with_templates(tmp_path, ctx)
    with pytest.raises(TemplateFailure) as info:
        adapter.render(kit.sample_events()["triggered"])
    assert info.value.template.endswith("message.json.j2") and info.value.line == 3
    assert "nope" in str(info.value) and "line 3" in str(info.value)
    result = await send_once(adapter, kit.sample_events()["triggered"], limit=10.0)
    assert not result.ok and not result.retryable and "message.json.j2 line 3" in result.detail
    assert httpserver.log == []  # nothing half-rendered was sent


def test_syntax_error_and_invalid_json_name_the_line(tmp_path, ctx):
    (tmp_path / "message.json.j2").write_text('{\n"a": 1,\n{% if %}\n}')
    with pytest.raises(TemplateFailure) as info:
        _adapter_with_templates(tmp_path, ctx).render(kit.sample_events()["test"])
    assert info.value.line == 3
    (tmp_path / "message.json.j2").write_text('{\n"a": {{ event.kind }}\n}')  # forgot the json filter
    with pytest.raises(TemplateFailure) as info:
        Templates(tmp_path).json("message.json.j2", event={"kind": "test"})
    assert info.value.line == 2 and "not valid JSON" in str(info.value)


def test_sandbox_refuses_unsafe_attribute_access(tmp_path):
    (tmp_path / "t.txt.j2").write_text("{{ event.__class__.__mro__ }}")
    with pytest.raises(TemplateFailure):
        Templates(tmp_path).text("t.txt.j2", event=kit.sample_events()["test"])


def test_a_dicts_fields_read_as_jinja_reads_them(tmp_path):
    """`x.name` on a dict is its item (looked up at once, not after a failed attribute lookup), unless a dict has
    such an attribute: a label named `items` or `get` leaves the methods as they are; a missing one is an error
    that names the template, and the sandbox still refuses what is unsafe."""
    labels = {"items": "label", "get": "label too", "team": "sre", "update": "x"}
    pairs = "{% for k, v in l.items() %}{{ k }}={{ v }},{% endfor %}"
    (tmp_path / "t.txt.j2").write_text("{{ l.team }}|{{ l['items'] }}|" + pairs + "|{{ l.get('team') }}")
    shown = Templates(tmp_path).text("t.txt.j2", l=labels)
    assert shown == "sre|label|items=label,get=label too,team=sre,update=x,|sre"
    (tmp_path / "missing.txt.j2").write_text("{{ l.nope }}")
    with pytest.raises(TemplateFailure, match="'dict object' has no attribute 'nope'"):
        Templates(tmp_path).text("missing.txt.j2", l=labels)
    (tmp_path / "unsafe.txt.j2").write_text("{{ l.update(team='x') }}")
    with pytest.raises(TemplateFailure, match="unsafe"):
        Templates(tmp_path).text("unsafe.txt.j2", l=labels)
    assert labels["team"] == "sre"


def test_json_filter_keeps_any_text_a_json_string(tmp_path):
    (tmp_path / "p.json.j2").write_text('{"title": {{ title | json }}, "n": {{ n | json }}}')
    nasty = 'a"b\\c\nd\u2028e</script>{{ x }}\x00'
    assert Templates(tmp_path).json("p.json.j2", title=nasty, n=None) == {"title": nasty, "n": None}


def test_the_json_filter_writes_what_the_standard_encoder_writes(tmp_path):
    values = [
        'a"b\u2028',
        None,
        True,
        False,
        0,
        -(2**70),
        1.5,
        1e20,
        float("nan"),
        float("-inf"),
        [],
        {},
        [1, [2.5, None]],
        {"a": {"b": [True, "x"]}, 3: "int key", 1.5: "float key"},
        datetime(2026, 12, 1, tzinfo=UTC),
        Markup("<b>"),
    ]
    reference = json.JSONEncoder(ensure_ascii=False, default=str)
    (tmp_path / "v.txt.j2").write_text("{{ v | json }}")
    for value in values:
        assert Templates(tmp_path).text("v.txt.j2", v=value) == reference.encode(value), value
    circular: list[object] = []
    circular.append(circular)
    with pytest.raises(TemplateFailure, match="Circular reference"):
        Templates(tmp_path).text("v.txt.j2", v=circular)


def test_json_in_html_is_still_json_and_cannot_end_its_element(tmp_path):
    (tmp_path / "p.html.j2").write_text("<p data-x='{{ title | json }}'>{{ title | json }}</p>")
    nasty = "</p><script>alert('x')</script> & more"
    shown = Templates(tmp_path).text("p.html.j2", title=nasty)
    assert "<script>" not in shown and "'x'" not in shown and " & " not in shown
    inside = shown.split(">", 1)[1].rsplit("<", 1)[0]
    assert json.loads(inside) == nasty and shown == f"<p data-x='{inside}'>{inside}</p>"
    (tmp_path / "p.json.j2").write_text('{"title": {{ title | json }}}')
    assert Templates(tmp_path).text("p.json.j2", title=nasty) == json.dumps({"title": nasty}, ensure_ascii=False)


def test_json_output_the_standard_parser_takes_is_taken(tmp_path):
    """A NaN value (the `json` filter writes `NaN`) and a lone surrogate are not strict JSON, but a payload holding
    them rendered before the faster parser came and still renders, with the same values."""
    (tmp_path / "p.json.j2").write_text('{"value": {{ value | json }}, "title": {{ title | json }}}')
    rendered = Templates(tmp_path).json("p.json.j2", value=float("nan"), title="x\ud800")
    assert rendered["value"] != rendered["value"] and rendered["title"] == "x\ud800"
    (tmp_path / "list.json.j2").write_text("[1, 2]")
    with pytest.raises(TemplateFailure, match="must be a JSON object"):
        Templates(tmp_path).json("list.json.j2")
