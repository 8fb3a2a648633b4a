"""`incident_a`: Incident paging A (PagerDuty-style Events API v2)."""

from __future__ import annotations

from adapters.incident import IncidentAdapter, IncidentConfig


class IncidentAConfig(IncidentConfig):
    pass


class IncidentA(IncidentAdapter[IncidentAConfig]):
    type = "incident_a"
    Config = IncidentAConfig
    description = "Incident paging A (PagerDuty-style Events API v2)"
