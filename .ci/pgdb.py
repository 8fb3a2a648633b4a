"""Create or drop the CI databases: `pgdb.py create URL`, `pgdb.py drop URL` (the db and its test clones)."""

import asyncio
import sys
from urllib.parse import urlsplit, urlunsplit

import asyncpg


async def main(action: str, url: str) -> None:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    conn = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")))
    try:
        if action == "create":
            await conn.execute(f'CREATE DATABASE "{name}"')
        else:
            rows = await conn.fetch(
                "SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2", name, name + "\\_%"
            )
            for row in rows:
                await conn.execute(f'DROP DATABASE IF EXISTS "{row["datname"]}" WITH (FORCE)')
    finally:
        await conn.close()


asyncio.run(main(sys.argv[1], sys.argv[2]))
