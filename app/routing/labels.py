"""Label sets: validation (names, value sizes, counts) and the fingerprint that identifies an alert."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from app.errors import BeaconError

LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_LABELS = 64
MAX_VALUE_CHARS = 1024
MAX_ANNOTATION_CHARS = 16_384

Labels = dict[str, str]


def fingerprint(labels: Mapping[str, str]) -> str:
    """A stable hash of the sorted labels: 16 hex characters. 0xff never occurs in UTF-8, so it separates."""
    digest = hashlib.sha256()
    for name in sorted(labels):
        digest.update(name.encode())
        digest.update(b"\xff")
        digest.update(labels[name].encode())
        digest.update(b"\xff")
    return digest.hexdigest()[:16]


def is_label_name(name: str) -> bool:
    return LABEL_NAME.fullmatch(name) is not None


def check_labels(
    labels: Mapping[str, object], param: str, *, max_value: int = MAX_VALUE_CHARS, required: bool = False
) -> Labels:
    """Refuse a bad label set with a 400 naming the label (`param.name`); returns it as str -> str."""
    if required and not labels:
        raise BeaconError("invalid_field", f"`{param}` must hold at least one label.", param=param)
    if len(labels) > MAX_LABELS:
        raise BeaconError("invalid_field", f"`{param}` holds {len(labels)} labels; at most {MAX_LABELS}.", param=param)
    for name, value in labels.items():
        if not is_label_name(name):
            raise BeaconError(
                "invalid_field",
                f"Label name {name!r} is not valid: it must match [A-Za-z_][A-Za-z0-9_]*.",
                param=f"{param}.{name}" if name else param,
            )
        if not isinstance(value, str):
            raise BeaconError("invalid_field", f"Label `{name}` must be a string.", param=f"{param}.{name}")
        if len(value) > max_value:
            raise BeaconError(
                "invalid_field",
                f"Label `{name}` is {len(value)} characters long; at most {max_value}.",
                param=f"{param}.{name}",
            )
    return {str(k): str(v) for k, v in labels.items()}


def sanitize_name(name: str) -> str:
    """A label name made from any text (a query's `by` column such as `http.path` becomes `http_path`)."""
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"_{cleaned}"
