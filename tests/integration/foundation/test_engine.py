"""The engine's connections: what each learns when it opens, so that the statements after it do not stop to ask."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from app.db.engine import autocommit_connection, make_engine

# The array parameters of the hot batch statements: the alerts' upsert, the flush, the recorder, rollups, monitors.
BATCH_COLUMNS = """
SELECT cardinality($1::timestamptz[]) + cardinality($2::bool[]) + cardinality($3::int[]) + cardinality($4::jsonb[])
       + cardinality($5::bigint[]) + cardinality($6::float8[])
"""


async def test_a_new_connection_knows_the_array_types_before_its_first_statement(database_url: str) -> None:
    """asyncpg learns an array type other than text[] by a catalog query (JIT switched off and on around it) the
    first time a connection meets it; each new connection learns them all when it opens, so a request or a flush on
    it sends only its own statement."""
    engine = make_engine(database_url, pool_size=1)
    try:
        async with autocommit_connection(engine) as conn:
            sent: list[str] = []
            conn.add_query_logger(lambda q: sent.append(q.query))  # called soon after each statement
            columns = [[datetime.now(UTC)], [True], [1], ['{"a": 1}'], [2], [0.5]]
            assert await conn.fetchval(BATCH_COLUMNS, *columns) == 6
            await asyncio.sleep(0.05)
            assert sent == [BATCH_COLUMNS], sent
    finally:
        await engine.dispose()
