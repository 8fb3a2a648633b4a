from __future__ import annotations

import pytest

from app.settings import Settings


def test_monitor_settings_from_env():
    s = Settings.from_env(
        {
            "BEACON_MONITOR_TICK_SECONDS": "0.5",
            "BEACON_MONITOR_CONCURRENCY": "8",
            "BEACON_MONITOR_QUERY_TIMEOUT_SECONDS": "3",
            "BEACON_MONITOR_MATCH_SETTLE_SECONDS": "0",
        }
    )
    assert (s.monitor_tick_seconds, s.monitor_concurrency) == (0.5, 8)
    assert (s.monitor_query_timeout_seconds, s.monitor_match_settle_seconds) == (3.0, 0.0)
    defaults = Settings.from_env({})
    assert (defaults.monitor_tick_seconds, defaults.monitor_concurrency) == (1.0, 4)
    with pytest.raises(ValueError, match="BEACON_MONITOR_CONCURRENCY"):
        Settings.from_env({"BEACON_MONITOR_CONCURRENCY": "many"})
