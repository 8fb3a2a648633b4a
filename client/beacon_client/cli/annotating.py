"""`beacon annotate`'s check that its datasets exist: an annotation on a misspelt dataset is drawn on no chart."""

from __future__ import annotations

from collections.abc import Sequence

from beacon_client import BeaconAPIError, Client
from beacon_client.cli.common import fail


def check_datasets(client: Client, names: Sequence[str], *, strict: bool) -> str | None:
    """The warning to print once the annotation is created, naming each dataset that does not exist; `strict`:
    exit 1 instead, before creating anything. A token that may not read datasets (`datasets:read`) cannot
    tell: only --strict says so. (Printed after the create, so that a refused annotation gets no warning
    about where it would show.)"""
    missing: list[str] = []
    for name in dict.fromkeys(names):
        try:
            client.get_dataset(name)
        except BeaconAPIError as exc:
            if exc.status == 404:
                missing.append(name)
            elif exc.status == 403 and strict:
                fail(f"cannot check that dataset {name!r} exists ({exc.message}); nothing was created")
            elif exc.status not in (400, 403):
                raise
    if not missing:
        return None
    listed = ", ".join(repr(n) for n in missing)
    noun = "datasets" if len(missing) > 1 else "dataset"
    if strict:
        fail(f"no {noun} named {listed}; nothing was created (without --strict the annotation is created anyway)")
    return f"no {noun} named {listed} yet: the annotation shows once events arrive in it"
