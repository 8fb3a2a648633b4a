"""Benchmark: the token check every request runs (app/auth.py), with and without the issuer-chain check.

    .venv/bin/python bench/auth.py [--tokens 10000] [--runs 30] [--lookups 500] [--server-url postgresql://...]

Creates a fresh, migrated database with N root tokens and a chain of issued tokens four deep, then times, side
by side in each run (interleaved, on the same read pool), the lookup of one token by its hash as it was before
issuers were recorded (`before`: the token's own row) and as it is now (`after`: its row and every ancestor's):
for a root token, for the token at the end of the chain, and for a console session. Prints the medians in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.auth import _principal, hash_token, principal_for_hash, principal_for_session  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from app.db.reads import open_read_pool  # noqa: E402
from app.settings import asyncpg_dsn  # noqa: E402

# The statement before issuers were recorded, run through the same code as today's (`_principal`).
BEFORE = "SELECT id, scopes, datasets, expires_at, revoked_at, false AS issuer_ended FROM tokens WHERE token_hash = $1"
DEPTH = 4


async def before(pool: asyncpg.Pool, digest: bytes) -> None:
    await _principal(pool, BEFORE, digest)


async def fresh_database(server_url: str, tokens: int) -> tuple[str, bytes, bytes, bytes]:
    """The database's URL, the hash of a root token, of the chain's last token and of a console session."""
    url = server_url.rstrip("/") + "/beacon_bench_auth"
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute('DROP DATABASE IF EXISTS "beacon_bench_auth" WITH (FORCE)')
    await admin.execute('CREATE DATABASE "beacon_bench_auth"')
    await admin.close()
    await asyncio.to_thread(upgrade, url)
    conn = await asyncpg.connect(asyncpg_dsn(url))
    expires = datetime.now(UTC) + timedelta(days=1)
    await conn.executemany(
        "INSERT INTO tokens (id, name, token_hash, scopes, created_at) VALUES ($1, 'root', $2, '{*}', now())",
        [(f"tok_{i:x}", hash_token(f"bcn_root{i}")) for i in range(tokens)],
    )
    ancestors: list[str] = []
    for depth in range(DEPTH):
        token_id = f"tok_chain{depth}"
        await conn.execute(
            "INSERT INTO tokens (id, name, token_hash, scopes, created_at, expires_at, issuer_id, ancestors)"
            " VALUES ($1, 'chain', $2, '{*}', now(), $3, $4, $5)",
            token_id,
            hash_token(f"bcn_chain{depth}"),
            expires,
            ancestors[-1] if ancestors else None,
            ancestors,
        )
        ancestors.append(token_id)
    session = hash_token("a console session id")
    await conn.execute(
        "INSERT INTO console_sessions (id_hash, token_id, expires_at) VALUES ($1, 'tok_0', $2)", session, expires
    )
    await conn.execute("ANALYZE tokens; ANALYZE console_sessions")
    await conn.close()
    return url, hash_token("bcn_root0"), hash_token(f"bcn_chain{DEPTH - 1}"), session


async def timed(lookups: int, step) -> float:  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    for _ in range(lookups):
        await step()
    return (time.perf_counter() - began) / lookups * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--lookups", type=int, default=500)
    parser.add_argument("--server-url", default="postgresql://postgres@127.0.0.1:5432")
    args = parser.parse_args()
    url, root, chained, session = await fresh_database(args.server_url, args.tokens)
    pool = await open_read_pool(url, max_size=2)
    cases = {
        "before, root token": lambda: before(pool, root),
        "after, root token": lambda: principal_for_hash(pool, root),
        f"before, token {DEPTH} deep": lambda: before(pool, chained),
        f"after, token {DEPTH} deep": lambda: principal_for_hash(pool, chained),
        "console session": lambda: principal_for_session(pool, session),
    }
    for step in cases.values():  # warm up: connections, prepared statements
        await timed(200, step)
    found: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, step in cases.items():
            found[name].append(await timed(args.lookups, step))
    await pool.close()
    print(f"{args.tokens:,} tokens; median of {args.runs} runs of {args.lookups} lookups each (ms per lookup):")
    for name, times in found.items():
        print(f"  {name:<24} {statistics.median(times):.3f}  (min {min(times):.3f}, max {max(times):.3f})")


if __name__ == "__main__":
    asyncio.run(main())
