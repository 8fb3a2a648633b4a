"""`beacon tokens create|list|revoke`: through the API with an admin token (`--token` / BEACON_TOKEN, at `--url` /
BEACON_URL), from anywhere; or, with no token, straight in the database of the Beacon beside it (BEACON_DATABASE_URL,
or the `.beacon` directory of BEACON_DATA_DIR), which is how the first token is made.

Imports only click at the top (see app/cli.py): the API path loads the client, the direct path the server side.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from beacon_client.cli.common import DEFAULT_URL
from beacon_client.cli.durations import DURATION

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.tokens.service import TokenOut
    from beacon_client import Client

F = TypeVar("F", bound=Callable[..., Any])

NO_WAY_IN = (
    "no API token, and no Beacon here to reach directly: pass --token (or set BEACON_TOKEN) with a token that has "
    "`tokens:write`, and --url (or BEACON_URL) when Beacon is not at {url}; or run this beside the `.beacon` "
    "directory of a local Beacon (BEACON_DATA_DIR), or with BEACON_DATABASE_URL, to make the first token"
)


def _api_options(func: F) -> F:
    func = click.option("--token", envvar="BEACON_TOKEN", help="An admin API token [env BEACON_TOKEN].")(func)
    return click.option(
        "--url",
        envvar="BEACON_URL",
        default=DEFAULT_URL,
        show_default=True,
        help="Beacon's address, when a token is given [env BEACON_URL].",
    )(func)


def _direct() -> bool:
    """True when the command goes straight to the database: no token given, and a local Beacon is there to reach."""
    ctx = click.get_current_context()
    if ctx.params.get("token"):
        return False
    if ctx.get_parameter_source("url") == ParameterSource.COMMANDLINE:
        raise click.UsageError("--url talks to Beacon's API, which needs a token: pass --token or set BEACON_TOKEN")
    local = os.environ.get("BEACON_DATABASE_URL") or Path(os.environ.get("BEACON_DATA_DIR") or ".beacon").is_dir()
    if not local:
        raise click.UsageError(NO_WAY_IN.format(url=ctx.params.get("url") or DEFAULT_URL))
    return True


def _client(url: str, token: str) -> Client:
    from beacon_client.cli.common import make_client

    return make_client(url, token)


def _when(value: datetime | str | None) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


def _line(
    id_: str, name: str, scopes: Sequence[str], datasets: Sequence[str] | None, expires: Any, revoked: Any
) -> str:
    state = "revoked" if revoked else "active"
    shown = ",".join(datasets) if datasets else "*"
    return f"{id_}\t{state}\t{name}\tscopes={','.join(scopes)}\tdatasets={shown}\texpires={_when(expires) or '-'}"


@click.group(name="tokens")
def tokens_group() -> None:
    """Manage API tokens: through the API with an admin token, or (no token) in the local Beacon's database."""


@tokens_group.command("create")
@click.option("--name", required=True)
@click.option("--scope", "scopes", multiple=True, help="Repeat for several; default `*` (all).")
@click.option("--dataset", "datasets", multiple=True, help="Limit the token to these datasets (nothing of others).")
@click.option("--expires-in", "expires_in", type=DURATION, default=None, help="e.g. 30d, 12h, 2w")
@_api_options
def tokens_create(
    name: str,
    scopes: tuple[str, ...],
    datasets: tuple[str, ...],
    expires_in: timedelta | None,
    url: str,
    token: str | None,
) -> None:
    """Create a token; its text is printed alone on the last line.

    Through the API the new token is the admin token's child: it never outgrows it, and revoking that one
    revokes it too. Made directly (no token), it stands alone."""
    from datetime import UTC

    expires_at = datetime.now(UTC) + expires_in if expires_in else None
    wanted = list(scopes) or ["*"]
    if _direct():
        created: Any = _direct_create(name, wanted, list(datasets) or None, expires_at)
    else:
        from beacon_client.cli.common import reporting

        with reporting(url), _client(url, token or "") as client:
            created = client.create_token(name, wanted, datasets=list(datasets) or None, expires_at=expires_at)
    click.echo(f"id: {created.id}  scopes: {' '.join(created.scopes)}  expires: {_when(created.expires_at) or 'never'}")
    click.echo(created.token)


@tokens_group.command("list")
@_api_options
def tokens_list(url: str, token: str | None) -> None:
    """List tokens, oldest first (never their text): id, state, name, scopes, datasets, expiry."""
    if _direct():
        for t in _direct_list():
            click.echo(_line(t.id, t.name, t.scopes, t.datasets, t.expires_at, t.revoked_at))
        return
    from beacon_client.cli.common import reporting

    with reporting(url), _client(url, token or "") as client:
        found = sorted(client.iterate(client.list_tokens, limit=100), key=lambda t: (t.created_at, t.id))
    for listed in found:
        click.echo(_line(listed.id, listed.name, listed.scopes, listed.datasets, listed.expires_at, listed.revoked_at))


@tokens_group.command("revoke")
@click.argument("token_id")
@_api_options
def tokens_revoke(token_id: str, url: str, token: str | None) -> None:
    """Revoke a token by id, and every token it made."""
    if _direct():
        from app.cli_db import command_settings, run_db
        from app.tokens import service as tokens

        run_db(command_settings(), lambda s: tokens.revoke_token(s, token_id))
    else:
        from beacon_client.cli.common import reporting

        with reporting(url), _client(url, token or "") as client:
            client.revoke_token(token_id)
    click.echo(f"revoked {token_id}")


def _direct_create(name: str, scopes: list[str], datasets: list[str] | None, expires_at: datetime | None) -> Any:
    from app.cli_db import command_settings, run_db
    from app.tokens import service as tokens

    return run_db(
        command_settings(),
        lambda s: tokens.create_token(s, name=name, scopes=scopes, datasets=datasets, expires_at=expires_at),
    )


def _direct_list() -> list[TokenOut]:
    from app.cli_db import command_settings, run_db
    from app.tokens import service as tokens

    async def all_tokens(session: AsyncSession) -> list[TokenOut]:
        return [tokens.to_out(t) for t in await tokens.all_tokens(session)]

    return run_db(command_settings(), all_tokens)
