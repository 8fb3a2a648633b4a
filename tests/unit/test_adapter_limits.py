"""`text_limits`: an adapter (a plugin's too) declares its destination's limits on text length as a class
attribute, and whatever its `render` produces is cut to them."""

from __future__ import annotations

from adapters import testing as kit
from adapters.base import Adapter, AdapterConfig, Event, Message
from adapters.limits import fit_texts


def test_paths_reach_keys_objects_and_every_element_of_a_list():
    payload = {
        "summary": "s" * 50,
        "payload": {"summary": "p" * 50, "count": 7},
        "embeds": [{"title": "t" * 50, "fields": [{"name": "n" * 50}, {"name": "ok"}]}, "not an object"],
        "tags": ["x" * 50, 3],
    }
    limits = {"summary": 10, "payload.summary": 5, "payload.count": 1, "embeds[].title": 8}
    fit_texts(payload, {**limits, "embeds[].fields[].name": 4, "tags[]": 6, "absent.path": 1, "embeds[].none": 1})
    assert payload["summary"] == "s" * 9 + "…"
    assert payload["payload"] == {"summary": "pppp…", "count": 7}  # only texts are cut
    assert payload["embeds"][0]["title"] == "t" * 7 + "…"
    assert [f["name"] for f in payload["embeds"][0]["fields"]] == ["nnn…", "ok"]
    assert payload["embeds"][1] == "not an object"
    assert payload["tags"] == ["xxxxx…", 3]


class _Config(AdapterConfig):
    pass


class _Plugin(Adapter[_Config]):
    type = "plugin_limits"
    Config = _Config
    text_limits = {"title": 12}

    @classmethod
    def target(cls, config: _Config) -> str:
        return "somewhere"

    def render(self, event: Event) -> Message:
        return Message(payload={"title": event.monitor_name, "other": event.monitor_name})


def test_a_plugins_render_is_cut_to_its_limits():
    adapter = kit.adapter(_Plugin, {})
    message = adapter.render(kit.replace_event(kit.sample_events()["triggered"], monitor_name="m" * 100))
    assert message.payload == {"title": "m" * 11 + "…", "other": "m" * 100}
