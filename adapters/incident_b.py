"""`incident_b`: Incident paging B (Opsgenie-style alerts API): create with `alias`, close by alias."""

from __future__ import annotations

from urllib.parse import quote

from adapters.contract import DeliveryResult, Event, Message
from adapters.incident import IncidentAdapter, IncidentConfig


class IncidentBConfig(IncidentConfig):
    pass


class IncidentB(IncidentAdapter[IncidentBConfig]):
    type = "incident_b"
    Config = IncidentBConfig
    description = "Incident paging B (Opsgenie-style alerts API)"
    text_limits = {"message": 130, "alias": 512, "description": 15000, "entity": 512}

    def render(self, event: Event) -> Message:
        context = self.template_context(event)
        if event.kind == "resolved":
            payload = self.templates.json("close.json.j2", **context)
            return Message(payload=payload, action="close", meta={"alias": context["incident_key"]})
        create = self.template_name(event, "create.json.j2", "group_create.json.j2")
        return Message(payload=self.templates.json(create, **context), action="create")

    async def send(self, message: Message) -> DeliveryResult:
        base = self.context.settings.incident_b_url
        headers = {"Authorization": f"GenieKey {self.config.integration_key}"}
        if message.action == "close":
            alias = quote(message.meta["alias"], safe="")
            return await self.context.http.post_json(
                f"{base}/v2/alerts/{alias}/close",
                message.payload,
                headers=headers,
                params={"identifierType": "alias"},
                secrets=self.secret_values(),
            )
        return await self.context.http.post_json(
            f"{base}/v2/alerts", message.payload, headers=headers, secrets=self.secret_values()
        )
