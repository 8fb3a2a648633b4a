"""Compiled templates are kept on disk (adapters/templating.py): a process that starts after another finds them
compiled, and a template whose text changed is compiled again, never served stale. Each probe is a fresh
interpreter with its temporary directory (where Jinja keeps them) in the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = """
import sys
from pathlib import Path

from adapters.templating import Templates

templates = Templates(Path(sys.argv[1]))
env = templates._env
compiled = []
compile_source = env.compile
env.compile = lambda *args, **kwargs: compiled.append(args[1]) or compile_source(*args, **kwargs)
print(templates.text("message.j2", host="db-1"), len(compiled))
"""
ROOT = Path(__file__).resolve().parents[2]


def _render(templates: Path, tmp: Path) -> tuple[str, int]:
    """What a fresh process renders from `templates`, and how many templates it compiled to do it."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(templates)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text, count = done.stdout.rsplit(" ", 1)
    return text, int(count)


def test_the_next_process_finds_them_compiled_and_a_changed_one_is_compiled_again(tmp_path: Path) -> None:
    templates, tmp = tmp_path / "templates", tmp_path / "tmp"
    templates.mkdir()
    tmp.mkdir()
    (templates / "message.j2").write_text("{{ host }} is down")
    assert _render(templates, tmp) == ("db-1 is down", 1)
    kept = list(tmp.glob(f"_jinja2-cache-{os.getuid()}/beacon-*.cache"))
    assert len(kept) == 1
    assert _render(templates, tmp) == ("db-1 is down", 0)
    (templates / "message.j2").write_text("{{ host }} is back")
    assert _render(templates, tmp) == ("db-1 is back", 1)
    assert _render(templates, tmp) == ("db-1 is back", 0)


def test_a_damaged_file_is_compiled_again(tmp_path: Path) -> None:
    templates, tmp = tmp_path / "templates", tmp_path / "tmp"
    templates.mkdir()
    tmp.mkdir()
    (templates / "message.j2").write_text("{{ host }} is down")
    _render(templates, tmp)
    [kept] = tmp.glob(f"_jinja2-cache-{os.getuid()}/beacon-*.cache")
    kept.write_bytes(kept.read_bytes()[:40])  # cut short after Jinja's header
    assert _render(templates, tmp) == ("db-1 is down", 1)
    assert _render(templates, tmp) == ("db-1 is down", 0)


FILTER_PROBE = """
import sys
from pathlib import Path

from adapters import templating

if sys.argv[2] == "plain":  # the `json` filter as a plain function, as it was before it took Jinja's eval context
    templating.to_json = lambda value: templating._JSON.encode(value)
print(templating.Templates(Path(sys.argv[1])).text("message.j2", host="db-1"))
"""


def test_a_filter_that_is_passed_other_arguments_compiles_them_again(tmp_path: Path) -> None:
    """Jinja writes what a filter is passed (its value alone, or the context too) into the compiled code: a filter
    changed by a deploy must not run with the code compiled for the old one."""
    templates, tmp = tmp_path / "templates", tmp_path / "tmp"
    templates.mkdir()
    tmp.mkdir()
    (templates / "message.j2").write_text("{{ host | json }} is down")
    for kind in ("plain", "eval context", "plain"):
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(FILTER_PROBE), str(templates), kind],
            cwd=ROOT,
            env={**os.environ, "TMPDIR": str(tmp)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stdout) == (0, '"db-1" is down\n'), (kind, done.stderr[-500:])
    assert len(list(tmp.glob(f"_jinja2-cache-{os.getuid()}/beacon-*.cache"))) == 2
