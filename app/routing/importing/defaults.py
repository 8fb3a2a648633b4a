"""Alertmanager's own defaults and field lists (its config/notifiers.go and config/config.go), so that a field
set to what Alertmanager would use anyway is not reported as a loss."""

from __future__ import annotations

from typing import Any

# send_resolved when a config does not say (the pipeline's notifier field defaults the same way by type).
SEND_RESOLVED = {
    "webhook": True,
    "incident_a": True,
    "incident_b": True,
    "chat_b": True,
    "chat_c": True,
    "chat_a": False,
    "email": False,
}
RESOLVE_TIMEOUT_MS = 5 * 60_000
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"
OPSGENIE_URL = "https://api.opsgenie.com/"


def _t(name: str) -> str:
    return '{{ template "' + name + '" . }}'


SLACK_MESSAGE = (
    "username", "color", "title", "title_link", "pretext", "text", "fields", "short_fields", "footer", "fallback",
    "callback_id", "icon_emoji", "icon_url", "image_url", "thumb_url", "link_names", "mrkdwn_in", "actions",
    "edit_messages", "message_text",
)  # fmt: skip
SLACK_DEFAULTS: dict[str, Any] = {
    "color": '{{ if eq .Status "firing" }}danger{{ else }}good{{ end }}',
    "username": _t("slack.default.username"),
    "title": _t("slack.default.title"),
    "title_link": _t("slack.default.titlelink"),
    "icon_emoji": _t("slack.default.iconemoji"),
    "icon_url": _t("slack.default.iconurl"),
    "pretext": _t("slack.default.pretext"),
    "text": _t("slack.default.text"),
    "fallback": _t("slack.default.fallback"),
    "callback_id": _t("slack.default.callbackid"),
    "footer": _t("slack.default.footer"),
    "short_fields": False,
    "link_names": False,
    "edit_messages": False,
}
DISCORD_MESSAGE = ("title", "message", "content", "username", "avatar_url")
DISCORD_DEFAULTS = {"title": _t("discord.default.title"), "message": _t("discord.default.message")}
MSTEAMS_MESSAGE = ("title", "summary", "text")
MSTEAMS_DEFAULTS = {
    "title": _t("msteams.default.title"),
    "summary": _t("msteams.default.summary"),
    "text": _t("msteams.default.text"),
}
MSTEAMSV2_MESSAGE = ("title", "text")
MSTEAMSV2_DEFAULTS = {"title": _t("msteamsv2.default.title"), "text": _t("msteamsv2.default.text")}
PAGERDUTY_MESSAGE = (
    "client", "client_url", "description", "details", "images", "links", "source", "severity", "class",
    "component", "group",
)  # fmt: skip
PAGERDUTY_DEFAULTS: dict[str, Any] = {
    "description": '{{ template "pagerduty.default.description" .}}',
    "client": _t("pagerduty.default.client"),
    "client_url": _t("pagerduty.default.clientURL"),
    "details": {
        "firing": '{{ template "pagerduty.default.instances" .Alerts.Firing }}',
        "resolved": '{{ template "pagerduty.default.instances" .Alerts.Resolved }}',
        "num_firing": "{{ .Alerts.Firing | len }}",
        "num_resolved": "{{ .Alerts.Resolved | len }}",
    },
}
OPSGENIE_MESSAGE = (
    "message", "description", "source", "details", "entity", "responders", "actions", "tags", "note", "priority",
    "update_alerts",
)  # fmt: skip
OPSGENIE_DEFAULTS: dict[str, Any] = {
    "message": _t("opsgenie.default.message"),
    "description": _t("opsgenie.default.description"),
    "source": _t("opsgenie.default.source"),
    "update_alerts": False,
}
# An e-mail config's relay settings, each with the `global` field it falls back to.
EMAIL_RELAY = {
    "from": "smtp_from",
    "hello": "smtp_hello",
    "smarthost": "smtp_smarthost",
    "auth_username": "smtp_auth_username",
    "auth_password": "smtp_auth_password",
    "auth_password_file": "smtp_auth_password_file",
    "auth_secret": "smtp_auth_secret",
    "auth_identity": "smtp_auth_identity",
    "require_tls": "smtp_require_tls",
    "tls_config": "",
}
EMAIL_MESSAGE = ("html", "text", "headers")
EMAIL_DEFAULTS = {"html": _t("email.default.html"), "text": ""}

# `global:` fields: those of the kinds Beacon imports are read where a receiver uses them; those of kinds it does
# not import matter only to those receivers, which are reported themselves.
GLOBAL_FIELDS = frozenset(
    {
        "resolve_timeout", "http_config", "smtp_from", "smtp_hello", "smtp_smarthost", "smtp_auth_username",
        "smtp_auth_password", "smtp_auth_password_file", "smtp_auth_secret", "smtp_auth_identity",
        "smtp_require_tls", "slack_api_url", "slack_api_url_file", "pagerduty_url", "opsgenie_api_url",
        "opsgenie_api_key", "opsgenie_api_key_file", "wechat_api_url", "wechat_api_secret", "wechat_api_corp_id",
        "victorops_api_url", "victorops_api_key", "victorops_api_key_file", "telegram_api_url", "webex_api_url",
        "rocketchat_api_url", "rocketchat_token", "rocketchat_token_file", "rocketchat_token_id",
        "rocketchat_token_id_file", "jira_api_url",
    }
)  # fmt: skip
