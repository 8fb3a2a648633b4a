"""`incident_a`: Incident paging A (PagerDuty-style Events API v2): trigger and resolve share one `dedup_key`."""

from __future__ import annotations

from adapters.contract import DeliveryResult, Event, Message
from adapters.incident import IncidentAdapter, IncidentConfig


class IncidentAConfig(IncidentConfig):
    pass


class IncidentA(IncidentAdapter[IncidentAConfig]):
    type = "incident_a"
    Config = IncidentAConfig
    description = "Incident paging A (PagerDuty-style Events API v2)"
    text_limits = {"payload.summary": 1024}

    def render(self, event: Event) -> Message:
        trigger = self.template_name(event, "trigger.json.j2", "group_trigger.json.j2")
        name = "resolve.json.j2" if event.kind == "resolved" else trigger
        payload = self.templates.json(name, routing_key=self.config.integration_key, **self.template_context(event))
        return Message(payload=payload, action=str(payload.get("event_action", "trigger")))

    async def send(self, message: Message) -> DeliveryResult:
        url = f"{self.context.settings.incident_a_url}/v2/enqueue"
        return await self.context.http.post_json(url, message.payload, secrets=self.secret_values())
