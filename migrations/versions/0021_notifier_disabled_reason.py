"""Notifiers: `disabled_reason`, why Beacon itself disabled a notifier (a webhook answered 410 Gone). Set with
`disabled_until` far in the future; a person clears both by setting `disabled_until` (PATCH).

Revision ID: 0021_notifier_disabled_reason
Revises: 0020_one_pipeline
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021_notifier_disabled_reason"
down_revision: str | None = "0020_one_pipeline"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE notifiers ADD COLUMN disabled_reason text")


def downgrade() -> None:
    op.execute("ALTER TABLE notifiers DROP COLUMN disabled_reason")
