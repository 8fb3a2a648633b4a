"""Old and new code measured side by side: a git revision's server code extracted into a scratch directory, and
this checkout's, measured round by round in turn, so that the machine's load falls on both alike."""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from bench.cli_start import extract

T = TypeVar("T")
# What a `beacon serve` runs from: a revision's copy of these is run with PYTHONPATH (bench/cli_start.import_path).
SERVER_PATHS = ("app", "adapters", "client", "templates", "migrations", "alembic.ini")


def trees(before: str, scratch: Path) -> dict[str, Path | None]:
    """{"before (REV)": the revision's server code extracted into `scratch`, "after": None (this checkout)}."""
    return {f"before ({before})": extract(before, scratch, SERVER_PATHS), "after": None}


async def alternate(before: str, rounds: int, measure: Callable[[Path | None], Awaitable[T]]) -> dict[str, list[T]]:
    """{"before (REV)": [...], "after": [...]}: `measure(tree)` per round and side; `tree` is the extracted
    revision's directory, or None for this checkout."""
    with tempfile.TemporaryDirectory() as scratch:
        sides = trees(before, Path(scratch))
        found: dict[str, list[T]] = {name: [] for name in sides}
        for _ in range(rounds):
            for name, tree in sides.items():
                found[name].append(await measure(tree))
    return found
