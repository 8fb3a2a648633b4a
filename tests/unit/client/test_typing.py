"""Type checkers see each bound method's exact signature: T from `Client`, an awaitable of T from `AsyncClient`.

Runs mypy on a small program using the client; a wrong argument must be an error, and `assert_type` checks the
return types.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, assert_type

from beacon_client import (
    Annotation, AsyncClient, Client, IngestResult, Page, QueryResult, Token, TokenCreated,
)


def sync_use(c: Client) -> None:
    assert_type(c.create_annotation("deploy", "v1", ["web"], url="https://ci"), Annotation)
    assert_type(c.list_annotations(datasets=["web"], limit=10), Page[Annotation])
    assert_type(c.query("['web'] | count", take=5), QueryResult)
    assert_type(c.ingest("web", [{"a": 1}]), IngestResult)
    assert_type(c.create_token("ci", ["query"]), TokenCreated)
    assert_type(c.revoke_token("tok_1"), None)
    assert_type(c.export("['web']"), Iterator[dict[str, Any]])
    assert_type(c.iterate(c.list_tokens, limit=5), Iterator[Token])


async def async_use(c: AsyncClient) -> None:
    pending = assert_type(c.create_annotation("deploy", "v1", "web"), Coroutine[Any, Any, Annotation])
    pending.close()
    assert_type(await c.query("['web'] | count"), QueryResult)
    assert_type(await c.get_token("tok_1"), Token)
    assert_type(c.export("['web']"), AsyncIterator[dict[str, Any]])
    assert_type(c.iterate(c.list_annotations, type="deploy"), AsyncIterator[Annotation])


def wrong(c: Client) -> None:
    c.create_annotation("deploy", 1.5, ["web"], colour="red")
"""


def test_bound_methods_keep_their_signatures_and_return_types(tmp_path):
    program = tmp_path / "use_client.py"
    program.write_text(textwrap.dedent(PROGRAM))
    out, err, _status = api.run(
        [
            "--no-error-summary",
            "--hide-error-context",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            str(program),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    # Exactly the two mistakes in `wrong`: a number for `title`, and an unknown keyword.
    assert len(errors) == 2, out + err
    assert 'Unexpected keyword argument "colour"' in out
    assert 'Argument 2 has incompatible type "float"; expected "str"' in out, out
