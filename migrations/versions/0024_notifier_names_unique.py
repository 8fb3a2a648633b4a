"""Notifiers: names are unique (a second notifier of a name in use is a 409), as Alertmanager's receiver names are.

Names were not unique before: every notifier but the oldest of a shared name gets its id appended, `ops (ntf_…)`,
so nothing is lost and each keeps a name that says which it is.

Revision ID: 0024_notifier_names_unique
Revises: 0021_notifier_disabled_reason
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024_notifier_names_unique"
down_revision: str | None = "0021_notifier_disabled_reason"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        UPDATE notifiers AS n SET name = n.name || ' (' || n.id || ')'
        FROM (SELECT id, row_number() OVER (PARTITION BY name ORDER BY created_at, id) AS nth FROM notifiers) AS d
        WHERE d.id = n.id AND d.nth > 1
        """
    )
    op.execute("CREATE UNIQUE INDEX notifiers_name ON notifiers (name)")


def downgrade() -> None:
    op.execute("DROP INDEX notifiers_name")
