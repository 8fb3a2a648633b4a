"""Monitors, the notifiers they route to, and their history (monitor events).

Revision ID: 0006_monitors
Revises: 0005_deliveries
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006_monitors"
down_revision: str | None = "0005_deliveries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # `series` holds the per-group state (alerting or not, the last N results for M-of-N): one JSON document
    # on the monitor row, so that an evaluation reads and writes a single row. `match_cursor` is the
    # `_sysTime` up to which a match_event monitor has reported events.
    op.execute(
        """
        CREATE TABLE monitors (
            id                  text PRIMARY KEY,
            name                text NOT NULL,
            description         text,
            type                text NOT NULL CHECK (type IN ('threshold', 'match_event')),
            apl                 text NOT NULL,
            dataset             text NOT NULL,
            operator            text CHECK (operator IN ('above', 'above_or_equal', 'below', 'below_or_equal')),
            threshold           double precision,
            interval_seconds    integer NOT NULL CHECK (interval_seconds >= 10),
            range_seconds       integer NOT NULL CHECK (range_seconds >= 1),
            delay_seconds       integer NOT NULL DEFAULT 0 CHECK (delay_seconds >= 0),
            alert_on_no_data    boolean NOT NULL DEFAULT false,
            notify_by_group     boolean NOT NULL DEFAULT false,
            resolvable          boolean NOT NULL DEFAULT true,
            trigger_m           integer NOT NULL DEFAULT 1,
            trigger_n           integer NOT NULL DEFAULT 1,
            disabled_until      timestamptz,
            state               text NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'alerting', 'no_data', 'error')),
            series              jsonb NOT NULL DEFAULT '{}',
            last_value          double precision,
            last_error          text,
            last_evaluated_at   timestamptz,
            last_due_at         timestamptz,
            next_evaluation_at  timestamptz NOT NULL,
            match_cursor        timestamptz,
            created_at          timestamptz NOT NULL DEFAULT now(),
            updated_at          timestamptz NOT NULL DEFAULT now(),
            CHECK (1 <= trigger_m AND trigger_m <= trigger_n),
            CHECK ((type = 'threshold') = (operator IS NOT NULL AND threshold IS NOT NULL))
        )
        """
    )
    # The scheduler's claim: the most overdue first.
    op.execute("CREATE INDEX monitors_due ON monitors (next_evaluation_at)")
    op.execute("CREATE INDEX monitors_created_at_id ON monitors (created_at DESC, id DESC)")
    # Routes: deleting a notifier deletes its routes (monitors stop routing to it), deleting a monitor its own.
    op.execute(
        """
        CREATE TABLE monitor_notifiers (
            monitor_id   text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
            notifier_id  text NOT NULL REFERENCES notifiers (id) ON DELETE CASCADE,
            position     integer NOT NULL,
            PRIMARY KEY (monitor_id, notifier_id)
        )
        """
    )
    op.execute("CREATE INDEX monitor_notifiers_notifier ON monitor_notifiers (notifier_id)")
    op.execute(
        """
        CREATE TABLE monitor_events (
            id            text PRIMARY KEY,
            monitor_id    text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
            kind          text NOT NULL CHECK (kind IN ('triggered', 'resolved', 'no_data', 'error', 'matched')),
            state         text NOT NULL,
            value         double precision,
            threshold     double precision,
            group_values  jsonb NOT NULL DEFAULT '{}',
            start_time    timestamptz,
            end_time      timestamptz,
            match_count   integer,
            matches       jsonb NOT NULL DEFAULT '[]',
            error         text,
            delivery_ids  text[] NOT NULL DEFAULT '{}',
            time          timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX monitor_events_monitor_time_id ON monitor_events (monitor_id, time DESC, id DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE monitor_events")
    op.execute("DROP TABLE monitor_notifiers")
    op.execute("DROP TABLE monitors")
