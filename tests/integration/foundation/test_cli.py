"""The `beacon` command end to end, as a user runs it: tokens, migrate, and serve (embedded PostgreSQL too)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

BEACON = str(Path(sys.executable).parent / "beacon")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEACON_")}
    env.update(extra)
    return env


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BEACON, *args], env=env, capture_output=True, text=True, timeout=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_tokens_create_list_revoke(database_url, tmp_path):
    env = _env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path))
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
    env = _env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path))
    bad_scope = _run("tokens", "create", "--name", "x", "--scope", "everything", env=env)
    assert bad_scope.returncode != 0 and "everything" in bad_scope.stderr
    bad_expiry = _run("tokens", "create", "--name", "x", "--expires-in", "soon", env=env)
    assert bad_expiry.returncode != 0 and "soon" in bad_expiry.stderr
    unknown = _run("tokens", "revoke", "tok_404", env=env)
    assert unknown.returncode != 0 and "tok_404" in unknown.stderr


def test_migrate_accepts_plain_postgresql_url(database_url, tmp_path):
    plain = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    done = _run("migrate", env=_env(BEACON_DATABASE_URL=plain, BEACON_DATA_DIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr


class Server:
    """`beacon serve` in a subprocess, its output collected by a thread."""

    def __init__(self, env: dict[str, str], port: int, *extra: str) -> None:
        self.port = port
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [BEACON, "serve", "--port", str(port), *extra],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def token(self) -> str | None:
        return next((line.strip() for line in self.lines if line.strip().startswith("bcn_")), None)

    def wait_ready(self, timeout: float = 120) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("beacon serve exited:\n" + "\n".join(self.lines))
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError("beacon serve did not become ready:\n" + "\n".join(self.lines))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def test_serve_on_embedded_postgres_prints_a_working_token():
    # Its own directory, not tmp_path: pytest prunes old tmp_path trees, which would pull the data from under a
    # server that another pytest process on the machine started.
    data_dir = Path(tempfile.mkdtemp(prefix="beacon-embedded-")) / "beacon-data"
    port = _free_port()
    try:
        server = Server(_env(BEACON_DATA_DIR=str(data_dir)), port).wait_ready()
        token = server.token
        try:
            assert token, "the first start must print an admin token"
            r = httpx.get(f"http://127.0.0.1:{port}/v1/tokens", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200 and len(r.json()["data"]) == 1
            assert (data_dir / "secret_key").exists()
        finally:
            server.stop()
        # A second start reuses the database and its tokens, and prints no new token.
        server = Server(_env(BEACON_DATA_DIR=str(data_dir)), port).wait_ready()
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
    env = _env(BEACON_DATABASE_URL=database_url, BEACON_DATA_DIR=str(tmp_path))
    server = Server(env, _free_port(), "--workers", "2").wait_ready(60)
    try:
        r = httpx.get(f"http://127.0.0.1:{server.port}/v1/tokens", headers={"Authorization": f"Bearer {server.token}"})
        assert r.status_code == 200
    finally:
        server.stop()
