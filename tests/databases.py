"""Each test's fresh database: cloned from the worker's migrated template once, then emptied back to the template's
state after each test and handed to the next one.

Why not a new clone per test: `CREATE DATABASE … TEMPLATE` writes the whole catalog (8.6 MB) to the WAL and
`DROP DATABASE` waits for a checkpoint, 0.4 s together on a quiet 2-core machine and over 1 s under load, for
every test: the suite was bound by that one thread (≈ 950 tests × 0.45 s per worker = its whole run time).
Emptying what a test wrote costs tens of milliseconds.

"The template's state" is checked, not assumed: after emptying, the schema's fingerprint (relations, columns,
functions, triggers, extensions) must equal the template's; a database a test changed in any other way (an index,
a downgrade) is dropped and replaced by a new clone.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import queue
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from app.settings import asyncpg_dsn

# Every object of the schema a test could change, as one digest.
_FINGERPRINT = """
SELECT md5(coalesce(string_agg(x, ',' ORDER BY x), '')) FROM (
    SELECT c.relname || ':' || c.relkind::text || ':' || coalesce(a.attname, '') || ':'
        || coalesce(a.atttypid::text, '') || ':' || coalesce(a.attnotnull::text, '') AS x
    FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL SELECT 'proc:' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT 'trigger:' || tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL SELECT 'constraint:' || conname FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'schema:' || nspname FROM pg_namespace
    UNION ALL SELECT 'extension:' || extname FROM pg_extension
    UNION ALL SELECT 'setting:' || array_to_string(setconfig, ',') FROM pg_db_role_setting
        WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
) s
"""
# The pool's own thread: what it sends (cloning, emptying) is the harness's, never the app's (tests/sqlrecorder.py).
THREAD_NAME = "db-clones"
_TABLES = "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')"
_SEQUENCES = "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'S'"


def with_database(url: str, name: str) -> str:
    """The server's URL `url` naming the database `name`."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Template:
    """What a fresh clone holds: its tables, the rows some of them start with (the migrations' seed rows), its
    sequences and its schema's fingerprint."""

    tables: frozenset[str]
    seeds: dict[str, tuple[list[str], list[tuple[Any, ...]]]]
    sequences: tuple[str, ...]
    fingerprint: str

    @classmethod
    async def read(cls, conn: asyncpg.Connection) -> Template:
        tables = frozenset(r["relname"] for r in await conn.fetch(_TABLES))
        seeds: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
        for table in sorted(tables):
            rows = await conn.fetch(f"SELECT * FROM ONLY {_ident(table)}")
            if rows:
                seeds[table] = (list(rows[0].keys()), [tuple(r.values()) for r in rows])
        sequences = tuple(r["relname"] for r in await conn.fetch(_SEQUENCES))
        return cls(tables, seeds, sequences, await conn.fetchval(_FINGERPRINT))

    async def restore(self, conn: asyncpg.Connection) -> None:
        """Bring the database on `conn` back to this template's state, or raise if it cannot be."""
        async with conn.transaction():
            await conn.execute("SET LOCAL lock_timeout = '10s'")
            present = {r["relname"] for r in await conn.fetch(_TABLES)}
            extra = present - self.tables  # the partitions ingest made
            if extra:
                await conn.execute(f"DROP TABLE IF EXISTS {', '.join(map(_ident, sorted(extra)))} CASCADE")
            written = await conn.fetchval(
                "SELECT array_remove(ARRAY["
                + ", ".join(
                    f"CASE WHEN EXISTS (SELECT 1 FROM {_ident(t)}) THEN {_literal(t)} END" for t in sorted(self.tables)
                )
                + "], NULL)"
            )
            cleared = sorted(set(written) | set(self.seeds))
            if cleared:
                await conn.execute(f"TRUNCATE {', '.join(map(_ident, cleared))} CASCADE")
            for table, (columns, rows) in self.seeds.items():
                await conn.copy_records_to_table(table, records=rows, columns=columns)
            for sequence in self.sequences:
                await conn.execute(f"ALTER SEQUENCE {_ident(sequence)} RESTART")
        if await conn.fetchval(_FINGERPRINT) != self.fingerprint:
            raise RuntimeError("the test changed the schema")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Clones:
    """Fresh databases for tests, kept ready ahead of need by a thread of their own: cloned from the template when
    none is spare, else a database a finished test gave back, restored to the template's state."""

    AHEAD = 2

    def __init__(self, server_url: str, template: str, prefix: str) -> None:
        self._server_url, self._template, self._prefix = server_url, template, prefix
        self._names = itertools.count()
        self._ready: queue.Queue[str | BaseException] = queue.Queue()
        self._jobs: queue.Queue[tuple[str, str]] = queue.Queue()
        self._spare: collections.deque[str] = collections.deque()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True, name=THREAD_NAME)
        self._thread.start()

    def take(self) -> str:
        """A database in the template's state that no running test uses (waits for one when none is ready); another
        is made ready to replace it."""
        if self._failed is not None:
            raise self._failed
        self._jobs.put(("replace", ""))
        found = self._ready.get(timeout=300)
        if isinstance(found, BaseException):
            raise found
        return found

    def give_back(self, name: str) -> None:
        self._jobs.put(("recycle", name))

    def close(self) -> None:
        """Drop every database of the pool and end the thread."""
        self._jobs.put(("stop", ""))
        self._thread.join(timeout=120)

    async def _serve(self) -> None:
        try:
            await self._run()
        except BaseException as exc:  # every test waiting, and every later one, fails with the reason
            self._failed = exc
            for _ in range(64):
                self._ready.put(exc)
            raise

    async def _run(self) -> None:
        admin = await asyncpg.connect(asyncpg_dsn(self._server_url))
        try:
            template_conn = await asyncpg.connect(asyncpg_dsn(with_database(self._server_url, self._template)))
            try:
                template = await Template.read(template_conn)
            finally:
                await template_conn.close()
            for _ in range(self.AHEAD):
                await self._clone(admin)
            while True:
                action, name = await asyncio.to_thread(self._jobs.get)
                if action == "replace":
                    if self._spare:
                        self._ready.put(self._spare.popleft())
                    else:
                        await self._clone(admin)
                elif action == "recycle":
                    await self._recycle(admin, template, name)
                else:
                    while not self._ready.empty():
                        left = self._ready.get()
                        if isinstance(left, str):
                            self._spare.append(left)
                    for left in self._spare:
                        await admin.execute(f"DROP DATABASE IF EXISTS {_ident(left)} WITH (FORCE)")
                    return
        finally:
            await admin.close()

    async def _clone(self, admin: asyncpg.Connection) -> None:
        name = f"{self._prefix}_{next(self._names)}"
        try:
            await admin.execute(f"CREATE DATABASE {_ident(name)} TEMPLATE {_ident(self._template)}")
        except Exception as exc:  # the test that takes it fails with the reason
            self._ready.put(exc)
        else:
            self._ready.put(name)

    async def _recycle(self, admin: asyncpg.Connection, template: Template, name: str) -> None:
        # What the test left connected (a server it started, a pool not yet closed) goes first: its locks and its
        # writes must not reach the next test.
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            name,
        )
        try:
            conn = await asyncpg.connect(asyncpg_dsn(with_database(self._server_url, name)))
            try:
                await template.restore(conn)
            finally:
                await conn.close()
        except Exception:
            await admin.execute(f"DROP DATABASE IF EXISTS {_ident(name)} WITH (FORCE)")
            return
        self._spare.append(name)
