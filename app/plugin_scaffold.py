"""`beacon plugin new NAME`: a notifier plugin package that works as written: an adapter posting a JSON message to
a webhook URL (with an optional bearer token), its template, its tests with the kit (adapters/testing.py), and the
`beacon.adapters` entry point that makes NAME a notifier type once it is installed beside Beacon.

docs/plugins.md shows what `beacon plugin new acme` writes, file by file, and tests/packaging/test_plugin_example.py
checks that the two are the same, then installs the package and runs its tests. Only click and the standard library
are imported here: `beacon --help` stays light (app/cli.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import click

NAME = re.compile(r"[a-z][a-z0-9_]{1,30}")

# Every file of the package, by its path in it. `$name` is the type name, `$package` the Python package,
# `$Class` the adapter's class name, `$dist` the distribution (and the directory the package is written in).
FILES: dict[str, str] = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "A Beacon notifier type: $name"
requires-python = ">=3.11"
# No dependencies: the package is installed into the environment Beacon runs in, which has what it imports.

# What makes `$name` a notifier type: Beacon loads this class when it starts.
[project.entry-points."beacon.adapters"]
$name = "$package:$Class"

[tool.setuptools]
packages = ["$package"]

[tool.setuptools.package-data]
$package = ["templates/*.j2"]

[tool.pytest.ini_options]
testpaths = ["tests"]
""",
    "$package/__init__.py": '''\
"""The `$name` notifier type: a JSON message to a webhook URL, with an optional bearer token.

    POST /v1/notifiers {"name": "team $name", "type": "$name",
                        "config": {"url": "https://hooks.example.com/T0K3N", "token": "…", "severity": "warning"}}

Change `render` (and templates/message.json.j2) to the payload your service takes, and `send` to how it takes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from adapters.base import Adapter
from adapters.checks import check_http_url, url_target
from adapters.contract import AdapterConfig, ConfigError, DeliveryResult, Event, Message, Secret

# What a message is marked as, by kind of event (a routed group: by whether it fires).
LEVELS = {"triggered": "alert", "error": "alert", "no_data": "warning", "matched": "warning"}


class ${Class}Config(AdapterConfig):
    """A user's `config`: unknown keys are refused, `Secret` fields are stored encrypted and never shown."""

    url: Secret  # webhook URLs often carry their credential: never shown, masked in every error
    token: Secret | None = None  # sent as `Authorization: Bearer …`
    severity: Literal["info", "warning", "critical"] = "critical"  # how an alert is marked


class $Class(Adapter[${Class}Config]):
    type = "$name"
    Config = ${Class}Config
    description = "A JSON message to a webhook URL ($name)"
    templates_dir = Path(__file__).parent / "templates"

    @classmethod
    def check(cls, config: ${Class}Config) -> None:
        """Rules beyond the config's shape; a ConfigError names the key (the API answers 400 with `param`)."""
        check_http_url(config.url, "url")
        if config.token is not None and not config.token.strip():
            raise ConfigError("token", "`config.token` must not be blank; leave it out instead.")

    @classmethod
    def target(cls, config: ${Class}Config) -> str:
        """What lists show: the host and the end of the path, never the secret."""
        return url_target(config.url)

    @classmethod
    def destinations(cls, config: ${Class}Config) -> dict[str, str]:
        """URLs checked against the private-network guard, when the notifier is saved and at every send."""
        return {"url": config.url}

    def render(self, event: Event) -> Message:
        """The message, from the template; nothing is sent here (previews call it too)."""
        firing = event.alert_group.status == "firing" if event.alert_group else event.kind in LEVELS
        level = LEVELS.get(event.kind, "alert") if firing else "info"
        severity = self.config.severity if level == "alert" else level
        payload = self.templates.json("message.json.j2", **self.template_context(event), level=severity)
        return Message(payload=payload)

    async def send(self, message: Message) -> DeliveryResult:
        """POST it; Beacon's HTTP sender says whether a failure is worth retrying, and masks the secrets."""
        headers = {"Authorization": f"Bearer {self.config.token}"} if self.config.token else {}
        return await self.context.http.post_json(
            self.config.url, message.payload, headers=headers, secrets=self.secret_values()
        )
''',
    "$package/templates/message.json.j2": """\
{#- $name: one message. `event` is adapters.contract.Event; `group` a routed group notification (or none); `level` is
    set by the adapter; text.j2 is Beacon's shared wording. Every value goes through `json`: no text breaks it. -#}
{% import "text.j2" as t %}
{
{%- if group %}
  "title": {{ group.title | truncate_chars(200) | json }},
  "text": {{ (group.summary ~ "\\n" ~ group.lines) | truncate_chars(4000) | json }},
{%- else %}
  "title": {{ t.title(event) | truncate_chars(200) | json }},
  "text": {{ t.summary(event, operator_words) | truncate_chars(4000) | json }},
{%- endif %}
  "severity": {{ level | json }},
  "link": {{ event.link | json }},
  "time": {{ event.time | json }}
}
""",
    "tests/test_$name.py": '''\
"""The `$name` adapter against Beacon's kit (adapters/testing.py): its config, every kind of message (hostile text
too, and a routed group), and real sends to a local server (each status, retries, no secret in an error).

Plain test functions: the kit runs its own event loop, so no pytest plugin and no `asyncio_mode` is needed."""

from adapters import testing as kit
from adapters.registry import AdapterRegistry
from $package import $Class

VALID = {"url": "https://hooks.example.com/in/T0K3N", "token": "s3cret-token"}


def test_beacon_finds_the_type():
    assert AdapterRegistry.discover()["$name"] is $Class


def test_config():
    kit.check_config(
        $Class,
        valid=VALID,
        invalid={
            "url": {"url": "ftp://hooks.example.com/in"},
            "token": {**VALID, "token": " "},
            "severity": {**VALID, "severity": "loud"},
        },
    )


def test_messages():
    sent = kit.check_render(kit.adapter($Class, {**VALID, "severity": "warning"}))
    assert sent["triggered"].payload["severity"] == "warning"
    assert sent["resolved"].payload["severity"] == "info"
    assert sent["resolved"].payload["title"].startswith("[Resolved]")
    grouped = kit.check_group_render(kit.adapter($Class, VALID))
    assert grouped["group_firing"].payload["severity"] == "critical"


def test_sends_and_retries():
    kit.check_retry_classification($Class, lambda base: {"url": base + "/in/T0K3N", "token": "s3cret-token"})
''',
}


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part) + "Adapter"


def files_for(name: str) -> dict[str, str]:
    """The package's files for the type `name`: path (under its directory) -> text."""
    values = {"name": name, "package": f"beacon_{name}", "Class": class_name(name), "dist": f"beacon-{name}"}
    return {Template(path).substitute(values): Template(text).substitute(values) for path, text in FILES.items()}


def check_name(name: str) -> None:
    from adapters.registry import BUILTIN

    if not NAME.fullmatch(name):
        raise click.BadParameter(
            f"{name!r}: a type name is 2 to 31 lowercase letters, digits or _, starting with a letter (e.g. acme)",
            param_hint="NAME",
        )
    if name in {a.type for a in BUILTIN}:
        raise click.BadParameter(f"{name!r} is a built-in notifier type; choose another name", param_hint="NAME")


@click.group()
def plugin() -> None:
    """Notifier plugins: a package that adds a notifier type (docs/plugins.md)."""


@plugin.command("new")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where the package's directory (beacon-NAME) is made.",
)
def new(name: str, directory: Path) -> None:
    """Write a notifier plugin package for the type NAME: an adapter, its template and its tests, ready to install
    (`pip install -e beacon-NAME`) and test (`pytest`)."""
    check_name(name)
    root = directory / f"beacon-{name}"
    if root.exists():
        raise click.ClickException(f"{root} exists already; nothing was written")
    for path, text in files_for(name).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    click.echo(f"wrote {root}/ — the `{name}` notifier type. Next, with Beacon's Python:")
    click.echo(f"  pip install -e {root}    # installs it beside Beacon (restart `beacon serve` to load it)")
    click.echo(f"  cd {root} && pytest      # the kit's checks")
