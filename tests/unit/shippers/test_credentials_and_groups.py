"""The shippers' credential forms (app/auth.py) and their rate-limit group (app/ratelimit.py)."""

from __future__ import annotations

import base64

import pytest

from app.auth_middleware import _bearer, shipper_path
from app.errors import BeaconError
from app.ratelimit import group_for

TOKEN = "bcn_" + "x" * 40


def _scope(path: str, authorization: str) -> dict:
    return {"path": path, "headers": [(b"authorization", authorization.encode())]}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN}",
        f"Basic {_b64('elastic:' + TOKEN)}",
        f"Basic {_b64(':' + TOKEN)}",
        f"Basic {_b64(TOKEN + ':')}",  # the token as the user, no password
        f"ApiKey {TOKEN}",
        f"ApiKey {_b64('beacon:' + TOKEN)}",  # Elastic's encoded id:key
    ],
)
def test_shipper_paths_take_the_forms_their_clients_send(authorization):
    for path in ("/v1/logs", "/v1/elastic", "/v1/elastic/_bulk", "/v1/loki/api/v1/push"):
        assert _bearer(_scope(path, authorization)) == TOKEN


@pytest.mark.parametrize("authorization", [f"Basic {_b64('elastic:' + TOKEN)}", f"ApiKey {TOKEN}"])
def test_other_paths_take_bearer_only(authorization):
    with pytest.raises(BeaconError) as err:
        _bearer(_scope("/v1/ingest/web", authorization))
    assert err.value.code == "missing_token"
    assert TOKEN not in err.value.message


@pytest.mark.parametrize("authorization", ["Basic !!!", f"Basic {_b64('no colon')}", "Basic ", "ApiKey %%%"])
def test_unreadable_credentials_are_missing_and_never_echoed(authorization):
    with pytest.raises(BeaconError) as err:
        _bearer(_scope("/v1/elastic/_bulk", authorization))
    assert err.value.code == "missing_token"
    assert authorization.split(" ", 1)[-1] not in err.value.message or not authorization.split(" ", 1)[-1]


def test_shipper_paths():
    assert shipper_path("/v1/logs") and shipper_path("/v1/elastic") and shipper_path("/v1/loki/api/v1/push")
    assert not shipper_path("/v1/logs2") and not shipper_path("/v1/elasticsearch") and not shipper_path("/v1/ingest/x")


def test_the_shippers_ingest_counts_as_ingest():
    assert group_for("POST", "/v1/logs") == "ingest"
    assert group_for("POST", "/v1/loki/api/v1/push") == "ingest"
    assert group_for("PUT", "/v1/elastic/_bulk") == "ingest"
    assert group_for("POST", "/v1/elastic/web/_bulk") == "ingest"
    assert group_for("GET", "/v1/elastic/_license") == "read"
    assert group_for("PUT", "/v1/elastic/_index_template/x") == "other"
