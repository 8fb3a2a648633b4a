"""Deliveries (the notification outbox and its log), their attempts, and per-destination pacing.

Revision ID: 0005_deliveries
Revises: 0003_annotations_notifiers
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005_deliveries"
down_revision: str | None = "0003_annotations_notifiers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # notifier_id is not a foreign key: the log outlives a deleted notifier (its pending rows then fail).
    op.execute(
        """
        CREATE TABLE deliveries (
            id                text PRIMARY KEY,
            notifier_id       text NOT NULL,
            monitor_id        text,
            monitor_event_id  text,
            kind              text NOT NULL,
            event             jsonb NOT NULL,
            status            text NOT NULL DEFAULT 'pending'
                              CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed')),
            attempts          integer NOT NULL DEFAULT 0,
            max_attempts      integer NOT NULL DEFAULT 10,
            next_attempt_at   timestamptz,
            last_attempt_at   timestamptz,
            response_status   integer,
            error             text,
            created_at        timestamptz NOT NULL DEFAULT now(),
            updated_at        timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    # The worker's claim: due rows only, oldest due first.
    op.execute("CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying')")
    op.execute("CREATE INDEX deliveries_created_at_id ON deliveries (created_at DESC, id DESC)")
    op.execute("CREATE INDEX deliveries_notifier ON deliveries (notifier_id, created_at DESC, id DESC)")
    op.execute("CREATE INDEX deliveries_monitor ON deliveries (monitor_id, created_at DESC, id DESC)")
    op.execute(
        """
        CREATE TABLE delivery_attempts (
            delivery_id      text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
            attempt          integer NOT NULL,
            started_at       timestamptz NOT NULL,
            duration_ms      integer NOT NULL,
            ok               boolean NOT NULL,
            retryable        boolean NOT NULL,
            response_status  integer,
            error            text,
            PRIMARY KEY (delivery_id, attempt)
        )
        """
    )
    # One row per paced destination (a hash of it, never the URL): when the next message may go.
    op.execute(
        """
        CREATE TABLE delivery_pacing (
            key      text PRIMARY KEY,
            next_at  timestamptz NOT NULL
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE delivery_pacing")
    op.execute("DROP TABLE delivery_attempts")
    op.execute("DROP TABLE deliveries")
