"""`beacon_client` loads its names on first use (PEP 562): each name of `__all__` is there, is the object of the
module defining it, and a name it does not have is an AttributeError, as for any module."""

from __future__ import annotations

import subprocess
import sys

import pytest

import beacon_client
from beacon_client import errors, models, sync, webhooks


def test_every_public_name_resolves_to_its_definition():
    for name in beacon_client.__all__:
        assert getattr(beacon_client, name) is not None, name
    assert beacon_client.Client is sync.Client and beacon_client.Delivery is models.Delivery
    assert beacon_client.BeaconAPIError is errors.BeaconAPIError and beacon_client.sign_webhook is webhooks.sign
    assert set(beacon_client.__all__) <= set(dir(beacon_client))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Clinet'"):
        _ = beacon_client.Clinet  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from beacon_client import Clinet")


def test_the_blocking_client_loads_without_the_asyncio_one():
    probe = "import sys; from beacon_client import Client; print('beacon_client.aio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
