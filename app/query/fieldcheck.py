"""Warnings for event fields a query names but its dataset has never had (`where statuss >= 500`).

Such a field reads as null in every event, so the query answers 0 or nothing, silently, and a monitor built
on it never fires. The dataset's known fields are those ingest recorded (`dataset_fields`); a dataset with
none recorded (rows written other than by ingest) is not judged.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import may_use_dataset
from app.auth import Principal
from app.result_warnings import ResultWarning

MAX_WARNINGS = 10
MAX_KNOWN = 10_000  # names read for "did you mean": past this, suggestions come from the first ones only
MAX_COMPARED = 300  # of which difflib compares at most these with one name (see `closest`)
MAX_COMPARED_CHARS = 200

# The field names of a dataset (by its id), in one read, for the rare answer that has a field to warn about.
_KNOWN = "SELECT name FROM dataset_fields WHERE dataset_id = {} "
KNOWN_FIELDS_SQL = _KNOWN.format("$1") + f"ORDER BY name LIMIT {MAX_KNOWN}"  # asyncpg


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name `name` most likely meant: the same but for case, else the closest by difflib.

    difflib's cost grows with the names' lengths and how alike they are (10,000 long look-alike names took
    seconds of the event loop per name), so it compares at most MAX_COMPARED candidates, those nearest in
    length among the ones that could reach the cutoff at all, and names of at most MAX_COMPARED_CHARS."""
    lowered = name.lower()
    for candidate in known:
        if candidate.lower() == lowered:
            return candidate
    if len(name) > MAX_COMPARED_CHARS:
        return None
    # A ratio of 2·matches / (len(a) + len(b)) ≥ 0.6 needs the shorter to be at least 3/7 of the longer.
    reachable = [c for c in known if 3 * max(len(c), len(name)) <= 7 * min(len(c), len(name))]
    if len(reachable) > MAX_COMPARED:
        reachable = sorted(reachable, key=lambda c: abs(len(c) - len(name)))[:MAX_COMPARED]
    found = difflib.get_close_matches(name, reachable, n=1, cutoff=0.6)
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


# The dataset's id first, then its fields by that id: on Citus `datasets` is a reference table and
# `dataset_fields` is distributed by dataset_id, and a subquery correlated across the two is refused.
_DATASET_ID = text("SELECT id FROM datasets WHERE name = :dataset")
_PRESENT = text("SELECT name FROM dataset_fields WHERE dataset_id = :id AND name = ANY(CAST(:names AS text[]))")
_KNOWN_FIELDS = text(_KNOWN.format(":id") + f"ORDER BY name LIMIT {MAX_KNOWN}")
DATASETS_SQL = f"SELECT name FROM datasets ORDER BY name LIMIT {MAX_KNOWN}"  # for "did you mean" of a dataset
_DATASETS = text(DATASETS_SQL)


async def stored_query_warnings(
    session: AsyncSession, who: Principal, dataset: str, used: Mapping[str, int]
) -> list[ResultWarning]:
    """Warnings for a query kept to run later (a monitor's): its dataset does not exist yet, or it names fields
    the dataset has never had. The closest dataset suggested is one the token may use."""
    dataset_id = (await session.execute(_DATASET_ID, {"dataset": dataset})).scalar_one_or_none()
    if dataset_id is None:
        names = [n for n in (await session.execute(_DATASETS)).scalars() if may_use_dataset(who, n)]
        suggestion = closest(dataset, names)
        hint = f"; did you mean {suggestion!r}?" if suggestion else "."
        message = f"There is no dataset {dataset!r} yet: the query finds no events until some are ingested{hint}"
        return [ResultWarning(code="unknown_dataset", message=message, field=dataset, suggestion=suggestion)]
    if not used:
        return []
    present = (await session.execute(_PRESENT, {"id": dataset_id, "names": list(used)})).scalars()
    unknown = missing(used, set(present))
    if not unknown:
        return []
    known = list((await session.execute(_KNOWN_FIELDS, {"id": dataset_id})).scalars())
    return unknown_field_warnings(dataset, unknown, known)
