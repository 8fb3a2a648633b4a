"""/api/v2's translation of Beacon's alerts into Alertmanager's shapes."""

from __future__ import annotations

from app.amapi.translate import gettable_alert
from app.routing.schemas import AlertOut, AlertSource


def test_an_alert_not_ended_shows_gos_zero_time_as_the_webhook_body_writes_it():
    out = AlertOut(
        fingerprint="0123456789abcdef",
        labels={"alertname": "Down"},
        annotations={},
        state="firing",
        starts_at="2026-01-01T00:00:00.000Z",
        ends_at=None,
        updated_at="2026-01-01T00:00:00.000Z",
        source=AlertSource(type="monitor", monitor_id="mon_1"),
        silenced_by=[],
        inhibited_by=[],
        muted_by=[],
        generator_url=None,
    )
    # One spelling of "not ended" on both sides (tests/adapters/golden/webhook_alertmanager_group_firing.json).
    assert gettable_alert(out, []).ends_at == "0001-01-01T00:00:00Z"
