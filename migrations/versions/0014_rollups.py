"""Per-minute event counts per dataset (`event_rollups`), written by ingest in its own transaction; rate-limit
budgets shared by several processes without Redis (`rate_limit_hits`, `beacon_rate_limit_hit`).

Revision ID: 0014_rollups
Revises: 0010_routing
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014_rollups"
down_revision: str | None = "0012_monitor_repeat"
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
    # The events stored before this revision, counted once (the rollup must equal the events' answer). date_bin
    # from the epoch, not date_trunc, which goes through the session's time zone.
    op.execute(
        """
        INSERT INTO event_rollups (dataset_id, minute, count)
        SELECT dataset_id, date_bin('1 minute', time, TIMESTAMPTZ '1970-01-01 00:00:00+00'), count(*)
        FROM events GROUP BY 1, 2
        """
    )

    # Rate limits kept in PostgreSQL (app/ratelimit.py): hits per key and second, a rolling window of whole
    # seconds. UNLOGGED: budgets are not worth WAL, and a crash forgetting them only forgives a minute.
    op.execute(
        """
        CREATE UNLOGGED TABLE rate_limit_hits (
            key text NOT NULL,
            second bigint NOT NULL,
            hits integer NOT NULL,
            PRIMARY KEY (key, second)
        )
        """
    )
    # One round trip per request, and exact across processes: the key's hits are counted and added under a
    # transaction-level advisory lock on the key, so two processes never both take the last unit of budget.
    op.execute(
        """
        CREATE FUNCTION beacon_rate_limit_hit(p_key text, p_limit integer, p_window integer)
        RETURNS TABLE (allowed boolean, used bigint, oldest bigint)
        LANGUAGE plpgsql AS $$
        DECLARE
            now_s bigint := floor(extract(epoch FROM clock_timestamp()));
            n bigint;
            first_s bigint;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtextextended('beacon-rate-limit:' || p_key, 0));
            DELETE FROM rate_limit_hits WHERE key = p_key AND second <= now_s - p_window;
            IF random() < 0.001 THEN  -- now and then, the keys no longer used (a client address, a revoked token)
                DELETE FROM rate_limit_hits WHERE second <= now_s - 3600;
            END IF;
            SELECT coalesce(sum(h.hits), 0), min(h.second) INTO n, first_s FROM rate_limit_hits h WHERE h.key = p_key;
            IF n >= p_limit THEN
                RETURN QUERY SELECT false, n, first_s;
                RETURN;
            END IF;
            INSERT INTO rate_limit_hits AS h (key, second, hits) VALUES (p_key, now_s, 1)
                ON CONFLICT (key, second) DO UPDATE SET hits = h.hits + 1;
            RETURN QUERY SELECT true, n + 1, coalesce(first_s, now_s);
        END
        $$
        """
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION beacon_rate_limit_hit(text, integer, integer)")
    op.execute("DROP TABLE rate_limit_hits")
    op.execute("DROP TABLE event_rollups")
