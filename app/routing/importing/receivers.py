"""Alertmanager's receivers as Beacon notifiers: one notifier per integration (each entry of a `*_configs`
list), with `global` defaults applied as Alertmanager applies them.

| Alertmanager            | Beacon                                                   |
|-------------------------|----------------------------------------------------------|
| webhook_configs         | webhook, `format: alertmanager` (its body), `max_alerts` |
| slack_configs           | chat_a (`api_url`, or `global.slack_api_url`)            |
| discord_configs         | chat_b (`webhook_url`)                                   |
| msteams(v2)_configs     | chat_c (`webhook_url`)                                   |
| pagerduty_configs       | incident_a (`routing_key`, or the older `service_key`)   |
| opsgenie_configs        | incident_b (`api_key`, or `global.opsgenie_api_key`)     |
| email_configs           | email (`to`, split at commas)                            |

A notifier is named after its receiver when the receiver has one integration, else `receiver/kind[i]` (as
Alertmanager names integrations in its logs: `team-X-pager/email[0]`). `send_resolved` is kept, with
Alertmanager's default per kind. A secret given in a `*_file` field is read by `beacon routing import` (relative
to the YAML) and sent in the field it stands for; a request that still holds one cannot have it read (the server
reads no files for a request), and that integration is a loss.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import getaddresses
from typing import Any

from app.routing.importing import defaults as am
from app.routing.importing.losses import MESSAGE_TEXT, Fields, Losses
from app.routing.importing.yamltext import bad, flag, items, join, mapping, text

MAX_NAME = 256
MAX_NOTIFIERS = 1_000  # per import: each is checked (its destination resolved) and stored
FILE_SECRET = (
    "the secret is in a file, which this request cannot read (the server reads no files for a request); "
    "`beacon routing import` reads it, relative to the YAML. This integration is not imported"
)
RELAY = (
    "Beacon sends e-mail through its own relay and sender (BEACON_SMTP_*, see docs/operations.md); this setting "
    "of Alertmanager's is not used"
)
SETTINGS_URL = "Beacon sends to the URL of its setting {setting}; this URL is not used"


@dataclass
class DraftNotifier:
    """A notifier the configuration asks for, before it is checked or compared with what exists."""

    name: str
    type: str
    config: dict[str, Any]
    send_resolved: bool
    receiver: str
    source: str  # the integration's path: receivers[2].slack_configs[0]
    fields: dict[str, str] = field(default_factory=dict)  # config key -> its path in the YAML (for errors)


@dataclass
class Globals:
    """`global:` as far as the imported kinds use it; each value is reported (once) where it is used."""

    data: dict[str, Any]

    def get(self, key: str) -> Any:
        value = self.data.get(key)
        return None if value in (None, "") else value

    @staticmethod
    def at(key: str) -> str:
        return join("global", key)


@dataclass
class Receivers:
    notifiers: list[DraftNotifier]
    names: dict[str, list[str]]  # receiver -> the names of its notifiers
    paths: dict[str, str]  # receiver -> where it is in the YAML


Handler = Callable[[Fields, Globals, Losses, DraftNotifier], bool]  # fills the draft; False: not imported


class _InFile:
    """A secret left in a `*_file` field (the loss says so)."""


IN_FILE = _InFile()


def _secret(
    f: Fields, key: str, losses: Losses, *, g: Globals | None = None, global_key: str = ""
) -> str | _InFile | None:
    """A secret field (the CLI puts the content of its `*_file` twin there), else (when given) from `global`."""
    value, in_file = f.take(key), f.take(f"{key}_file")
    if value not in (None, "") and in_file not in (None, ""):
        raise bad(f.path, f"at most one of `{key}` and `{key}_file` may be set.")
    if in_file not in (None, ""):
        losses.add(f.at(f"{key}_file"), FILE_SECRET)
        return IN_FILE
    if value not in (None, ""):
        return text(value, f.at(key))
    if g is not None and global_key:
        if g.get(f"{global_key}_file") is not None:
            losses.add(g.at(f"{global_key}_file"), FILE_SECRET)
            return IN_FILE
        if g.get(global_key) is not None:
            return text(g.get(global_key), g.at(global_key))
    return None


def _webhook(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    url = _secret(f, "url", losses)
    if url is None:
        raise bad(f.path, "`url` is missing.")
    if isinstance(url, _InFile):
        return False
    draft.config = {"url": url, "format": "alertmanager"}
    draft.fields["url"] = f.at("url")
    max_alerts = f.take("max_alerts")
    if max_alerts not in (None, 0):
        if isinstance(max_alerts, bool) or not isinstance(max_alerts, int) or max_alerts < 0:
            raise bad(f.at("max_alerts"), "must be a whole number, 0 or more.")
        draft.config["max_alerts"] = max_alerts
    f.lose(losses, ["timeout"], "Beacon's own HTTP timeout and retries apply to every notifier")
    return True


def _url_kind(key: str, message: tuple[str, ...], message_defaults: dict[str, Any]) -> Handler:
    def handle(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
        url = _secret(f, key, losses)
        f.lose(losses, message, MESSAGE_TEXT, message_defaults)
        if url is None:
            raise bad(f.path, f"`{key}` is missing.")
        if isinstance(url, _InFile):
            return False
        draft.config = {"url": url}
        draft.fields["url"] = f.at(key)
        return True

    return handle


def _slack(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    url = _secret(f, "api_url", losses, g=g, global_key="slack_api_url")
    f.lose(losses, ["channel"], "Beacon posts to the channel the webhook URL belongs to (Slack incoming webhooks)")
    f.lose(losses, am.SLACK_MESSAGE, MESSAGE_TEXT, am.SLACK_DEFAULTS)
    return _place_secret(f, g, draft, url, ("api_url", "slack_api_url"), "url")


def _msteams(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    found = _url_kind("webhook_url", am.MSTEAMS_MESSAGE, am.MSTEAMS_DEFAULTS)(f, g, losses, draft)
    if found:
        losses.add(
            f.at("webhook_url"),
            "Beacon's chat_c posts an Adaptive Card, as Teams Workflows webhooks take it; an Office 365 "
            "connector URL (what msteams_configs was made for) may refuse it: use a Workflows URL",
        )
    return found


def _pagerduty(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    routing_key = _secret(f, "routing_key", losses)
    service_key = _secret(f, "service_key", losses)
    _settings_url(f, g, losses, "url", "pagerduty_url", am.PAGERDUTY_URL, "BEACON_INCIDENT_A_URL")
    f.lose(losses, am.PAGERDUTY_MESSAGE, MESSAGE_TEXT, am.PAGERDUTY_DEFAULTS)
    key, where = (routing_key, "routing_key") if routing_key is not None else (service_key, "service_key")
    if key is None:
        raise bad(f.path, "`routing_key` or `service_key` is missing.")
    if isinstance(key, _InFile):
        return False
    if where == "service_key":
        losses.add(
            f.at("service_key"),
            "Beacon speaks PagerDuty's Events API v2, and sends this Events API v1 service key as its routing key: "
            "the integration must accept Events API v2 (else use its routing_key)",
        )
    draft.config = {"integration_key": key}
    draft.fields["integration_key"] = f.at(where)
    return True


def _opsgenie(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    key = _secret(f, "api_key", losses, g=g, global_key="opsgenie_api_key")
    _settings_url(f, g, losses, "api_url", "opsgenie_api_url", am.OPSGENIE_URL, "BEACON_INCIDENT_B_URL")
    f.lose(losses, am.OPSGENIE_MESSAGE, MESSAGE_TEXT, am.OPSGENIE_DEFAULTS)
    return _place_secret(f, g, draft, key, ("api_key", "opsgenie_api_key"), "integration_key")


def _place_secret(
    f: Fields, g: Globals, draft: DraftNotifier, value: str | _InFile | None, names: tuple[str, str], config_key: str
) -> bool:
    """The secret read from the receiver's field or from `global` (`names`: both keys) as the notifier's
    `config_key`: refused when neither is set; False (nothing to create yet) while it is still in a file."""
    field, global_key = names
    if value is None:
        raise bad(f.path, f"`{field}` is missing, and `global.{global_key}` is not set.")
    if isinstance(value, _InFile):
        return False
    draft.config = {config_key: value}
    draft.fields[config_key] = f.at(field) if f.data.get(field) else g.at(global_key)
    return True


def _settings_url(f: Fields, g: Globals, losses: Losses, key: str, global_key: str, default: str, setting: str) -> None:
    """A destination URL Beacon takes from its settings: a loss unless it is Alertmanager's default."""
    own = f.take(key)
    where, value = (f.at(key), own) if own not in (None, "") else (g.at(global_key), g.get(global_key))
    if value is not None and text(value, where).rstrip("/") != default.rstrip("/"):
        losses.add(where, SETTINGS_URL.format(setting=setting))


def _email(f: Fields, g: Globals, losses: Losses, draft: DraftNotifier) -> bool:
    to = f.take("to")
    if to in (None, ""):
        raise bad(f.path, "`to` is missing.")
    raw = text(to, f.at("to"))
    for key, global_key in am.EMAIL_RELAY.items():
        own = f.take(key)
        if own not in (None, ""):
            if not (key == "require_tls" and own is True):  # Alertmanager's default
                losses.add(f.at(key), RELAY)
        elif global_key and g.get(global_key) not in (None, True):
            losses.add(g.at(global_key), RELAY)
    f.lose(losses, am.EMAIL_MESSAGE, MESSAGE_TEXT, am.EMAIL_DEFAULTS)
    if "{{" in raw:
        losses.add(f.at("to"), "a template chooses the recipients, and Beacon's addresses are fixed; not imported")
        return False
    addresses = []
    for name, address in getaddresses([raw]):
        if name:
            losses.add(f.at("to"), f"the display name {name!r} is dropped (Beacon keeps the address)")
        addresses.append(address)
    draft.config = {"addresses": addresses}
    draft.fields["addresses"] = f.at("to")
    return True


KINDS: dict[str, tuple[str, str, Handler]] = {  # AM list -> (Beacon type, AM integration name, handler)
    "webhook_configs": ("webhook", "webhook", _webhook),
    "slack_configs": ("chat_a", "slack", _slack),
    "discord_configs": ("chat_b", "discord", _url_kind("webhook_url", am.DISCORD_MESSAGE, am.DISCORD_DEFAULTS)),
    "msteams_configs": ("chat_c", "msteams", _msteams),
    "msteamsv2_configs": ("chat_c", "msteamsv2", _url_kind("webhook_url", am.MSTEAMSV2_MESSAGE, am.MSTEAMSV2_DEFAULTS)),
    "pagerduty_configs": ("incident_a", "pagerduty", _pagerduty),
    "opsgenie_configs": ("incident_b", "opsgenie", _opsgenie),
    "email_configs": ("email", "email", _email),
}


def read_receivers(value: Any, g: Globals, losses: Losses) -> Receivers:
    found = Receivers([], {}, {})
    for path, raw in items(value, "receivers"):
        fields = Fields(raw, path)
        name = text(fields.take("name"), join(path, "name")) if fields.data.get("name") is not None else ""
        if not name:
            raise bad(join(path, "name"), "a receiver needs a name.")
        if name in found.names:
            raise bad(join(path, "name"), f"two receivers are named {name!r}.")
        found.names[name], found.paths[name] = [], path
        lists = {k: v for k, v in fields.rest().items() if k.endswith("_configs")}
        count = sum(len(v) for v in lists.values() if isinstance(v, list))
        for key, entries in lists.items():
            fields.take(key)
            kind = KINDS.get(key)
            if kind is None:
                what = key.removesuffix("_configs")
                for at, _ in items(entries, join(path, key)):
                    losses.add(at, f"Beacon has no notifier type for {what}: this integration is not imported")
                continue
            type_, integration, handle = kind
            for i, (at, entry) in enumerate(items(entries, join(path, key))):
                notifier_name = name if count == 1 else f"{name}/{integration}[{i}]"
                if len(notifier_name) > MAX_NAME:
                    raise bad(join(path, "name"), f"a notifier name is at most {MAX_NAME} characters.")
                draft = DraftNotifier(notifier_name, type_, {}, am.SEND_RESOLVED[type_], name, at)
                if _integration(entry, at, g, losses, draft, handle):
                    if len(found.notifiers) >= MAX_NOTIFIERS:
                        raise bad(at, f"an import makes at most {MAX_NOTIFIERS:,} notifiers (one per integration).")
                    found.notifiers.append(draft)
                    found.names[name].append(notifier_name)
        fields.finish(losses)
    return found


def _integration(entry: Any, at: str, g: Globals, losses: Losses, draft: DraftNotifier, handle: Handler) -> bool:
    f = Fields(mapping(entry, at), at)
    send_resolved = f.take("send_resolved")
    if send_resolved is not None:
        draft.send_resolved = flag(send_resolved, f.at("send_resolved"))
    own = f.take("http_config")
    if own is not None:
        losses.http_config(own, f.at("http_config"))
    elif draft.type != "email" and g.get("http_config"):  # Alertmanager gives it to integrations without their own
        losses.http_config(g.get("http_config"), g.at("http_config"))
    imported = handle(f, g, losses, draft)
    f.finish(losses)
    return imported
