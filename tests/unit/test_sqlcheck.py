"""The Citus statement check (tests/sqlcheck.py) on statements Beacon sent before issue 32 and on what replaced
them: each rule catches what would not route or not run on Citus, and lets the routed form through."""

from __future__ import annotations

import pytest

from tests.sqlcheck import check


def rules(sql: str) -> list[str]:
    return sorted({f.rule for f in check(sql)})


@pytest.mark.parametrize(
    "sql",
    [
        # the query statement finding its dataset by name (an InitPlan: every shard)
        "SELECT data FROM events WHERE dataset_id = (SELECT id FROM datasets WHERE name = $1::text) AND time < $2",
        # the min/max lookup beside it, correlated with the reference table
        "SELECT d.id, (SELECT min(e.time) FROM events e WHERE e.dataset_id = d.id AND e.time < $2) "
        "FROM datasets d WHERE d.name = $1",
        # a rollup branch by name inside a UNION, the other branch routed
        "SELECT b, sum(n) FROM (SELECT minute AS b, count AS n FROM event_rollups WHERE dataset_id = $1::integer "
        "UNION ALL SELECT time AS b, count(*) AS n FROM events WHERE dataset_id = (SELECT id FROM datasets "
        "WHERE name = $2) GROUP BY 1) AS r GROUP BY b",
        # monitor batching across datasets: the id comes from a row of unnest
        "SELECT b.i, q.* FROM unnest($1::integer[], $2::integer[]) AS b(i, a1) CROSS JOIN LATERAL "
        "(SELECT count(*) FROM events WHERE dataset_id = b.a1::integer AND time >= $3) AS q",
        # retention's skip scan of a partition
        'WITH RECURSIVE d AS ((SELECT dataset_id FROM "events_20250101" ORDER BY dataset_id LIMIT 1) UNION ALL '
        'SELECT (SELECT dataset_id FROM "events_20250101" WHERE dataset_id > d.dataset_id ORDER BY dataset_id '
        "LIMIT 1) FROM d WHERE d.dataset_id IS NOT NULL) SELECT dataset_id FROM d WHERE dataset_id IS NOT NULL",
        "DELETE FROM event_rollups WHERE minute >= $1 AND minute < $2",
        # an INSERT whose id is not a parameter
        "INSERT INTO event_rollups (dataset_id, minute, count) SELECT d.id, $2, 1 FROM datasets d WHERE d.name = $1",
        "INSERT INTO event_rollups VALUES ((SELECT id FROM datasets WHERE name = $1), now(), 3)",
    ],
)
def test_statements_over_distributed_tables_need_the_dataset_id_as_a_parameter(sql: str) -> None:
    assert "dataset_param" in rules(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT data FROM events WHERE dataset_id = $1::integer AND time >= $2::timestamptz AND time < $3",
        "SELECT min(e.time), max(e.time) FROM events e WHERE e.dataset_id = $1 AND e.time < $2",
        "SELECT b, sum(n) FROM (SELECT minute AS b, count AS n FROM event_rollups WHERE dataset_id = $1::integer "
        "UNION ALL SELECT time AS b, count(*) AS n FROM events WHERE dataset_id = $1::integer GROUP BY 1) AS r",
        "SELECT b.i, q.* FROM unnest($1::integer[], $2::jsonb[]) AS b(i, a4) CROSS JOIN LATERAL "
        "(SELECT count(*) FROM events WHERE dataset_id = $3::integer AND data @> b.a4::jsonb) AS q",
        'DELETE FROM "events_20250101" WHERE dataset_id = $1 AND time < $2',
        "INSERT INTO event_rollups AS r (dataset_id, minute, count) SELECT $1::integer, to_timestamp(u.m * 60), u.n "
        "FROM unnest($2::bigint[], $3::bigint[]) AS u(m, n) ORDER BY u.m "
        "ON CONFLICT (dataset_id, minute) DO UPDATE SET count = r.count + EXCLUDED.count",
        "INSERT INTO dataset_fields (dataset_id, name, types) VALUES ($1::INTEGER, $2::VARCHAR, $3)",
        "INSERT INTO event_rollups VALUES ($1, now(), 3)",
        "SELECT count(*) FROM dataset_fields WHERE dataset_fields.dataset_id = $1::INTEGER",
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM events WHERE dataset_id = $1",
        "SELECT id FROM datasets WHERE name = $1",
        "COPY events (dataset_id, time, sys_time, data) FROM STDIN (FORMAT binary)",
        'CREATE TABLE IF NOT EXISTS "events_20250101" (LIKE events INCLUDING DEFAULTS)',
    ],
)
def test_routed_statements_pass(sql: str) -> None:
    assert rules(sql) == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM datasets WHERE name = $1 FOR KEY SHARE",
        "SELECT 1 FROM datasets WHERE id = $1 FOR UPDATE",
        "SELECT datasets.id FROM datasets WHERE datasets.name = $1::VARCHAR FOR NO KEY UPDATE",
        "SELECT monitors.id, (SELECT datasets.id FROM datasets WHERE datasets.name = monitors.dataset) AS anon_1 "
        "FROM monitors WHERE monitors.next_evaluation_at <= $1 ORDER BY monitors.next_evaluation_at "
        "LIMIT $2 FOR UPDATE OF monitors SKIP LOCKED",
        "SELECT tokens.id FROM tokens WHERE tokens.id = $1::VARCHAR FOR SHARE",
        "SELECT version FROM routing_config WHERE id = 1 FOR UPDATE",
    ],
)
def test_row_locks_on_reference_tables_are_found(sql: str) -> None:
    assert "reference_lock" in rules(sql)


@pytest.mark.parametrize(
    "sql",
    [
        # the lock is on the local table only
        "WITH picked AS (SELECT d.id FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM notifiers n WHERE "
        "n.id = d.notifier_id) ORDER BY d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED) "
        "UPDATE deliveries d SET claim_token = $4 FROM picked WHERE d.id = picked.id RETURNING d.id",
        "SELECT * FROM alert_groups WHERE next_flush_at <= $1 ORDER BY next_flush_at LIMIT $2 FOR UPDATE SKIP LOCKED",
        "SELECT pg_advisory_xact_lock_shared($1, $2)",
    ],
)
def test_row_locks_elsewhere_pass(sql: str) -> None:
    assert rules(sql) == []


def test_joins_of_distributed_and_other_tables() -> None:
    joined_by_name = (
        "SELECT f.name FROM dataset_fields f JOIN datasets d ON d.id = f.dataset_id WHERE d.name = $1 ORDER BY f.name"
    )
    # joined on the distribution column: only the missing id parameter is wrong
    assert rules(joined_by_name) == ["dataset_param"]
    by_other_column = "SELECT e.time FROM events e JOIN datasets d ON d.name = e.data->>'name' WHERE e.dataset_id = $1"
    assert rules(by_other_column) == ["distributed_join"]
    with_local = "SELECT 1 FROM events e JOIN annotations a ON a.time = e.time WHERE e.dataset_id = $1"
    assert rules(with_local) == ["distributed_join"]


def test_plain_tables_and_citus_tables_apart() -> None:
    assert rules("SELECT next_at FROM delivery_pacing WHERE key = $1") == []
    assert rules("SELECT p.next_at FROM delivery_pacing p JOIN notifiers n ON n.id = p.key") == ["local_with_citus"]
    assert rules("UPDATE monitors m SET name = a.labels->>'x' FROM alerts a WHERE a.monitor_id = m.id") == [
        "local_with_citus"
    ]


def test_on_conflict_parameters_on_citus_local_tables() -> None:
    with_param = (
        "INSERT INTO alerts AS a (fingerprint, ends_at) SELECT fp, en FROM unnest($1::text[], $2::timestamptz[]) "
        "AS i(fp, en) ON CONFLICT (fingerprint) DO UPDATE SET ends_at = CASE WHEN EXCLUDED.ends_at <= $3 "
        "THEN a.ends_at ELSE EXCLUDED.ends_at END"
    )
    assert rules(with_param) == ["on_conflict_param"]
    assert rules(with_param.replace("<= $3", "<= EXCLUDED.updated_at")) == []
    # not an INSERT ... SELECT, nor a Citus-managed table: left alone
    assert rules("INSERT INTO alerts (fingerprint) VALUES ($1) ON CONFLICT (fingerprint) DO UPDATE SET x = $2") == []
    assert (
        rules(
            "INSERT INTO delivery_pacing (key, next_at) VALUES ($1, now()) ON CONFLICT (key) DO UPDATE SET next_at = $2"
        )
        == []
    )


def test_several_statements_in_one_string_and_literals() -> None:
    sql = "RELEASE SAVEPOINT s; SET LOCAL statement_timeout = 5; SELECT 1 FROM events WHERE dataset_id = 3"
    assert rules(sql) == ["dataset_param"]
    # a literal or a comment naming a table is not a table
    assert rules("SELECT 'FROM events' -- FROM events\n FROM tokens") == []
