"""Annotations and notifiers.

Revision ID: 0003_annotations_notifiers
Revises: 0002_events
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003_annotations_notifiers"
down_revision: str | None = "0002_events"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE annotations (
            id           text PRIMARY KEY,
            type         text NOT NULL,
            title        text NOT NULL,
            description  text,
            datasets     text[] NOT NULL CHECK (cardinality(datasets) > 0),
            time         timestamptz NOT NULL,
            end_time     timestamptz CHECK (end_time IS NULL OR end_time >= time),
            url          text,
            created_at   timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    # The list is newest first by time (keyset on (time, id)); the dataset filter uses the array overlap `&&`.
    op.execute("CREATE INDEX annotations_time_id ON annotations (time DESC, id DESC)")
    op.execute("CREATE INDEX annotations_datasets ON annotations USING gin (datasets)")
    op.execute(
        """
        CREATE TABLE notifiers (
            id              text PRIMARY KEY,
            name            text NOT NULL,
            type            text NOT NULL,
            target          text NOT NULL,
            config_sealed   bytea NOT NULL,
            disabled_until  timestamptz,
            created_at      timestamptz NOT NULL DEFAULT now(),
            updated_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX notifiers_created_at_id ON notifiers (created_at DESC, id DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE notifiers")
    op.execute("DROP TABLE annotations")
