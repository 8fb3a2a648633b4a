"""The plugin contract needs nothing of the server: adapters/contract.py (the event, the message, the result,
the config base, the context with its narrow settings) imports only the standard library and msgspec, and
adapters/base.py (the Adapter class, which renders through Jinja) neither the web framework nor a database
driver. Each is imported alone, in a fresh interpreter, and what it loaded is looked at."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields

from adapters.contract import AdapterSettings
from app.settings import Settings

SERVER_SIDE = {"litestar", "sqlalchemy", "asyncpg", "alembic", "uvicorn", "apscheduler", "pgserver", "aiohttp"}

PROBE = """
import json, sys
before = set(sys.modules)
import {module}
print(json.dumps(sorted({{m.split(".")[0] for m in set(sys.modules) - before}})))
"""


def loaded_by(module: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(done.stdout))


def test_the_contract_imports_the_standard_library_and_msgspec_only():
    found = loaded_by("adapters.contract")
    assert not found & (SERVER_SIDE | {"app", "jinja2", "httpx"}), found
    assert {"adapters", "msgspec"} <= found
    # msgspec's own import brings typing_extensions.
    outside = {m for m in found if m not in sys.stdlib_module_names} - {"adapters", "msgspec", "typing_extensions"}
    assert not outside, outside


def test_the_adapter_base_class_needs_no_web_framework_nor_database():
    found = loaded_by("adapters.base")
    assert not found & SERVER_SIDE, found


def test_adapters_see_only_their_settings_with_the_servers_defaults():
    names = {f.name for f in fields(AdapterSettings)}
    assert names == {
        "base_url",
        "smtp_host",
        "smtp_port",
        "smtp_username",
        "smtp_password",
        "smtp_starttls",
        "smtp_from",
        "incident_a_url",
        "incident_b_url",
    }
    assert Settings().for_adapters() == AdapterSettings()
    narrowed = Settings(secret_key="k", smtp_password="p4ss", database_url="postgresql://u:pw@h/db").for_adapters()
    assert narrowed.smtp_password == "p4ss" and "p4ss" not in repr(narrowed)
    assert not hasattr(narrowed, "secret_key") and not hasattr(narrowed, "database_url")
