"""The `beacon` command end to end, as a user runs it: tokens, migrate, and serve (embedded PostgreSQL too)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from app.db.embedded import embedded_running
from tests.servers import BEACON, Server, clean_env, free_port


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BEACON, *args], env=env, capture_output=True, text=True, timeout=120)


def test_tokens_create_list_revoke(database_url, tmp_path):
    env = clean_env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path))
    made = _run(
        "tokens",
        "create",
        "--name",
        "deploys",
        "--scope",
        "annotations:write",
        "--dataset",
        "web",
        "--expires-in",
        "30d",
        env=env,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    assert token.startswith("bcn_") and len(token) == 44
    listed = _run("tokens", "list", env=env)
    assert listed.returncode == 0 and "deploys" in listed.stdout and token not in listed.stdout
    token_id = listed.stdout.split()[0]
    assert token_id.startswith("tok_")
    revoked = _run("tokens", "revoke", token_id, env=env)
    assert revoked.returncode == 0
    assert "revoked" in _run("tokens", "list", env=env).stdout


def test_tokens_create_refuses_bad_input(database_url, tmp_path):
    env = clean_env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path))
    bad_scope = _run("tokens", "create", "--name", "x", "--scope", "everything", env=env)
    assert bad_scope.returncode != 0 and "everything" in bad_scope.stderr
    bad_expiry = _run("tokens", "create", "--name", "x", "--expires-in", "soon", env=env)
    assert bad_expiry.returncode != 0 and "soon" in bad_expiry.stderr
    unknown = _run("tokens", "revoke", "tok_404", env=env)
    assert unknown.returncode != 0 and "tok_404" in unknown.stderr


def test_migrate_accepts_plain_postgresql_url(database_url, tmp_path):
    plain = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    done = _run("migrate", env=clean_env(BEACON_DATABASE_URL=plain, BEACON_DATA_DIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr


def _postmaster(data_dir: Path) -> int | None:
    """The pid of the PostgreSQL running on data_dir/pg, None when none runs."""
    return int((data_dir / "pg" / "postmaster.pid").read_text().split()[0]) if embedded_running(data_dir) else None


def _wait_stopped(data_dir: Path, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while embedded_running(data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not embedded_running(data_dir)


@contextmanager
def embedded_data_dir() -> Iterator[Path]:
    # Its own directory, not tmp_path: pytest prunes old tmp_path trees, which would pull the data from under a
    # server that another pytest process on the machine started. Whatever happens, no PostgreSQL is left running.
    data_dir = Path(tempfile.mkdtemp(prefix="beacon-embedded-")) / "beacon-data"
    try:
        yield data_dir
    finally:
        pid = _postmaster(data_dir)
        if pid is not None:
            os.kill(pid, signal.SIGINT)  # PostgreSQL's fast shutdown
            _wait_stopped(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)


def test_serve_on_embedded_postgres_prints_a_working_token_and_stops_it():
    with embedded_data_dir() as data_dir:
        env = clean_env(BEACON_DATA_DIR=str(data_dir))
        port = free_port()
        server = Server(env, port).wait_ready()
        token = server.token
        assert token, "the first start must print an admin token"
        r = httpx.get(f"http://127.0.0.1:{port}/v1/tokens", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and len(r.json()["data"]) == 1
        assert (data_dir / "secret_key").exists() and embedded_running(data_dir)
        assert server.interrupt() == 0  # Ctrl-C stops serve and the PostgreSQL it started
        assert _wait_stopped(data_dir, timeout=5)
        assert not any("XDG_RUNTIME_DIR" in line for line in server.lines)  # no RuntimeDirWarning

        # A second start reuses the database and its tokens, and prints no new token; SIGTERM stops it all too.
        server = Server(env, port).wait_ready()
        try:
            assert server.token is None
            r = httpx.get(f"http://127.0.0.1:{port}/v1/tokens", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200
        finally:
            server.stop()
        assert _wait_stopped(data_dir, timeout=5)


@pytest.mark.long
def test_a_second_serve_reuses_the_running_embedded_postgres():
    with embedded_data_dir() as data_dir:
        env = clean_env(BEACON_DATA_DIR=str(data_dir))
        first = Server(env, free_port()).wait_ready()
        postgres = _postmaster(data_dir)
        second = Server(env, free_port()).wait_ready()
        assert _postmaster(data_dir) == postgres  # reused, not a second server on the same data
        assert second.token is None

        # A command that ends while the servers run leaves their PostgreSQL alone.
        listed = _run("tokens", "list", env=env)
        assert listed.returncode == 0 and "admin" in listed.stdout and "XDG_RUNTIME_DIR" not in listed.stderr
        assert _postmaster(data_dir) == postgres

        assert second.interrupt() == 0  # the first still uses it
        assert _postmaster(data_dir) == postgres
        assert httpx.get(f"http://127.0.0.1:{first.port}/readyz").status_code == 200

        first.proc.kill()  # SIGKILL: it cannot let go; the next process forgets it
        first.proc.wait(10)
        third = Server(env, free_port()).wait_ready()
        assert _postmaster(data_dir) == postgres
        assert third.interrupt() == 0
        assert _wait_stopped(data_dir, timeout=5)


def test_a_command_on_its_own_stops_the_postgresql_it_started():
    with embedded_data_dir() as data_dir:
        env = clean_env(BEACON_DATA_DIR=str(data_dir))
        done = _run("migrate", env=env)
        assert done.returncode == 0, done.stderr
        assert "XDG_RUNTIME_DIR" not in done.stderr
        assert not embedded_running(data_dir)


def test_serve_with_two_workers_on_a_database_url(database_url, tmp_path):
    # Without Redis, the two processes share each token's budget through PostgreSQL.
    env = clean_env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path), BEACON_RATE_LIMIT_READ="12")
    server = Server(env, free_port(), "--workers", "2").wait_ready(60)
    try:
        auth = {"Authorization": f"Bearer {server.token}"}
        statuses = []
        for _ in range(20):  # a new connection each: the kernel hands them to either process
            statuses.append(httpx.get(f"http://127.0.0.1:{server.port}/v1/tokens", headers=auth).status_code)
        assert statuses == [200] * 12 + [429] * 8
    finally:
        server.stop()
