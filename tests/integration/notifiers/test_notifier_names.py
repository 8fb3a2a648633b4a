"""Notifier names are unique: a second notifier of a name in use is a 409 that names the one holding it, at creation
and on rename (docs/notifiers.md says why); migration 0024 renames the duplicates it finds."""

from __future__ import annotations

import asyncio

import asyncpg
from alembic import command
from sqlalchemy import text

from app.db.migrate import alembic_config, upgrade
from app.settings import asyncpg_dsn
from tests.helpers import assert_error

HOOK = {"type": "webhook", "config": {"url": "https://hooks.example.com/ops"}}


async def test_a_name_in_use_is_a_409(client, auth, db):
    ops = await client.post("/v1/notifiers", headers=auth, json={"name": "ops", **HOOK})
    assert ops.status_code == 201
    again = assert_error(
        await client.post("/v1/notifiers", headers=auth, json={"name": "ops", **HOOK}), 409, "conflict"
    )
    assert again["param"] == "name" and ops.json()["id"] in again["message"] and "'ops'" in again["message"]
    async with db() as s:
        assert (await s.execute(text("SELECT count(*) FROM notifiers"))).scalar_one() == 1  # nothing half-stored

    other = (await client.post("/v1/notifiers", headers=auth, json={"name": "Ops", **HOOK})).json()  # case counts
    renamed = await client.patch(f"/v1/notifiers/{other['id']}", headers=auth, json={"name": "ops"})
    assert_error(renamed, 409, "conflict", param="name")
    assert (await client.get(f"/v1/notifiers/{other['id']}", headers=auth)).json()["name"] == "Ops"
    # Its own name again, another field changed: no conflict; a freed name can be taken.
    same = await client.patch(
        f"/v1/notifiers/{ops.json()['id']}", headers=auth, json={"name": "ops", "disabled_until": None}
    )
    assert same.status_code == 200 and same.json()["name"] == "ops"
    assert (
        await client.patch(f"/v1/notifiers/{ops.json()['id']}", headers=auth, json={"name": "ops-old"})
    ).status_code == 200
    moved = await client.patch(f"/v1/notifiers/{other['id']}", headers=auth, json={"name": "ops"})
    assert moved.status_code == 200 and moved.json()["name"] == "ops"


def test_migration_0024_renames_the_duplicates_it_finds(database_url):
    command.downgrade(alembic_config(database_url), "0015_alert_pending_since")

    async def run(sql: str, *args: object) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(asyncpg_dsn(database_url))
        try:
            return await conn.fetch(sql, *args)
        finally:
            await conn.close()

    insert = (
        "INSERT INTO notifiers (id, name, type, target, config_sealed, created_at, updated_at)"
        " SELECT i, n, 'webhook', 't', '\\x00', c::timestamptz, c::timestamptz"
        " FROM unnest($1::text[], $2::text[], $3::text[]) AS x(i, n, c)"
    )
    ids = ["ntf_b", "ntf_a", "ntf_c", "ntf_d"]
    names = ["ops", "ops", "db", "ops"]
    times = ["2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"]
    asyncio.run(run(insert, ids, names, times))
    upgrade(database_url)
    rows = asyncio.run(run("SELECT id, name FROM notifiers ORDER BY id"))
    assert {r["id"]: r["name"] for r in rows} == {
        "ntf_a": "ops",  # the oldest keeps its name
        "ntf_b": "ops (ntf_b)",
        "ntf_c": "db",
        "ntf_d": "ops (ntf_d)",
    }
