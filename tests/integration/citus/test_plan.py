"""The Citus plan (app/db/citus_plan.py) against the real migrated schema, and `beacon migrate --distributed`.

Citus is not installed here, so what is proved: every table of the schema has a class; every foreign key is one
Citus accepts between those classes, and the plan converts a referenced table before the tables pointing at it;
the printed plan is PostgreSQL that parses (each statement fails only for want of Citus); and without the
extension the command refuses, saying why, and changes nothing, not even the migrations.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from typing import Any

import asyncpg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.citus_plan import TABLES, kind_of, plan_sql, plan_statements, tables, unclassified
from app.settings import asyncpg_dsn
from tests.conftest import _with_database
from tests.servers import BEACON, clean_env

_FOREIGN_KEYS = """
SELECT c.conrelid::regclass::text AS referencing, c.confrelid::regclass::text AS referenced,
       c.confdeltype AS on_delete
FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
"""
_TABLES = """
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
"""


async def _fetch(url: str, sql: str) -> list[Any]:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def test_every_table_of_the_schema_has_a_class(database_url):
    schema = {r[0] for r in await _fetch(database_url, _TABLES)}
    assert unclassified(schema) == []
    assert {c.table for c in TABLES} == schema  # and the plan names no table that is not there
    assert tables("distributed") == ("events", "event_rollups", "dataset_fields")
    assert kind_of("events_20260101") == "distributed"  # a daily partition goes with events
    assert kind_of("annotations") == "citus_local"  # issue 32: it was not classified


# Which foreign keys Citus accepts, by the classes of the referencing and the referenced table (Citus's reference
# on foreign keys; between a reference and a Citus-managed local table only NO ACTION / RESTRICT on delete).
ALLOWED = {
    ("distributed", "distributed"),  # co-located, on the distribution column
    ("distributed", "reference"),
    ("reference", "reference"),
    ("citus_local", "reference"),
    ("citus_local", "citus_local"),
    ("local", "local"),
}


async def test_foreign_keys_are_ones_citus_accepts_and_the_plan_converts_referenced_tables_first(database_url):
    order = {c.table: i for i, c in enumerate(TABLES)}
    keys = await _fetch(database_url, _FOREIGN_KEYS)
    assert keys
    for key in keys:
        referencing, referenced = kind_of(key["referencing"]), kind_of(key["referenced"])
        pair = (referencing, referenced)
        restricts = key["on_delete"] in ("a", "r")  # NO ACTION, RESTRICT
        assert pair in ALLOWED or (pair == ("reference", "citus_local") and restricts), dict(key)
        if key["referencing"] != key["referenced"]:
            assert order[key["referenced"]] < order[key["referencing"]], dict(key)
    dataset_fields = next(k for k in keys if k["referencing"] == "dataset_fields")
    assert dataset_fields["referenced"] == "datasets"


def test_the_printed_plan():
    result = CliRunner().invoke(main, ["migrate", "--distributed", "--print"], env={"BEACON_DATABASE_URL": ""})
    assert result.exit_code == 0, result.output
    sql = result.output
    assert sql == plan_sql()
    assert "RAISE EXCEPTION 'the citus extension is not installed in database %'" in sql
    assert "ALTER DATABASE %I SET citus.override_table_visibility = off" in sql
    assert "SELECT create_distributed_table('events', 'dataset_id') WHERE NOT EXISTS" in sql
    for table in ("event_rollups", "dataset_fields"):
        assert f"SELECT create_distributed_table('{table}', 'dataset_id', colocate_with => 'events')" in sql
    for table in tables("reference"):
        assert f"SELECT create_reference_table('{table}')" in sql
    for table in tables("citus_local"):
        assert f"SELECT citus_add_local_table_to_metadata('{table}')" in sql
    for table in tables("local"):
        assert f"-- {table}: local, left as it is." in sql
    assert "CREATE EXTENSION citus" in sql and "node list per database" in sql
    # The order: checks and settings, reference tables, then the tables whose keys point at them.
    assert sql.index("create_reference_table('datasets')") < sql.index("create_distributed_table('dataset_fields'")
    assert sql.index("RAISE EXCEPTION") < sql.index("create_reference_table")
    # Every table statement says why.
    for choice in TABLES:
        assert f"-- {choice.table}: {choice.kind}" in sql


def test_the_printed_plan_with_nodes():
    args = ["migrate", "--distributed", "--print", "--coordinator", "coord.internal", "--worker", "w1:5433"]
    result = CliRunner().invoke(main, [*args, "--worker", "10.0.0.7"], env={"BEACON_DATABASE_URL": ""})
    assert result.exit_code == 0, result.output
    assert "SELECT citus_set_coordinator_host('coord.internal', 5432) WHERE NOT EXISTS" in result.output
    assert "SELECT citus_add_node('w1', 5433) WHERE NOT EXISTS" in result.output
    assert "SELECT citus_add_node('10.0.0.7', 5432) WHERE NOT EXISTS" in result.output
    bad = CliRunner().invoke(main, ["migrate", "--distributed", "--print", "--worker", "w1'; DROP TABLE x; --"])
    assert bad.exit_code == 2 and "is not a host or host:port" in bad.output
    alone = CliRunner().invoke(main, ["migrate", "--print"])
    assert alone.exit_code == 2 and "go with --distributed" in alone.output


async def test_every_statement_of_the_plan_parses(database_url):
    """Run on PostgreSQL without Citus, each statement (in a transaction rolled back) fails for want of Citus's
    catalog or functions, never as a syntax error; the first one is the check that says so."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        statements = plan_statements(None, [])
        for i, sql in enumerate(statements):
            tx = conn.transaction()
            await tx.start()
            try:
                await conn.execute(sql)
            except asyncpg.PostgresError as exc:
                assert exc.sqlstate != "42601", (sql, exc)  # syntax_error
                if i == 0:
                    assert "the citus extension is not installed" in str(exc)
                    assert "CREATE EXTENSION citus" in (exc.hint or "")
            finally:
                await tx.rollback()
    finally:
        await conn.close()


@pytest.fixture
async def empty_database(pg_server_url: str, db_prefix: str):
    name = f"{db_prefix}_nocitus"
    admin = await asyncpg.connect(asyncpg_dsn(pg_server_url))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield _with_database(pg_server_url, name)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def _state(url: str) -> list[Any]:
    """What the command could have changed: the tables, and the database's own settings."""
    rows = await _fetch(url, _TABLES)
    rows += await _fetch(
        url,
        "SELECT setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase "
        "WHERE d.datname = current_database()",
    )
    return sorted(map(tuple, rows))


async def test_without_citus_the_command_refuses_and_changes_nothing(empty_database):
    before = await _state(empty_database)
    env = clean_env(BEACON_DATABASE_URL=empty_database, BEACON_SECRET_KEY="k")
    command = [BEACON, "migrate", "--distributed"]
    result = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    message = " ".join(result.stderr.split())
    assert re.search(r"The citus extension is not installed in database '[^']+_nocitus'", message), message
    assert "nothing was changed" in message and "CREATE EXTENSION citus" in message
    assert await _state(empty_database) == before == []  # not even the migrations ran
