"""The `beacon` command: serve and migrate; tokens in `app.cli_tokens`; the client commands in `beacon_client.cli`.

Start-up time matters (`beacon --help`, a `beacon query` in a loop): this module and the command modules import
only click at the top; each command imports what it uses when it runs (the server side pulls in Litestar,
SQLAlchemy and Alembic, over half a second). tests/client/test_cli_imports.py keeps it so.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import TYPE_CHECKING, Any

import click

from app.cli_db import command_settings as _settings
from app.cli_db import run_db as _run_db
from app.cli_dev import dev
from app.cli_tokens import tokens_group
from app.plugin_scaffold import plugin
from beacon_client.cli import register as register_client_commands

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.settings import Settings


async def _bootstrap_admin(session: AsyncSession) -> str | None:
    """Create the first admin token when there are no tokens at all; None when some exist."""
    from sqlalchemy import text

    from app.tokens import service as tokens

    # Serialised so that two processes starting together create one token, not two.
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtext('beacon-bootstrap-token'))"))
    if await tokens.count_tokens(session):
        await session.rollback()
        return None
    created = await tokens.create_token(session, name="admin (created on first start)", scopes=["*"])
    return created.token


@click.group()
def main() -> None:
    """Beacon: a log-event store and alert router."""


@main.command()
@click.option(
    "--distributed",
    is_flag=True,
    help="Then apply the plan for Citus (docs/scaling.md): distributed, reference and local tables, settings.",
)
@click.option("--print", "print_only", is_flag=True, help="With --distributed: print the plan's SQL, change nothing.")
@click.option("--coordinator", metavar="HOST[:PORT]", help="With --distributed: register this host as the coordinator.")
@click.option(
    "--worker", "workers", metavar="HOST[:PORT]", multiple=True, help="With --distributed: add this worker node."
)
def migrate(distributed: bool, print_only: bool, coordinator: str | None, workers: tuple[str, ...]) -> None:
    """Apply the database migrations (and, with --distributed, the Citus plan)."""
    if (print_only or coordinator or workers) and not distributed:
        raise click.UsageError("--print, --coordinator and --worker go with --distributed")
    if distributed:
        from app.db.citus_plan import parse_node, plan_sql, plan_statements

        try:
            nodes = (parse_node(coordinator) if coordinator else None, [parse_node(w) for w in workers])
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        if print_only:
            click.echo(plan_sql(*nodes), nl=False)
            return
    from app.db.migrate import upgrade

    settings = _settings()
    url = settings.database_url or ""
    if distributed:
        import asyncio

        from app.db.distribute import NotDistributable, apply_plan, citus_version

        try:
            version = asyncio.run(citus_version(url))  # before the migrations: without citus, nothing changes
        except NotDistributable as exc:
            raise click.ClickException(str(exc)) from None
    upgrade(url)
    click.echo("migrations applied")
    if distributed:
        asyncio.run(apply_plan(url, plan_statements(*nodes)))
        click.echo(f"Citus plan applied (citus {version}); `beacon migrate --distributed --print` shows it")


# Connections one serve process may open at most (docs/scaling.md): requests and jobs 20, token checks and the
# console 10, queries 10, rate limits 4.
CONNECTIONS_PER_PROCESS = 44
# Left for everything else: migrations, `beacon tokens`, psql, a second serve while the first stops.
CONNECTIONS_SPARE = 10


async def _max_connections(session: AsyncSession) -> int:
    from sqlalchemy import text

    return int((await session.execute(text("SHOW max_connections"))).scalar_one())


def default_workers(max_connections: int, cpus: int) -> int:
    """One process per CPU, as many as the database's connections allow (its `max_connections`, 100 unless
    raised): a process that cannot connect answers 503s, so fewer processes serve better than too many."""
    fit = max(1, (max_connections - CONNECTIONS_SPARE) // CONNECTIONS_PER_PROCESS)
    if fit < cpus:
        click.echo(
            f"Serving with {fit} worker processes for {cpus} CPUs: PostgreSQL's max_connections ({max_connections}) "
            f"allows {fit} at up to {CONNECTIONS_PER_PROCESS} connections each. Raise it (or put PgBouncer in "
            "front) and pass --workers to use every CPU.",
            err=True,
        )
    return min(cpus, fit)


def _cpu_count() -> int:
    """The CPUs this process may run on (a container's or taskset's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(min=1),
    help="Server processes on the port  [default: the number of CPUs]",
)
@click.option(
    "--dev",
    is_flag=True,
    help="Development mode: notifiers may send to loopback and private addresses (a receiver on this machine).",
)
def serve(host: str, port: int, workers: int | None, dev: bool) -> None:
    """Run the API, the monitor loop and the delivery worker.

    With several processes, each runs the API and every background job: they claim their work with FOR UPDATE
    SKIP LOCKED or advisory try-locks (monitors; retention takes an advisory lock), so the work is shared and
    nothing is done twice.
    """
    import uvicorn

    from app.db.migrate import upgrade
    from app.logs import configure_logging

    # Links (notifications, error docs, the console) name the address served, unless BEACON_BASE_URL says
    # otherwise (behind a proxy, say).
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    os.environ.setdefault(
        "BEACON_BASE_URL", f"http://{'[' + shown_host + ']' if ':' in shown_host else shown_host}:{port}"
    )
    if dev:
        os.environ["BEACON_DEV"] = "true"  # read by Settings, here and in every worker process
    settings = _settings()
    configure_logging(settings.log_level, settings.log_format)
    upgrade(settings.database_url or "")
    admin = _run_db(settings, _bootstrap_admin)
    if admin:
        click.echo("Created the first admin token. It is shown this once; keep it somewhere safe:")
        click.echo(admin)
    if workers is None:
        workers = default_workers(_run_db(settings, _max_connections), _cpu_count())
    if settings.dev_mode:
        _say_dev_mode(host)
    # Worker processes rebuild their settings from the environment: hand them what was resolved here.
    os.environ["BEACON_DATABASE_URL"] = settings.database_url or ""
    os.environ["BEACON_SECRET_KEY"] = settings.secret_key or ""
    if workers > 1:
        if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
            # Each worker counts in files of this directory and a scrape of /metrics adds them all up
            # (app/metrics.py); the counts are this run's, so the directory goes when serve ends.
            metrics_dir = tempfile.mkdtemp(prefix="beacon-metrics-")
            atexit.register(shutil.rmtree, metrics_dir, ignore_errors=True)
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        if not settings.redis_url and "BEACON_RATE_LIMIT_STORE" not in os.environ:
            # Budgets in each process's memory would give a token N times its limit: share them in PostgreSQL.
            os.environ["BEACON_RATE_LIMIT_STORE"] = "postgres"
        # A worker answers the supervisor's health pings from a thread; while it imports and builds the app on a
        # busy machine that took over uvicorn's default 5 s, and the supervisor killed and restarted it, again
        # and again (seen under a parallel test run).
        uvicorn.run(
            "app.asgi:create_app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            timeout_worker_healthcheck=60,
            log_config=None,  # each worker configures logging as this process did (app.asgi.create_app_from_env)
            **uvicorn_options(settings),
        )
    else:
        from app.asgi import create_app
        from app.gctune import settle_heap

        app = create_app(settings)
        settle_heap()
        uvicorn.run(app, host=host, port=port, log_config=None, **uvicorn_options(settings))


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """What every `serve` gives uvicorn besides the app and the address: forwarded headers are believed only from
    `BEACON_TRUSTED_PROXIES` (uvicorn's own default trusts 127.0.0.1, so any local client could pick the address
    the console's sign-in throttle counts it as); access lines are Beacon's own (app/request_log.py)."""
    return {
        "proxy_headers": bool(settings.trusted_proxies),
        "forwarded_allow_ips": settings.trusted_proxies,
        "access_log": False,
    }


def _say_dev_mode(host: str) -> None:
    """Loudly, on stderr: a development server must never pass for a production one."""
    exposed = host not in ("127.0.0.1", "localhost", "::1")
    lines = [
        "DEVELOPMENT MODE (beacon serve --dev, or BEACON_DEV=true)",
        "Notifiers may send to loopback and private addresses: this machine and its network.",
        "Production stays strict: serve without --dev there.",
    ]
    if exposed:
        lines.append(f"Listening on {host}: any notifiers:write token can make Beacon call into your network.")
    width = max(len(line) for line in lines)
    bar = "!" * (width + 4)
    banner = "\n".join([bar, *(f"! {line.ljust(width)} !" for line in lines), bar])
    click.secho(banner, err=True, fg="yellow", bold=True)


main.add_command(tokens_group)  # through the API with a token, or straight in the local database
main.add_command(plugin)  # `beacon plugin new NAME`: a notifier plugin package
main.add_command(dev)  # `beacon dev sample|secret|receiver`: trying Beacon on this machine
register_client_commands(main)  # annotate, ingest, query, export, monitors …: they talk HTTP to a running Beacon


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
