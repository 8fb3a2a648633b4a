"""Routing: monitor labels, alerts, the routing document, alert groups and their notification log, silences.

Revision ID: 0010_routing
Revises: 0007a_ingest_bounds
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010_routing"
down_revision: str | None = "0007a_ingest_bounds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_DOCUMENT = (
    '{"route": {"notifier_ids": [], "group_by": ["alertname"], "group_wait_seconds": 30,'
    ' "group_interval_seconds": 300, "repeat_interval_seconds": 14400, "routes": []},'
    ' "inhibit_rules": [], "time_intervals": []}'
)


def upgrade() -> None:
    op.execute("ALTER TABLE monitors ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'")
    # A grouped notification is a delivery like any other; these say which group it reports and why it was sent.
    op.execute(
        """
        ALTER TABLE deliveries
            ADD COLUMN alert_group_key text,
            ADD COLUMN alert_group_reason text
                CHECK (alert_group_reason IN ('first', 'new_alerts', 'resolved', 'repeat'))
        """
    )
    # One alert per label set. `ends_at` null: firing until something resolves it (a monitor's alert);
    # `timeout`: ends_at was set by the resolve timeout (an external alert posted without one).
    # `direct`: a monitor that names its notifiers sends this alert itself (no tree, no groups);
    # `notified`: whether its last firing was sent (a resolve is sent only then). `routing_pending`: a firing
    # alert the routing job has yet to place in its groups (an outbox: the writer never touches groups).
    op.execute(
        """
        CREATE TABLE alerts (
            fingerprint    text PRIMARY KEY,
            labels         jsonb NOT NULL,
            annotations    jsonb NOT NULL DEFAULT '{}',
            source         text NOT NULL CHECK (source IN ('monitor', 'external')),
            monitor_id     text,
            dataset        text,
            starts_at      timestamptz NOT NULL,
            ends_at        timestamptz,
            timeout        boolean NOT NULL DEFAULT false,
            generator_url  text,
            direct         boolean NOT NULL DEFAULT false,
            notified       boolean NOT NULL DEFAULT true,
            routing_pending  boolean NOT NULL DEFAULT false,
            created_at     timestamptz NOT NULL DEFAULT now(),
            updated_at     timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX alerts_starts_at_fp ON alerts (starts_at DESC, fingerprint DESC)")
    op.execute("CREATE INDEX alerts_monitor ON alerts (monitor_id) WHERE monitor_id IS NOT NULL")
    op.execute("CREATE INDEX alerts_ends_at ON alerts (ends_at)")
    op.execute("CREATE INDEX alerts_routing_pending ON alerts (updated_at) WHERE routing_pending")
    # The routing document: one row, versioned (PUT needs If-Match with the version).
    op.execute(
        """
        CREATE TABLE routing_config (
            id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
            version     bigint NOT NULL,
            document    jsonb NOT NULL,
            updated_at  timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(f"INSERT INTO routing_config (id, version, document) VALUES (1, 1, '{DEFAULT_DOCUMENT}')")
    # The notifiers the document names: a notifier in use cannot be deleted (RESTRICT), even by a race.
    op.execute(
        """
        CREATE TABLE routing_notifiers (
            notifier_id  text PRIMARY KEY REFERENCES notifiers (id) ON DELETE RESTRICT
        )
        """
    )
    # A group: one route and one set of group_by values. The route's settings are kept with it (used when the
    # route has since left the document). `next_flush_at` is when a process should look at it next.
    op.execute(
        """
        CREATE TABLE alert_groups (
            key                      text PRIMARY KEY,
            route_key                text NOT NULL,
            route_path               text NOT NULL,
            labels                   jsonb NOT NULL,
            notifier_ids             text[] NOT NULL,
            group_wait_seconds       integer NOT NULL,
            group_interval_seconds   integer NOT NULL,
            repeat_interval_seconds  integer NOT NULL,
            mute_time_intervals      text[] NOT NULL DEFAULT '{}',
            active_time_intervals    text[] NOT NULL DEFAULT '{}',
            created_at               timestamptz NOT NULL,
            flushed_at               timestamptz,
            next_flush_at            timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX alert_groups_due ON alert_groups (next_flush_at)")
    op.execute(
        """
        CREATE TABLE alert_group_members (
            group_key    text NOT NULL,
            fingerprint  text NOT NULL,
            added_at     timestamptz NOT NULL,
            PRIMARY KEY (group_key, fingerprint)
        )
        """
    )
    op.execute("CREATE INDEX alert_group_members_fp ON alert_group_members (fingerprint)")
    # What each (group, notifier) was last told: the alerts it heard of as firing and as resolved.
    op.execute(
        """
        CREATE TABLE alert_notification_log (
            group_key    text NOT NULL,
            notifier_id  text NOT NULL,
            firing       text[] NOT NULL,
            resolved     text[] NOT NULL,
            sent_at      timestamptz NOT NULL,
            PRIMARY KEY (group_key, notifier_id)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE silences (
            id          text PRIMARY KEY,
            matchers    text[] NOT NULL CHECK (cardinality(matchers) > 0),
            starts_at   timestamptz NOT NULL,
            ends_at     timestamptz NOT NULL CHECK (ends_at >= starts_at),
            comment     text NOT NULL,
            created_by  text NOT NULL,
            created_at  timestamptz NOT NULL,
            updated_at  timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX silences_ends_at ON silences (ends_at)")
    op.execute("CREATE INDEX silences_created_at_id ON silences (created_at DESC, id DESC)")


def downgrade() -> None:
    for table in (
        "silences",
        "alert_notification_log",
        "alert_group_members",
        "alert_groups",
        "routing_notifiers",
        "routing_config",
        "alerts",
    ):
        op.execute(f"DROP TABLE {table}")
    op.execute("ALTER TABLE deliveries DROP COLUMN alert_group_reason, DROP COLUMN alert_group_key")
    op.execute("ALTER TABLE monitors DROP COLUMN labels")
