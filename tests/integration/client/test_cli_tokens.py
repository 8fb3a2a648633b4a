"""`beacon tokens …` from anywhere: through the API with an admin token (--url/BEACON_URL, --token/BEACON_TOKEN),
from a directory with no `.beacon` and no database URL; the direct path (no token, a local Beacon) is
tests/integration/foundation/test_cli.py's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.integration.client.conftest import Done, Served
from tests.servers import BEACON, clean_env


def _beacon(cwd: Path, *args: str, **env: str) -> Done:
    done = subprocess.run([BEACON, *args], cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=120)
    return Done(done.returncode, done.stdout, done.stderr)


def test_tokens_through_the_api_from_anywhere(served: Served, tmp_path: Path):
    elsewhere = {"BEACON_URL": served.url, "BEACON_TOKEN": served.token}
    made = _beacon(
        tmp_path,
        "tokens",
        "create",
        "--name",
        "ci",
        "--scope",
        "query",
        "--dataset",
        "web",
        "--expires-in",
        "1d",
        **elsewhere,
    )
    assert made.returncode == 0, made.stderr
    head, token = made.stdout.splitlines()
    assert token.startswith("bcn_") and head.startswith("id: tok_") and "scopes: query" in head
    assert "expires: never" not in head
    token_id = head.split()[1]
    assert not (tmp_path / ".beacon").exists()  # nothing local was started or made

    # The options work as the variables do; the new token is the admin token's child (issuer).
    listed = _beacon(tmp_path, "tokens", "list", "--url", served.url, "--token", served.token)
    assert listed.returncode == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if row.startswith(token_id))
    assert line.split("\t")[1:5] == ["active", "ci", "scopes=query", "datasets=web"] and token not in listed.stdout
    with served.client() as beacon:
        assert beacon.get_token(token_id).name == "ci"
    auth = {"Authorization": f"Bearer {token}"}
    assert httpx.post(f"{served.url}/v1/query", headers=auth, json={"apl": "['web'] | count"}).status_code != 401

    revoked = _beacon(tmp_path, "tokens", "revoke", token_id, **elsewhere)
    assert revoked.returncode == 0 and revoked.stdout.strip() == f"revoked {token_id}"
    assert "\trevoked\tci\t" in _beacon(tmp_path, "tokens", "list", **elsewhere).stdout
    assert httpx.post(f"{served.url}/v1/query", headers=auth, json={"apl": "['web'] | count"}).status_code == 401


def test_tokens_say_what_is_missing(served: Served, tmp_path: Path):
    # No token and no local Beacon: a usage error that says both ways in (and starts no database here).
    nowhere = _beacon(tmp_path, "tokens", "list")
    assert nowhere.returncode == 2 and "pass --token (or set BEACON_TOKEN)" in nowhere.stderr
    assert "BEACON_DATA_DIR" in nowhere.stderr and not (tmp_path / ".beacon").exists()
    url_alone = _beacon(tmp_path, "tokens", "list", "--url", served.url)
    assert url_alone.returncode == 2 and "needs a token" in url_alone.stderr
    # The API's errors, as every client command reports them.
    query_only = _beacon(
        tmp_path, "tokens", "create", "--name", "x", BEACON_URL=served.url, BEACON_TOKEN=_limited_token(served)
    )
    assert query_only.returncode == 1 and query_only.stderr.startswith("error: insufficient_scope: ")
    unknown = _beacon(tmp_path, "tokens", "revoke", "tok_404", BEACON_URL=served.url, BEACON_TOKEN=served.token)
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: not_found: ")


def _limited_token(served: Served) -> str:
    with served.client() as beacon:
        return beacon.create_token("reader", ["query"]).token
