"""Shared fixtures: a real PostgreSQL (migrated once per worker, cloned per test), the real app, tokens.

The server is BEACON_TEST_DATABASE_URL when set (CI points it at a fresh database on the machine's
PostgreSQL), otherwise an embedded PostgreSQL (pgserver) in a temporary directory of the run, stopped when the run
ends. Each test gets a database of its own in the state of a migrated template (tests/databases.py), so tests
start clean and can run in parallel (pytest -n).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.asgi import create_app
from app.db.engine import make_engine, make_sessionmaker
from app.db.migrate import upgrade
from app.logs import configure_logging
from app.settings import Settings, asyncpg_dsn, normalize_database_url
from app.tokens.service import create_token
from tests.app_pool import AppPool
from tests.databases import Clones
from tests.databases import with_database as _with_database
from tests.offline_dns import offline_resolve
from tests.receivers import Sink
from tests.servers import InThread, served_app

T = TypeVar("T")
_RECORDER = pytest.StashKey[Any]()
IN_CI = os.environ.get("CI", "").lower() == "true"


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, even while a test's event loop exists."""

    async def wrapper() -> T:
        return await coro

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, wrapper()).result()


async def _admin(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    url = os.environ.get("BEACON_TEST_DATABASE_URL")
    if url:
        yield normalize_database_url(url)
        return
    from app.db.embedded import embedded_running, start_embedded, stop_embedded

    # One server per test run in a directory of its own (the xdist workers of a run agree on it through the run's
    # id); each worker registers with it and the last one to finish stops it and removes the directory: nothing
    # keeps running after the run. Not under pytest's basetemp: PostgreSQL runs as another user when the tests
    # run as root, and every pytest start makes pytest-of-<user> private again (0700).
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    run_dir = Path(tempfile.gettempdir()) / f"beacon-test-pg-{run_id}" if run_id else Path(tempfile.mkdtemp("-pg"))
    run_dir.mkdir(exist_ok=True)
    yield start_embedded(run_dir)
    stop_embedded(run_dir)
    if not embedded_running(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def db_prefix(pg_server_url: str, worker_id: str) -> str:
    base = urlsplit(pg_server_url).path.lstrip("/") or "postgres"
    return f"{base}_{worker_id}_{os.getpid()}"[:50]


@pytest.fixture(scope="session")
def template_database(pg_server_url: str, db_prefix: str) -> Iterator[str]:
    name = f"{db_prefix}_tmpl"
    run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'))
    upgrade(_with_database(pg_server_url, name))
    yield name
    run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def admin_token_in(database_url: str) -> str:
    """A new `*` token in the database at `database_url` (for tests that run the app on a database of their own)."""
    engine = make_engine(database_url, pool_size=1)
    try:
        async with make_sessionmaker(engine)() as session:
            return (await create_token(session, name="admin", scopes=["*"])).token
    finally:
        await engine.dispose()


@contextmanager
def served_on_a_clone(pg_server_url: str, clones: Clones, data_dir: Path) -> Iterator[tuple[str, str, str]]:
    """The app under uvicorn in a thread, on a database of its own from the pool, with an admin token, for a
    module's tests to share: (its URL, the token, the database's URL)."""
    name = clones.take()
    database_url = _with_database(pg_server_url, name)
    try:
        token = run_sync(admin_token_in(database_url))
        settings = Settings(
            database_url=database_url,
            data_dir=data_dir,
            base_url="http://testserver.local",
            secret_key="module-secret-key",
            run_scheduler=False,
        )
        with InThread(create_app(settings)) as server:
            yield server.url, token, database_url
    finally:
        clones.give_back(name)


@pytest.fixture(scope="session")
def clones(pg_server_url: str, db_prefix: str, template_database: str) -> Iterator[Clones]:
    pool = Clones(pg_server_url, template_database, db_prefix)
    yield pool
    pool.close()


@pytest.fixture
def database_url(pg_server_url: str, clones: Clones) -> Iterator[str]:
    """A fresh, migrated database for this test alone."""
    name = clones.take()
    yield _with_database(pg_server_url, name)
    clones.give_back(name)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        base_url="http://testserver.local",
        secret_key="test-secret-key",
        run_scheduler=False,
    )


@pytest.fixture
def make_app(settings: Settings) -> Callable[..., Litestar]:
    """Build the real app on `base` (the test's settings when not given); keyword arguments override fields."""

    def build(base: Settings | None = None, /, **overrides: Any) -> Litestar:
        return create_app(replace(base or settings, **overrides), resolve=offline_resolve)

    return build


@pytest.fixture(scope="session")
def app_pool() -> AppPool:
    return AppPool(resolve=offline_resolve)


AppClient = Callable[..., AbstractAsyncContextManager[AsyncTestClient[Litestar]]]


@pytest.fixture
def app_client(settings: Settings, app_pool: AppPool) -> AppClient:
    """Litestar's test client on the real app for `base` (the test's settings when not given), keyword arguments
    overriding fields: built, or one an earlier test of this worker built for equal settings and stopped
    (tests/app_pool.py). Apps a test builds itself (`make_app`: served by uvicorn, wrapped) are always new."""

    @asynccontextmanager
    async def open_client(
        base: Settings | None = None, /, **overrides: Any
    ) -> AsyncIterator[AsyncTestClient[Litestar]]:
        app = app_pool.take(replace(base or settings, **overrides))
        try:
            async with AsyncTestClient(app=app) as c:
                yield c
        finally:
            app_pool.give_back(app)

    return open_client


@pytest.fixture
async def client(app_client: AppClient) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """The app on the test's settings through Litestar's test client (`app_client`)."""
    async with app_client() as c:
        yield c


@pytest.fixture
async def served(make_app: Callable[..., Litestar]) -> AsyncIterator[str]:
    """The app behind a real uvicorn server on this event loop (the test client buffers whole bodies)."""
    async with served_app(make_app()) as url:
        yield url


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """The test's own way into its database (the app's engine lives on the test client's event loop)."""
    engine = make_engine(database_url, pool_size=2)
    yield make_sessionmaker(engine)
    await engine.dispose()


TokenFactory = Callable[..., Awaitable[str]]


@pytest.fixture
def make_token(db: async_sessionmaker[AsyncSession]) -> TokenFactory:
    """Create a token in the test's database (as the CLI would) and return its text."""

    async def make(scopes: list[str] | None = None, **kwargs: Any) -> str:
        async with db() as session:
            created = await create_token(session, name=kwargs.pop("name", "test"), scopes=scopes or ["*"], **kwargs)
        return created.token

    return make


@pytest.fixture
async def admin_token(make_token: TokenFactory) -> str:
    return await make_token(["*"], name="admin")


@pytest.fixture
def auth(admin_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {admin_token}"}


def _redis_reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("BEACON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    if not _redis_reachable(url):
        message = f"Redis is not reachable at {url}"
        if IN_CI:
            pytest.fail(f"{message}; under CI=true Redis-backed tests must run")
        pytest.skip(message)
    return url


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    """pytest-httpserver on 127.0.0.1 (a free port): notification receivers stay on loopback."""
    return ("127.0.0.1", 0)


@pytest.fixture
def smtp() -> Iterator[tuple[Any, Sink]]:
    """A real SMTP server (aiosmtpd) on 127.0.0.1 keeping every message it accepts."""
    from aiosmtpd.controller import Controller

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield controller, sink
    finally:
        controller.stop()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-sql",
        metavar="DIR",
        default=os.environ.get("BEACON_TEST_RECORD_SQL") or None,
        help="record every SQL statement sent and judge it by the Citus plan (tests/sqlrecorder.py); each process "
        "writes DIR/statements-<worker>.json (also: BEACON_TEST_RECORD_SQL=DIR)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--record-sql"):
        from tests.sqlrecorder import Recorder

        recorder = Recorder()
        recorder.start()
        config.stash[_RECORDER] = recorder


def pytest_unconfigure(config: pytest.Config) -> None:
    recorder = config.stash.get(_RECORDER, None)
    if recorder is None:
        return
    recorder.stop()
    from tests.sqlrecorder import write_report

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    write_report(recorder, Path(config.getoption("--record-sql")) / f"statements-{worker}.json")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: three workers per two CPUs. A third of a worker's time in the suite is spent waiting (for the
    subprocesses it starts, for timers, for PostgreSQL), which the third worker fills: on 2 cores, 7:42 with two
    workers, 7:03 with three (bench/RESULTS.md)."""
    return max(1, len(os.sched_getaffinity(0)) * 3 // 2)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `long` first (a stable sort: the rest keep their order): one that starts last ends a
    parallel run alone (the README's walkthrough, 40 s, did)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI=true a skipped test is a failure: a skip there means a service the tests need was missing."""
    if not IN_CI:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write_line(f"CI=true: {len(skipped)} test(s) skipped; failing the run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def captured_logs() -> Iterator[Callable[[str], io.StringIO]]:
    """The root logger as `beacon serve` configures it (app/logs.py), in the format asked, writing to a buffer;
    the previous setup restored afterwards."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    buffer = io.StringIO()

    def configure(fmt: str) -> io.StringIO:
        configure_logging("info", fmt)
        root.handlers[0].setStream(buffer)  # type: ignore[attr-defined]
        return buffer

    yield configure
    root.handlers[:], level = saved
    root.setLevel(level)
    logging.getLogger("uvicorn.access").disabled = False
