"""Per-minute event counts per dataset (`event_rollups`), written by ingest in its own transaction.

Revision ID: 0014_rollups
Revises: 0010_routing
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014_rollups"
down_revision: str | None = "0010_routing"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # dataset_id leads the key, as it does in every events index: under Citus both tables are distributed by
    # it and co-located (docs/scaling.md). `minute` is the start of the UTC minute the counted events fall in.
    op.execute(
        """
        CREATE TABLE event_rollups (
            dataset_id integer NOT NULL,
            minute timestamptz NOT NULL,
            count bigint NOT NULL CHECK (count > 0),
            PRIMARY KEY (dataset_id, minute)
        )
        """
    )
    # The events stored before this revision, counted once (the rollup must equal the events' answer).
    op.execute(
        """
        INSERT INTO event_rollups (dataset_id, minute, count)
        SELECT dataset_id, date_trunc('minute', time), count(*) FROM events GROUP BY 1, 2
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE event_rollups")
