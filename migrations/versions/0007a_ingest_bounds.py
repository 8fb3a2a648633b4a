"""The UTC days between which a dataset's events lie, kept by ingest, so that a query reads only those days.

A query without `start_time` used to plan and probe every partition before now, so one dataset with events
spread over 2,000 days slowed the queries of every other dataset to over a second. `first_day` and
`last_day` are the days of the earliest and latest event ever stored in the dataset (NULL while it has none):
ingest widens them in the transaction that stores the events, and retention leaves them as they are, so every
stored event lies between them. A query clamps its range to them (app/query/service.py).

Revision ID: 0007a_ingest_bounds
Revises: 0007b_access
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007a_ingest_bounds"
down_revision: str | None = "0007b_access"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE datasets ADD COLUMN first_day date, ADD COLUMN last_day date")
    # Events stored before this revision: two index probes per partition and dataset.
    op.execute(
        """
        UPDATE datasets d SET first_day = b.lo, last_day = b.hi
        FROM (
            SELECT d2.id,
                   ((SELECT min(time) FROM events WHERE dataset_id = d2.id) AT TIME ZONE 'UTC')::date AS lo,
                   ((SELECT max(time) FROM events WHERE dataset_id = d2.id) AT TIME ZONE 'UTC')::date AS hi
            FROM datasets d2
        ) b
        WHERE b.id = d.id AND b.lo IS NOT NULL
        """
    )


def downgrade() -> None:
    op.execute("ALTER TABLE datasets DROP COLUMN first_day, DROP COLUMN last_day")
