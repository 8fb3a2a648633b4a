"""Warnings for event fields a query names but its dataset has never had (`where statuss >= 500`).

Such a field reads as null in every event, so the query answers 0 or nothing, silently, and a monitor built
on it never fires. The dataset's known fields are those ingest recorded (`dataset_fields`); a dataset with
none recorded (rows written other than by ingest) is not judged.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence

from app.result_warnings import ResultWarning

MAX_WARNINGS = 10
MAX_KNOWN = 10_000  # names compared for "did you mean": past this, suggestions come from the first ones only

# The field names of a dataset, in one read, for the rare answer that has a field to warn about.
KNOWN_FIELDS_SQL = (
    "SELECT f.name FROM dataset_fields f JOIN datasets d ON d.id = f.dataset_id WHERE d.name = $1 "
    f"ORDER BY f.name LIMIT {MAX_KNOWN}"
)


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name `name` most likely meant: the same but for case, else the closest by difflib."""
    lowered = name.lower()
    for candidate in known:
        if candidate.lower() == lowered:
            return candidate
    found = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return found[0] if found else None


def missing(used: Mapping[str, int], present: Collection[str]) -> list[str]:
    """The fields of `used` (name -> position of its first mention) not in `present`, in the query's order."""
    return sorted((name for name in used if name not in present), key=used.__getitem__)


def unknown_field_warnings(dataset: str, names: Sequence[str], known: Sequence[str]) -> list[ResultWarning]:
    """One warning per name (at most MAX_WARNINGS); none when the dataset has no recorded fields."""
    if not known:
        return []
    out = []
    for name in names[:MAX_WARNINGS]:
        suggestion = closest(name, known)
        hint = f"; did you mean `{suggestion}`?" if suggestion else "."
        out.append(
            ResultWarning(
                code="unknown_field",
                message=f"No event of dataset {dataset!r} has ever had a field `{name}`: it reads as null in "
                f"every event{hint}",
                field=name,
                suggestion=suggestion,
            )
        )
    return out
