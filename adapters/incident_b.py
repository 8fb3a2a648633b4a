"""`incident_b`: Incident paging B (Opsgenie-style alerts API)."""

from __future__ import annotations

from adapters.incident import IncidentAdapter, IncidentConfig


class IncidentBConfig(IncidentConfig):
    pass


class IncidentB(IncidentAdapter[IncidentBConfig]):
    type = "incident_b"
    Config = IncidentBConfig
    description = "Incident paging B (Opsgenie-style alerts API)"
