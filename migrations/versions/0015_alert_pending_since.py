"""Alerts: `pending_since`, when an alert began waiting for the routing job, so that a group's group_wait counts
from its first alert's first post, not from a re-send (Prometheus re-sends firing alerts) that came before the job
placed it.

Revision ID: 0015_alert_pending_since
Revises: 0011_delivery_streams
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015_alert_pending_since"
down_revision: str | None = "0011_delivery_streams"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE alerts ADD COLUMN pending_since timestamptz")
    # Waiting now: the best known arrival is the last post.
    op.execute("UPDATE alerts SET pending_since = updated_at WHERE routing_pending")


def downgrade() -> None:
    op.execute("ALTER TABLE alerts DROP COLUMN pending_since")
