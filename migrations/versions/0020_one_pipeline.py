"""One notification pipeline (issue 26): a monitor's own notifiers become an implicit route whose groups are
flushed by the same stages as the tree's.

- `alert_groups.monitor_id`: the group is a monitor's own route (one alert per group, no group_wait, repeats
  driven by the monitor's `repeat_interval_seconds`, NULL `repeat_interval_seconds`: never).
- `alerts.monitor_event_id`: the monitor event a monitor's alert last changed with (its messages are rendered
  from it, in their one-alert shape), and a message's deliveries are added to that event's history.
- `deliveries.monitor_ids`: the monitors whose alerts a group notification lists (a routed monitor's page lists
  the messages its team got).
- `notifiers.send_resolved`: whether resolved alerts are sent; existing notifiers get their type's default
  (Alertmanager's: off for Slack-like `chat_a` and `email`, on for the others; a plugin type is taken as on).
- `alerts.routing_pending` now marks every change (resolves too) for the router, and `notified`, the direct
  path's own memory of what it sent, is gone: the notification log is the only record.

Revision ID: 0020_one_pipeline
Revises: 0015_alert_pending_since
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0020_one_pipeline"
down_revision: str | None = "0015_alert_pending_since"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE alert_groups ADD COLUMN monitor_id text")
    op.execute("ALTER TABLE alert_groups ALTER COLUMN repeat_interval_seconds DROP NOT NULL")
    op.execute("ALTER TABLE alerts ADD COLUMN monitor_event_id text")
    op.execute("ALTER TABLE alerts DROP COLUMN notified")
    op.execute("ALTER TABLE deliveries ADD COLUMN monitor_ids text[]")
    op.execute(
        "CREATE INDEX deliveries_monitor_ids ON deliveries USING gin (monitor_ids) WHERE monitor_ids IS NOT NULL"
    )
    op.execute("ALTER TABLE notifiers ADD COLUMN send_resolved boolean")
    op.execute("UPDATE notifiers SET send_resolved = type NOT IN ('chat_a', 'email')")
    op.execute("ALTER TABLE notifiers ALTER COLUMN send_resolved SET NOT NULL")


def downgrade() -> None:
    op.execute("ALTER TABLE notifiers DROP COLUMN send_resolved")
    op.execute("DROP INDEX deliveries_monitor_ids")
    op.execute("ALTER TABLE deliveries DROP COLUMN monitor_ids")
    op.execute("ALTER TABLE alerts ADD COLUMN notified boolean NOT NULL DEFAULT true")
    op.execute("ALTER TABLE alerts DROP COLUMN monitor_event_id")
    op.execute("DELETE FROM alert_groups WHERE monitor_id IS NOT NULL")
    op.execute("ALTER TABLE alert_groups ALTER COLUMN repeat_interval_seconds SET NOT NULL")
    op.execute("ALTER TABLE alert_groups DROP COLUMN monitor_id")
