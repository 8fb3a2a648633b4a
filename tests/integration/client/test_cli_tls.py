"""The client over HTTPS: it verifies the server's certificate with the system's authorities, or the ones
`SSL_CERT_FILE` names (as httpx does), and refuses one it cannot verify."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from tests.servers import BEACON, clean_env


def _tokens_list(cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BEACON, "tokens", "list"], cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=120
    )


async def test_the_cli_refuses_an_unknown_certificate_and_trusts_ssl_cert_file(served_tls, admin_token, tmp_path):
    url, _ = served_tls
    there = {"BEACON_URL": url, "BEACON_TOKEN": admin_token}
    refused = await asyncio.to_thread(_tokens_list, tmp_path, **there)
    assert refused.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr, refused.stderr
    trusted = await asyncio.to_thread(_tokens_list, tmp_path, SSL_CERT_FILE=str(tmp_path / "cert.pem"), **there)
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.startswith("tok_"), trusted.stdout
