"""The `beacon` command end to end, as a user runs it: tokens, migrate, and serve (embedded PostgreSQL too)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx

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


def test_serve_on_embedded_postgres_prints_a_working_token():
    # Its own directory, not tmp_path: pytest prunes old tmp_path trees, which would pull the data from under a
    # server that another pytest process on the machine started.
    data_dir = Path(tempfile.mkdtemp(prefix="beacon-embedded-")) / "beacon-data"
    port = free_port()
    try:
        server = Server(clean_env(BEACON_DATA_DIR=str(data_dir)), port).wait_ready()
        token = server.token
        try:
            assert token, "the first start must print an admin token"
            r = httpx.get(f"http://127.0.0.1:{port}/v1/tokens", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200 and len(r.json()["data"]) == 1
            assert (data_dir / "secret_key").exists()
        finally:
            server.stop()
        # A second start reuses the database and its tokens, and prints no new token.
        server = Server(clean_env(BEACON_DATA_DIR=str(data_dir)), port).wait_ready()
        try:
            assert server.token is None
            r = httpx.get(f"http://127.0.0.1:{port}/v1/tokens", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200
        finally:
            server.stop()
    finally:
        if (data_dir / "pg").exists():
            import pgserver

            pgserver.get_server(data_dir / "pg", cleanup_mode=None).cleanup()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


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
