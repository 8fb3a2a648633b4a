"""Beacon on Citus (docs/scaling.md, step 4): which table becomes what, and the SQL that makes it so.

The one source of truth for the table classes: `beacon migrate --distributed` applies `plan_sql`, `--print` shows
it, and the statement check of the test suite (tests/sqlcheck.py) judges every statement Beacon sends by the same
`TABLES`. Every table of the schema has a choice and a reason (tests/integration/citus/test_plan.py checks that
none is left out), so a new table cannot slip through unclassified.

Kinds:
- distributed: sharded by `dataset_id`, co-located with `events`. Every statement over one carries the dataset id
  as a parameter (`dataset_id = $n`), so Citus routes it to one shard.
- reference: copied to every node. A write is a distributed transaction over all nodes, and Citus turns a row
  lock (FOR UPDATE / FOR SHARE ...) on one into a lock on the whole table on every node until commit, so Beacon
  takes none: advisory locks stand in for them (app/db/advisory.py).
- citus_local: stays on the coordinator, in Citus's metadata (`citus_add_local_table_to_metadata`), so that a
  statement can join it with a reference table there and a foreign key can point at one; row locks and
  `SKIP LOCKED` work on it as on plain PostgreSQL.
- local: a plain table on the coordinator that Citus does not know. No statement may name it together with a
  Citus table.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["distributed", "reference", "citus_local", "local"]

DISTRIBUTION_COLUMN = "dataset_id"
COLOCATED_WITH = "events"
# The daily partitions of `events` (app/ingest/partitions.py): Citus distributes each as it is attached.
PARTITION_NAME = re.compile(r"^events_\d{8}$")


@dataclass(frozen=True)
class Choice:
    table: str
    kind: Kind
    why: str


# In the order the plan applies them: a referenced table before the tables whose foreign keys point at it.
TABLES: tuple[Choice, ...] = (
    Choice(
        "datasets",
        "reference",
        "A few rows per dataset. The foreign key of `dataset_fields` (distributed) must point at a reference table. "
        "Statements resolve a dataset's name to its id here first and then name the id.",
    ),
    Choice("tokens", "reference", "Small; read by every request's token check. Revocation writes are rare."),
    Choice("notifiers", "reference", "Small configuration; the delivery claim joins it (deliveries is local)."),
    Choice("monitors", "reference", "Small configuration; claimed with advisory try-locks, not SKIP LOCKED."),
    Choice("monitor_notifiers", "reference", "Routes of monitors: references monitors and notifiers."),
    Choice("routing_config", "reference", "One row: the routing document."),
    Choice("routing_notifiers", "reference", "The notifiers the routing document names; references notifiers."),
    Choice("silences", "reference", "Small; read by every routing pass and the alert views."),
    Choice(
        "events",
        "distributed",
        "The event store, range-partitioned by day; every statement names one dataset by its id.",
    ),
    Choice("event_rollups", "distributed", "Per-minute counts, keyed (dataset_id, minute); co-located with events."),
    Choice("dataset_fields", "distributed", "Fields seen, keyed (dataset_id, name); co-located with events."),
    Choice(
        "deliveries",
        "citus_local",
        "A queue: written on every claim and attempt. Its claim (UPDATE ... FOR UPDATE OF d SKIP LOCKED) joins "
        "`notifiers`, which needs it in Citus's metadata: as a plain table the claim was sent to a worker where "
        "`deliveries` does not exist; as a Citus-managed local table it runs on the coordinator, SKIP LOCKED "
        "included (the run on Citus 13 of issue 32).",
    ),
    Choice("delivery_attempts", "citus_local", "The attempts of deliveries: its foreign key points at deliveries."),
    Choice(
        "monitor_events",
        "citus_local",
        "A log written by every evaluation that changes state; its foreign key points at monitors (reference), "
        "which a local table may only do from Citus's metadata. The routing flush joins it with alerts.",
    ),
    Choice(
        "alerts",
        "citus_local",
        "Written by every monitor change and POST /v1/alerts, claimed with SKIP LOCKED by the router. The flush "
        "joins it with monitor_events (Citus-managed), so it is one too. Citus fails an INSERT ... SELECT ... "
        "ON CONFLICT DO UPDATE on such a table when the DO UPDATE holds a parameter (seen in issue 32): the "
        "upsert of app/routing/store.py takes its values from EXCLUDED only, and the statement check enforces it.",
    ),
    Choice("alert_groups", "citus_local", "The router's groups, claimed FOR UPDATE SKIP LOCKED; joined with alerts."),
    Choice("alert_group_members", "citus_local", "Which alert is in which group; joined with alerts."),
    Choice("alert_notification_log", "citus_local", "What each group last told each notifier; flush writes it."),
    Choice(
        "annotations",
        "citus_local",
        "Written by every monitor change and deploy marker, read by the console and the API, never joined with "
        "events. Its foreign key points at silences (reference), allowed from a Citus-managed local table; its "
        "row locks (marker edits, rollouts) stay row locks on the coordinator.",
    ),
    Choice(
        "console_sessions",
        "citus_local",
        "Console sign-ins: the session check joins tokens (reference) and its foreign key points at it.",
    ),
    Choice(
        "delivery_pacing",
        "local",
        "One row per destination's pacing slot; no statement names it with another table, and its upsert holds "
        "a parameter.",
    ),
    Choice(
        "rate_limit_hits",
        "local",
        "UNLOGGED, touched only by beacon_rate_limit_hit() under an advisory lock on the coordinator.",
    ),
    Choice("alembic_version", "local", "Alembic's bookkeeping."),
)


def kind_of(table: str) -> Kind | None:
    """The plan's kind for a table name (a daily partition of events is distributed with it); None if unknown."""
    if PARTITION_NAME.match(table):
        return "distributed"
    for choice in TABLES:
        if choice.table == table:
            return choice.kind
    return None


def tables(kind: Kind) -> tuple[str, ...]:
    return tuple(c.table for c in TABLES if c.kind == kind)


@dataclass(frozen=True)
class Node:
    host: str
    port: int = 5432


_HOST = re.compile(r"^[A-Za-z0-9.\-]+$")


def parse_node(text: str) -> Node:
    """`host` or `host:port` (a host name or IPv4 address: it is written into SQL, so nothing else passes)."""
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not _HOST.match(host):
        raise ValueError(f"{text!r} is not a host or host:port")
    if not port:
        return Node(host)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r}: the port must be a number from 1 to 65535")
    return Node(host, int(port))


def _comment(text: str) -> str:
    lines = [wrapped for line in text.splitlines() for wrapped in textwrap.wrap(line, 108) or [""]]
    return "\n".join(f"-- {line}" if line else "--" for line in lines)


def _not_in_metadata(table: str) -> str:
    return f"WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = '{table}'::regclass)"


EXTENSION_CHECK = """DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'the citus extension is not installed in database %', current_database()
            USING HINT = 'On every node, in this database: CREATE EXTENSION citus '
                         '(citus must be in shared_preload_libraries). Citus keeps its nodes per database.';
    END IF;
END $$"""

COORDINATOR_CHECK = """DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_dist_node WHERE groupid = 0) THEN
        RAISE EXCEPTION 'the coordinator is not registered in database %', current_database()
            USING HINT = 'SELECT citus_set_coordinator_host(''<this host>'', <port>) here '
                         '(beacon migrate --distributed --coordinator HOST[:PORT] does it).';
    END IF;
END $$"""

# asyncpg looks up the types it meets in pg_type; with Citus's shards hidden from the catalog views (the default),
# each lookup filtered every relation through Citus's visibility check: 4-11 s per new connection on the cluster
# of issue 32. Beacon's sessions never need to see shards.
DATABASE_SETTINGS = """DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET citus.override_table_visibility = off', current_database());
END $$"""


def plan_statements(coordinator: Node | None = None, workers: Sequence[Node] = ()) -> list[str]:
    """The plan as SQL statements, each led by comments saying why. Every statement can run again: a table
    already in Citus's metadata is skipped, a node already registered is not added twice."""
    out = [
        _comment(
            "Beacon on Citus: run by `beacon migrate --distributed` on the coordinator, in Beacon's database, after\n"
            "the Alembic migrations. Citus keeps its extension and its node list per database: every Beacon\n"
            "database needs CREATE EXTENSION citus on every node and its own node registration.\n"
            "Beacon's processes all connect to the coordinator (advisory locks are per node)."
        )
        + "\n"
        + EXTENSION_CHECK,
    ]
    if coordinator is not None:
        out.append(
            _comment("The coordinator in this database's metadata (Citus-managed local tables need it).")
            + f"\nSELECT citus_set_coordinator_host('{coordinator.host}', {coordinator.port}) "
            "WHERE NOT EXISTS (SELECT 1 FROM pg_dist_node WHERE groupid = 0)"
        )
    for node in workers:
        out.append(
            _comment(f"Worker {node.host}:{node.port} (CREATE EXTENSION citus in this database there first).")
            + f"\nSELECT citus_add_node('{node.host}', {node.port}) WHERE NOT EXISTS "
            f"(SELECT 1 FROM pg_dist_node WHERE nodename = '{node.host}' AND nodeport = {node.port})"
        )
    out.append(
        _comment(
            "Citus-managed local tables need the coordinator in the metadata. Workers: SELECT citus_add_node(...)\n"
            "for each, in this database (without any, shards stay on the coordinator)."
        )
        + "\n"
        + COORDINATOR_CHECK
    )
    out.append(
        _comment(
            "New sessions of this database stop hiding shards from the catalog: asyncpg's type lookups took\n"
            "4-11 s per connection on a coordinator without this."
        )
        + "\n"
        + DATABASE_SETTINGS
    )
    for choice in TABLES:
        why = _comment(f"{choice.table}: {choice.kind}. {choice.why}")
        if choice.kind == "reference":
            out.append(f"{why}\nSELECT create_reference_table('{choice.table}') {_not_in_metadata(choice.table)}")
        elif choice.kind == "distributed":
            colocate = "" if choice.table == COLOCATED_WITH else f", colocate_with => '{COLOCATED_WITH}'"
            out.append(
                f"{why}\nSELECT create_distributed_table('{choice.table}', '{DISTRIBUTION_COLUMN}'{colocate}) "
                f"{_not_in_metadata(choice.table)}"
            )
        elif choice.kind == "citus_local":
            out.append(
                f"{why}\nSELECT citus_add_local_table_to_metadata('{choice.table}') {_not_in_metadata(choice.table)}"
            )
    return out


def plan_sql(coordinator: Node | None = None, workers: Sequence[Node] = ()) -> str:
    """The whole plan as one SQL script (what `--print` shows; psql can run it), ending with the tables it
    leaves as plain PostgreSQL tables and why."""
    left = "\n".join(_comment(f"{c.table}: local, left as it is. {c.why}") for c in TABLES if c.kind == "local")
    return ";\n\n".join(plan_statements(coordinator, workers)) + ";\n\n" + left + "\n"


def unclassified(schema_tables: Iterable[str]) -> list[str]:
    """Tables of the schema the plan says nothing about (daily partitions go with events)."""
    return sorted(t for t in schema_tables if kind_of(t) is None)
