"""Console pages that write annotations: "Mark a change" on a dataset (a deploy, possibly a rollout that holds its
own alerts with a silence over its span), and "End now" for a span still running (a rollout's silence ends with
it). Writes go through the annotations service, as `POST`/`PATCH /v1/annotations` do, with their scopes and
dataset limits (a silence needs `silences:write` and no dataset limit)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Request, Response, get, post
from litestar.response import Redirect
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_dataset, requires
from app.annotations import service as marks
from app.auth import Principal
from app.datasets.names import check_dataset_name
from app.errors import BeaconError
from app.routing.texts import lines
from app.timefmt import utcnow
from app.timeparams import to_ms
from app.ui.alerts import can_silence
from app.ui.forms import Form
from app.ui.render import signed_page
from app.ui.session import check_csrf, signed_in
from beacon_client.notation.durations import parse_duration
from beacon_client.notation.labels import parse_labels

FIELDS = ("type", "title", "url", "labels", "duration", "hold")


def _form_page(
    request: Request[Any, Any, Any], who: Principal, dataset: str, *, status_code: int = 200, **values: Any
) -> Response[str]:
    context: dict[str, Any] = {"type": "deploy", "title": "", "url": "", "labels": "", "duration": "", "hold": ""}
    context["error"] = None
    context.update(values)
    return signed_page(
        request,
        "annotation_new.html",
        nav="datasets",
        status_code=status_code,
        dataset=dataset,
        can_hold=can_silence(who),
        **context,
    )


@get("/datasets/{name:str}/annotations/new", include_in_schema=False, opt=requires("annotations:write"))
async def annotation_form(request: Request[Any, Any, Any], name: str) -> Response[str]:
    who = await signed_in(request)
    require_dataset(who, check_dataset_name(name))
    return _form_page(request, who, name)


def _draft(name: str, data: dict[str, str], now: Any) -> marks.Draft:
    def bad(message: str, param: str) -> BeaconError:
        return BeaconError("invalid_field", message, param=param)

    end = None
    if text := data.get("duration", "").strip():
        try:
            end = now + parse_duration(text)
        except ValueError as exc:
            raise bad(f"Duration: {exc}.", "duration") from None
    try:
        labels = marks.labels_of(parse_labels(lines(data.get("labels"))))
    except ValueError as exc:
        raise bad(f"Labels: {exc}.", "labels") from None
    hold = lines(data.get("hold"))
    if hold and end is None:
        raise bad(
            "Holding alerts needs a duration (Lasts): the silence ends with the span, never open-ended.", "duration"
        )
    return marks.Draft(
        type=data.get("type", "").strip() or "deploy",
        title=data.get("title", "").strip(),
        datasets=[name],
        time=now,
        end_time=end,
        url=data.get("url", "").strip() or None,
        labels=labels,
        silence=hold or None,
    )


@post("/datasets/{name:str}/annotations", include_in_schema=False, status_code=303, opt=requires("annotations:write"))
async def annotation_create(request: Request[Any, Any, Any], db: AsyncSession, name: str, data: Form) -> Response[Any]:
    who = await signed_in(request)
    check_csrf(request, data.get("csrf"))
    check_dataset_name(name)
    now = utcnow()
    try:
        created = marks.add(db, who, _draft(name, data, now), now)
        await db.commit()
    except BeaconError as exc:
        if exc.status != 400:
            raise
        await db.rollback()
        kept = {k: data.get(k, "") for k in FIELDS}
        return _form_page(request, who, name, status_code=400, error=exc.message, **kept)
    return Redirect(f"/ui/datasets/{quote(name)}#{quote(created.id)}", status_code=303)


@post(
    "/annotations/{annotation_id:str}/end", include_in_schema=False, status_code=303, opt=requires("annotations:write")
)
async def annotation_end(request: Request[Any, Any, Any], db: AsyncSession, annotation_id: str, data: Form) -> Redirect:
    """End a span now (a rollout's silence ends with it); one that has not started yet is called off: it ends
    where it starts, and its silence ends now."""
    who = await signed_in(request)
    check_csrf(request, data.get("csrf"))
    now = utcnow()
    now = to_ms(utcnow())
    found = await marks.get_annotation(db, who, annotation_id, for_update=True)
    if found.end_time is not None and found.end_time > now:
        if found.time < now:
            await marks.change(db, who, found, {"end_time": now}, now)
        else:
            await marks.change(db, who, found, {"end_time": found.time}, now, silence=None)
        await db.commit()
    dataset = found.datasets[0] if found.datasets else None
    return Redirect(f"/ui/datasets/{quote(dataset)}#annotations" if dataset else "/ui/", status_code=303)
