"""The dataset-name rule of api.md: 1–128 of letters, digits, `.`, `_`, `-`, starting with a letter or digit."""

from __future__ import annotations

import re

from app.errors import BeaconError

DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_dataset_name(name: str) -> bool:
    return DATASET_NAME.fullmatch(name) is not None


def check_dataset_name(name: str, *, param: str = "dataset") -> str:
    if not isinstance(name, str) or not is_dataset_name(name):
        raise BeaconError(
            "invalid_parameter" if param == "dataset" else "invalid_field",
            f"Invalid dataset name {name!r}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            param=param,
        )
    return name
