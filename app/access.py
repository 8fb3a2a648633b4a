"""What a token may do: the scopes a route needs, and which datasets a request may touch, decided here, once,
for every area.

Scopes: a route, of the API or of the console, declares what it needs as its `opt=requires(scope, ...)` (every
scope named, and with `unlimited=WHAT` a token limited to no dataset), and one guard checks it before the work:
`admit`, called by the API's auth middleware (a route of the API that declares nothing needs `*`) and by the
console's guard (app/ui/guard.py). `may` answers the same question without refusing (a page shows a button only
when the route behind it would admit the token). A rule that depends on the request's body is checked with
`admit` too, by the handler once it knows (a real evaluation of a monitor needs `monitors:write`).

A token may be limited to a list of datasets (`Principal.datasets`; None: every dataset). A limited token then
sees and touches nothing of any other dataset, whatever its scopes: events, queries and exports, dataset
metadata, annotations, monitors with their values, history and deliveries, and the console's pages.

- By name (ingest, query, export, `/v1/datasets/{name}`, a monitor's query, an annotation's `datasets`): a
  dataset outside the list is a 403 whether it exists or not (`require_datasets`).
- By id: a resource of another dataset is a 404, the answer for an unknown id, and lists leave it out: both
  look it up through the same SQL predicate (`*_filter`). Either way nothing is learnt of what exists elsewhere.

What belongs to a dataset:
- a monitor: the dataset its query reads;
- an annotation: every dataset it names. A limited token sees one only when it may use all of them (its
  `datasets` would otherwise name the others), and writes only annotations wholly on its own datasets. An
  environment-wide annotation (no dataset: drawn on every chart) belongs to none: every token that may read
  annotations sees it, and only an unlimited token writes, changes or deletes one (it shows on every dataset's
  charts and relates to every dataset's alerts). An annotation a limited token wrote (`confined`) relates to the
  alerts of its own datasets only: its labels never tie it to another dataset's alerts, so a limited token cannot
  put a "change" into another dataset's notifications. A `silence` held by an annotation is a silence's change:
  only an unlimited token with `silences:write` adds, moves or ends one (also by moving or deleting its annotation);
- a delivery: its monitor's dataset. A notifier's test message belongs to no dataset: any token that may read
  notifiers sees it. A routed group's notification (of no monitor) may list alerts of any dataset: only an
  unlimited token sees it. A delivery whose monitor was deleted can no longer be placed in a
  dataset (its message holds that dataset's data), so only an unlimited token sees it.
- a silence: the datasets its matchers on the `dataset` label admit. A limited token sees the silences that could
  silence an alert of one of its datasets (those with no `dataset` matcher included: they may silence its
  alerts, and it must be able to tell why), and no silence aimed only at other datasets; it changes none.

Shared configuration — the routing document (routes, receivers' notifier names) and notifiers — belongs to no
dataset and every dataset's alerts depend on it: a limited token with the read scope reads it (a notifier's name,
type and target; never its config), and changes none of it, through any route or page. A route that changes it
declares `opt=requires(scope, unlimited=WHAT)`, and a limited token is refused before any work: creating,
changing, muting, rotating the secret of, deleting or sending a test message to a notifier (another dataset's
pager would otherwise be redirected to the token's owner, or paged at will).

Importing an Alertmanager configuration (`POST /v1/routing/import`) writes both the routing document and
notifiers: it needs both write scopes (`IMPORT_SCOPES`) and a token limited to no dataset, even for a dry run
(the plan shows every notifier's destination and the whole tree).

What changed (app/annotations/changes.py): the annotations related to an alert, shown with it, are cut to what
the reader may see, the annotations rule above (`changes_audience`):
- a view (`GET /v1/alerts/{fingerprint}`, `/v1/alerts/groups`, `POST /v1/routing/test`, the console) shows the
  token the related annotations it may see, and none without `annotations:read` (`shows_changes`): a limited
  token never sees one of a dataset it may not use;
- a monitor's own message is read by every token that may see the monitor's dataset (its delivery) and goes where
  any of them sent it: it carries only what a token limited to that one dataset may see (`monitor_message_audience`:
  annotations on that dataset alone, and environment-wide ones), never an annotation of another dataset, even
  one whose labels match;
- a routed group's message goes where the routing document sends it, which only unlimited tokens write, and only
  unlimited tokens see its delivery: it carries every related annotation (`ROUTED_GROUP_AUDIENCE`). A limited
  token's monitor routed by the tree does not change this: the people the document names see every dataset's
  alerts of their routes anyway, and a limited token's own annotations reach other datasets' messages only
  through their datasets (`confined`, above).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, or_, select, true
from sqlalchemy.orm import InstrumentedAttribute

from app.auth import Principal
from app.db.annotation import Annotation
from app.db.delivery import Delivery
from app.db.monitor import Monitor
from app.errors import BeaconError
from app.routing.matchers import Matcher


@dataclass(frozen=True)
class Requirement:
    """What a route needs of a token: every scope of `scopes`; and, when `unlimited` names what the route changes
    (shared configuration, things of every dataset), a token limited to no dataset."""

    scopes: tuple[str, ...]
    unlimited: str | None = None


REQUIREMENT = "requires"  # the key of a route's `opt`
EVERYTHING = Requirement(("*",))  # an API route that declares nothing


def requires(*scopes: str, unlimited: str | None = None) -> dict[str, Requirement]:
    """A route's `opt` (API and console alike): the scopes it needs and, with `unlimited` naming what it changes
    (e.g. NOTIFIERS), that a token limited to datasets is refused; checked before the work (`admit`)."""
    return {REQUIREMENT: Requirement(scopes, unlimited)}


def requirement_of(opt: Mapping[str, Any]) -> Requirement:
    found = opt.get(REQUIREMENT, EVERYTHING)
    assert isinstance(found, Requirement), found
    return found


def admit(who: Principal, opt: Mapping[str, Any]) -> None:
    """The one guard: 403 insufficient_scope unless `who` meets the route's requirement (`opt`, as `requires`
    makes it; `*` when it declares none), naming the first scope missing, or what a limited token cannot change."""
    need = requirement_of(opt)
    for scope in need.scopes:
        if not who.has_scope(scope):
            raise BeaconError("insufficient_scope", f"This request needs a token with the `{scope}` scope.")
    if need.unlimited is not None:
        require_unlimited(who, need.unlimited)


def may(who: Principal, opt: Mapping[str, Any]) -> bool:
    """Whether `admit` would let `who` through (a page shows a button only when its route would)."""
    need = requirement_of(opt)
    return all(who.has_scope(scope) for scope in need.scopes) and (need.unlimited is None or unlimited(who))


IMPORT_SCOPES = ("routing:write", "notifiers:write")


def unlimited(who: Principal) -> bool:
    """Whether the token is limited to no dataset (it sees and may change what belongs to every dataset)."""
    return who.datasets is None


def unrestricted(who: Principal) -> bool:
    """`*` over every dataset: the only kind of token that sees tokens it did not issue."""
    return "*" in who.scopes and unlimited(who)


def may_use_dataset(who: Principal, name: str) -> bool:
    return who.datasets is None or name in who.datasets


def require_dataset(who: Principal, name: str) -> None:
    """403 when the request names a dataset the token may not use (whether it exists or not)."""
    if not may_use_dataset(who, name):
        raise BeaconError("insufficient_scope", f"This token is not allowed to use the dataset {name!r}.")


def require_datasets(who: Principal, names: Iterable[str]) -> None:
    """403 for the first dataset, named in the request, that the token may not use."""
    for name in names:
        require_dataset(who, name)


def require_issuable(issuer: Principal, datasets: Iterable[str] | None) -> None:
    """A token limited to datasets issues only tokens limited to some of them (None: every dataset)."""
    if issuer.datasets is not None and (not datasets or not set(datasets) <= set(issuer.datasets)):
        raise BeaconError(
            "insufficient_scope", "A token limited to datasets can only issue tokens limited to those datasets."
        )


def unnamed_annotation_datasets(who: Principal) -> list[str]:
    """Where an annotation that names no dataset goes (a deploy marker): environment-wide for an unlimited token;
    a dataset-limited token's own datasets otherwise (it may not write environment-wide annotations)."""
    return list(who.datasets) if who.datasets is not None else []


def list_scope(who: Principal, kind: str) -> str:
    """The scope of a list's cursors (valid only for the list they came from): `kind`, and the token's datasets
    when it is limited to some, since they decide what the list holds."""
    return kind if who.datasets is None else f"{kind}:{','.join(sorted(who.datasets))}"


def dataset_filter(who: Principal, column: InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """Rows of a resource that belongs to one dataset (named in `column`) that the token may use."""
    return true() if who.datasets is None else column.in_(who.datasets)


def require_annotation_write(who: Principal, datasets: Iterable[str]) -> None:
    """Whether `who` may write an annotation on `datasets` (checked names; empty: environment-wide, which only an
    unlimited token writes: it is drawn on every dataset's charts and relates to every dataset's alerts)."""
    names = list(datasets)
    if not names:
        require_unlimited(who, "environment-wide annotations (they show on every dataset's charts and messages)")
    require_datasets(who, names)


def monitor_filter(who: Principal) -> ColumnElement[bool]:
    return dataset_filter(who, Monitor.dataset)


def annotation_filter(who: Principal) -> ColumnElement[bool]:
    """Annotations whose datasets are all the token's."""
    return true() if who.datasets is None else Annotation.datasets.contained_by(list(who.datasets))


def delivery_filter(who: Principal) -> ColumnElement[bool]:
    """Test messages (of no monitor and no routed group), and deliveries of the monitors the token may see. A
    routed group's notification lists alerts of any dataset: only an unlimited token sees it."""
    if who.datasets is None:
        return true()
    own_monitor = exists(select(Monitor.id).where(Monitor.id == Delivery.monitor_id, Monitor.dataset.in_(who.datasets)))
    test_message = and_(Delivery.monitor_id.is_(None), Delivery.alert_group_key.is_(None))
    return or_(test_message, own_monitor)


def shows_changes(who: Principal) -> bool:
    """Whether a view shows `who` an alert's changes: they are annotations, read with `annotations:read`."""
    return who.has_scope("annotations:read")


def changes_audience(who: Principal) -> tuple[str, ...] | None:
    """What a token may be shown of an alert's changes (app/annotations/changes.py): the annotations it may see."""
    return who.datasets


def monitor_message_audience(dataset: str) -> tuple[str, ...]:
    """What a monitor's own message may carry of its changes: what a token limited to the monitor's dataset may
    see, since any such token reads the message (its delivery) and may have chosen where it goes."""
    return (dataset,)


# A routed group's message goes where the routing document (written by unlimited tokens only) sends it, and only
# unlimited tokens see its delivery: it may carry every related annotation.
ROUTED_GROUP_AUDIENCE: tuple[str, ...] | None = None


def require_unlimited(who: Principal, what: str) -> None:
    """For what concerns every dataset (external alerts, silences, the routing document, notifiers): 403 for a
    token limited to datasets."""
    if not unlimited(who):
        raise BeaconError("insufficient_scope", f"A token limited to datasets cannot change {what}.")


NOTIFIERS = "notifiers (shared configuration: other datasets' monitors send through them)"


def alert_clause(who: Principal, param: int) -> tuple[str, list[Any]]:
    """The alerts (the `alerts` table, raw SQL: routing reads it through asyncpg) the token may see: a SQL
    condition using `$param`, and the arguments it takes."""
    if who.datasets is None:
        return "true", []
    return f"dataset = ANY(${param}::text[])", [list(who.datasets)]


def admits_datasets(who: Principal, matchers: Iterable[Matcher]) -> bool:
    """Could something selected by `matchers` (a silence) concern an alert of a dataset the token may use? Only
    the matchers on the `dataset` label decide: one of the token's datasets must satisfy them all."""
    if who.datasets is None:
        return True
    on_dataset = [m for m in matchers if m.name == "dataset"]
    return not on_dataset or any(all(m.matches({"dataset": name}) for m in on_dataset) for name in who.datasets)
