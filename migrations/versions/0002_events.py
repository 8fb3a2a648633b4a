"""Datasets, their discovered fields, and the range-partitioned events table.

Revision ID: 0002_events
Revises: 0001_tokens
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002_events"
down_revision: str | None = "0001_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE datasets (
            id              serial PRIMARY KEY,
            name            text NOT NULL UNIQUE,
            description     text,
            retention_days  integer CHECK (retention_days IS NULL OR retention_days > 0),
            created_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX datasets_created_at_id ON datasets (created_at DESC, id DESC)")
    op.execute(
        """
        CREATE TABLE dataset_fields (
            dataset_id  integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
            name        text NOT NULL,
            types       text[] NOT NULL,
            first_seen  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (dataset_id, name)
        )
        """
    )
    # One partition per UTC day, created on demand by the ingest path (app/ingest).
    op.execute(
        """
        CREATE TABLE events (
            dataset_id  integer NOT NULL,
            time        timestamptz NOT NULL,
            sys_time    timestamptz NOT NULL,
            data        jsonb NOT NULL
        ) PARTITION BY RANGE (time)
        """
    )
    op.execute("CREATE INDEX events_dataset_time ON events (dataset_id, time)")


def downgrade() -> None:
    op.execute("DROP TABLE events")
    op.execute("DROP TABLE dataset_fields")
    op.execute("DROP TABLE datasets")
