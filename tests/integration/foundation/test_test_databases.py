"""The suite's own promise that each test starts clean: a database a test gave back is restored to the template's
state (rows, the partitions ingest made, sequences), and one whose schema a test changed is refused."""

from __future__ import annotations

import asyncpg
import pytest

from app.settings import asyncpg_dsn
from tests.conftest import _with_database
from tests.databases import Template


async def test_a_used_database_is_restored_to_the_template(
    client, auth, database_url, pg_server_url, template_database
):
    template_conn = await asyncpg.connect(asyncpg_dsn(_with_database(pg_server_url, template_database)))
    try:
        template = await Template.read(template_conn)
    finally:
        await template_conn.close()
    assert "routing_config" in template.seeds and "alembic_version" in template.seeds

    r = await client.post("/v1/ingest/web", json=[{"_time": "2026-11-20T10:00:00Z", "a": 1}], headers=auth)
    assert r.status_code == 200
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        assert await conn.fetchval("SELECT count(*) FROM events") == 1
        partitions = await conn.fetchval("SELECT count(*) FROM pg_inherits")
        await conn.execute("DELETE FROM routing_config")
        await template.restore(conn)
        assert await conn.fetchval("SELECT count(*) FROM events") == 0
        assert await conn.fetchval("SELECT count(*) FROM datasets") == 0
        assert await conn.fetchval("SELECT count(*) FROM tokens") == 0
        assert await conn.fetchval("SELECT count(*) FROM routing_config") == len(template.seeds["routing_config"][1])
        assert await conn.fetchval("SELECT count(*) FROM pg_inherits") < partitions  # the day's partition is gone
        assert await conn.fetchval("SELECT nextval('datasets_id_seq')") == 1

        await conn.execute("CREATE INDEX extra ON datasets (name)")
        with pytest.raises(RuntimeError, match="changed the schema"):
            await template.restore(conn)
    finally:
        await conn.close()
