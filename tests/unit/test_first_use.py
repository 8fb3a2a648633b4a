"""A serving process does its one-time work when it starts (app/first_use.py), not inside its first notification:
checked in a fresh interpreter, where nothing has done it yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = """
import sys
from pathlib import Path

from adapters.registry import BUILTIN, AdapterRegistry
from adapters.templating import templates_of
from adapters.webhook import Webhook
from app.db.notifier import Notifier
from app.first_use import prepare_first_use

broken = Path(sys.argv[1])
(broken / "body.json.j2").write_text("{{ unclosed")
(broken / "group.json.j2").write_text('{"ok": true}')

class Plugin(Webhook):  # a plugin whose template does not compile
    type = "probe_plugin"
    templates_dir = broken

def compiled(cls):
    return {name for _, name in templates_of(cls)._env.cache._mapping}

assert not Notifier.__mapper__.configured
assert all(not compiled(cls) for cls in BUILTIN)
prepare_first_use(AdapterRegistry([*BUILTIN, Plugin]))
assert Notifier.__mapper__.configured
for cls in BUILTIN:
    own = {p.name for p in templates_of(cls).directory.glob("*.j2")}
    assert own and own | {"text.j2", "changes.j2"} <= compiled(cls), (cls.type, own, compiled(cls))
assert compiled(Plugin) == {"group.json.j2", "text.j2", "changes.j2"}, compiled(Plugin)
print("ok")
"""


def test_mappers_decoders_and_templates_are_ready_before_the_first_notification(tmp_path: Path) -> None:
    """The ORM's mappers configured, every adapter's templates compiled (a plugin's that does not compile is left
    for its message to report), in a process where none of it had happened."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(tmp_path)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
