"""The read pools: asyncpg sessions for the hot reads. The read pool checks tokens; the query pool runs queries
(POST /v1/query, /v1/export and the console's charts) under PostgreSQL's statement timeout.

Each session is set up when it connects (read-only transactions, custom plans, UTC, JSONB parsed, the statement
timeout), so a query runs as bare statements, without the BEGIN READ ONLY / SET LOCAL ... / ROLLBACK around it
that a shared connection needed: two round trips, 0.6 ms of a 10 ms query in bench/query.py. It sits outside
SQLAlchemy because these reads want plain records, and asyncpg's own pool hands out a connection for a little
less (a token check: 0.18 ms here, 0.22 ms through the engine, measured alone). The pools are apart so that a
token check is never held to a query's time limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import asyncpg
import msgspec

from app.settings import asyncpg_dsn


async def open_read_pool(
    database_url: str,
    *,
    max_size: int = 10,
    statement_timeout: float | None = None,
    application_name: str = "beacon-reads",
) -> asyncpg.Pool:
    """`statement_timeout` (seconds, the query pool's): PostgreSQL's own limit on each statement of these
    sessions, which PostgreSQL enforces by itself. A client-side timeout (asyncpg's) is no substitute: its
    cancel request goes over a new connection and is ignored when it arrives before the statement has started,
    and when the time runs out between preparing and running a statement, asyncpg gives up without ending it,
    leaving the session `active` in a statement that holds locks on `events` and `datasets` until the
    connection is used again."""
    init = _parse_jsonb
    if statement_timeout is not None:
        init = partial(_with_statement_timeout, ms=max(1, round(statement_timeout * 1000)))
    return await asyncpg.create_pool(
        asyncpg_dsn(database_url),
        min_size=0,  # connects on demand: the app starts (and /healthz answers) while the database is down
        max_size=max_size,
        server_settings={
            "application_name": application_name,
            "timezone": "UTC",
            "default_transaction_read_only": "on",
            # A query is prepared once and run with new times each call; after five runs PostgreSQL may switch
            # to a generic plan, whose estimates ignore the actual time range.
            "plan_cache_mode": "force_custom_plan",
        },
        reset=_no_reset_query,
        init=init,
    )


async def _with_statement_timeout(conn: asyncpg.Connection, *, ms: int) -> None:
    await _parse_jsonb(conn)
    # Set after the codec's catalog lookup, which a tiny limit could cancel; the session keeps it (sessions are
    # never reset: _no_reset_query).
    await conn.execute(f"SET statement_timeout = {int(ms)}")


async def _parse_jsonb(conn: asyncpg.Connection) -> None:
    # JSONB values arrive parsed (msgspec: big integers stay exact), each as its row comes in: asyncpg decodes
    # rows while PostgreSQL is still producing the next ones, so the parsing of 1,000 events in a query result
    # is done by the time the last one arrives (0.4 ms less per query in bench/query.py). A statement that wants
    # JSON text selects `::text`. Parameters of type jsonb are passed as JSON text, as without this codec.
    await conn.set_type_codec(
        "jsonb", schema="pg_catalog", encoder=_json_text, decoder=msgspec.json.decode, format="text"
    )


def _json_text(value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"a jsonb parameter is passed as JSON text, not {type(value).__name__}")
    return value


async def _no_reset_query(conn: asyncpg.Connection) -> None:
    # Replaces asyncpg's reset query (RESET ALL, CLOSE ALL, UNLISTEN, unlock all: a round trip on every
    # release), which these sessions never need: nothing here sets, listens or locks. asyncpg still rolls back
    # a transaction left open (an export cut short) before it calls this.
    return None


@asynccontextmanager
async def read_connection(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    conn = await pool.acquire()
    try:
        yield conn
    finally:
        # Shielded: a client that disconnects mid-export cancels the streaming task, and the connection must
        # still be handed back (asyncpg rolls back what was left open, and closes the connection if it cannot).
        with anyio.CancelScope(shield=True):
            await pool.release(conn)
