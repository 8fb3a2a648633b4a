"""A pytest plugin (`-p tests.bytecode` in pyproject.toml): the project's compiled modules (`__pycache__`) are
written and reused during a test run, also where the environment says not to write them (`PYTHONDONTWRITEBYTECODE`,
which some machines set, this project's CI machine among them).

Without them, every process a test starts compiles the project's modules again: a `beacon serve` ~0.25 s of CPU
before it listens, and every `beacon` command its share; and each pytest worker rewrites the asserts of every test
module it imports (pytest caches the rewrite only where bytecode may be written). The installed packages are
compiled when pip installs them, so only the checkout's own modules are concerned, and `__pycache__/` is ignored
by git.
"""

from __future__ import annotations

import os
import sys

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests() -> None:
    """Before the conftests and test modules are imported (and rewritten), and before xdist starts its workers and
    the tests their processes, which inherit the environment."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
