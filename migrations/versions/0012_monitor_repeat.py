"""Monitors: `repeat_interval_seconds`, re-sending an alert that keeps firing to the monitor's own notifiers.

Revision ID: 0012_monitor_repeat
Revises: 0010_routing
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_monitor_repeat"
down_revision: str | None = "0010_routing"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL: an alert is sent once. When each firing series was last sent is kept in `series` (JSONB).
    op.execute("ALTER TABLE monitors ADD COLUMN repeat_interval_seconds integer")
    # A repeat is recorded in the monitor's history like the trigger it repeats.
    op.execute("ALTER TABLE monitor_events DROP CONSTRAINT monitor_events_kind_check")
    op.execute(
        "ALTER TABLE monitor_events ADD CONSTRAINT monitor_events_kind_check"
        " CHECK (kind IN ('triggered', 'resolved', 'no_data', 'error', 'matched', 'repeat'))"
    )


def downgrade() -> None:
    op.execute("DELETE FROM monitor_events WHERE kind = 'repeat'")
    op.execute("ALTER TABLE monitor_events DROP CONSTRAINT monitor_events_kind_check")
    op.execute(
        "ALTER TABLE monitor_events ADD CONSTRAINT monitor_events_kind_check"
        " CHECK (kind IN ('triggered', 'resolved', 'no_data', 'error', 'matched'))"
    )
    op.execute("ALTER TABLE monitors DROP COLUMN repeat_interval_seconds")
