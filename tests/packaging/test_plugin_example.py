"""docs/plugins.md's example works when copied: its files are what `beacon plugin new acme` writes; copied out of
the page, the package installs (`pip install`, into a directory of this test: nothing is added to the test's
environment), Beacon discovers its type through the entry point, and its own tests pass under the kit, run by
pytest in the package's directory with no asyncio set-up (pytest-asyncio is installed, in its strict default)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- plugin-file: (\S+) -->\n```[a-z]*\n(.*?)```\n", re.S)
BIN = Path(sys.executable).parent


def page_files() -> dict[str, str]:
    found = dict(BLOCK.findall((ROOT / "docs" / "plugins.md").read_text()))
    assert set(found) == {
        "beacon-acme/pyproject.toml",
        "beacon-acme/beacon_acme/__init__.py",
        "beacon-acme/beacon_acme/templates/message.json.j2",
        "beacon-acme/tests/test_acme.py",
    }
    return found


def _env(**extra: str) -> dict[str, str]:
    # Neither Beacon's settings nor this run's pytest (xdist worker, options) reach the plugin's own test run.
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("BEACON_", "PYTEST_", "PYTHON"))}
    return {**keep, **extra}


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]


def test_the_page_shows_what_plugin_new_writes(tmp_path: Path):
    runner = CliRunner()
    made = runner.invoke(main, ["plugin", "new", "acme", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    written = {str(p.relative_to(tmp_path)): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == page_files()

    again = runner.invoke(main, ["plugin", "new", "acme", "--dir", str(tmp_path)])
    assert again.exit_code == 1 and "exists already" in again.output
    for bad in ("Acme", "a", "my-type", "webhook"):
        refused = runner.invoke(main, ["plugin", "new", bad, "--dir", str(tmp_path)])
        assert refused.exit_code == 2 and "NAME" in refused.output, bad


def test_the_example_copied_from_the_page_installs_is_discovered_and_passes_the_kit(tmp_path: Path):
    copied = tmp_path / "copied"
    for path, text in page_files().items():
        (copied / path).parent.mkdir(parents=True, exist_ok=True)
        (copied / path).write_text(text)
    site = tmp_path / "site"
    installed = _run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(copied / "beacon-acme")],
        env=_env(),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (site / "beacon_acme" / "templates" / "message.json.j2").is_file()  # the wheel carries the template

    # Discovered through the installed entry point, as `beacon serve` discovers it.
    probe = "from adapters.registry import AdapterRegistry; print(AdapterRegistry.discover()['acme'].__module__)"
    found = _run([sys.executable, "-c", probe], env=_env(PYTHONPATH=str(site)), cwd=tmp_path)
    assert found.returncode == 0 and found.stdout.strip() == "beacon_acme", found.stderr

    # Its tests, as its author runs them: the pytest command in its directory (the package from `site`).
    tested = _run(
        [str(BIN / "pytest"), "-p", "no:cacheprovider", "-q", "-W", "ignore::DeprecationWarning"],
        env=_env(PYTHONPATH=str(site)),
        cwd=copied / "beacon-acme",
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert re.search(r"\b4 passed\b", tested.stdout) and "skipped" not in tested.stdout, tested.stdout
