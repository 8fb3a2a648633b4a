"""Console pages for silences: the list by state (with extend and expire buttons), and the form that creates
one, prefilled from an alert's labels when opened from the alerts page.

Writes go through the silences service, as `POST`/`PATCH`/`DELETE /v1/silences` do: `silences:write`, and a
dataset-limited token may not change them (they concern every dataset's alerts).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import quote

import msgspec
from litestar import Request, Response, get, post
from litestar.params import QueryParameter
from litestar.response import Redirect
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.auth import Principal
from app.errors import BeaconError
from app.pace import bounded
from app.pagination import MAX_LIMIT, CursorCodec
from app.routing import service as routing
from app.routing import silences
from app.routing.env import RoutingEnv
from app.routing.schemas import SILENCE_STATES, SilenceCreate
from app.routing.texts import lines, matchers_for
from app.schemas import TIME_RANGE, in_time_range
from app.services import Services
from app.ui.alerts import SILENCE_WRITE, can_silence
from app.ui.forms import Form
from app.ui.render import signed_page
from app.ui.session import check_csrf, signed_in
from beacon_client.notation.durations import parse_duration

DEFAULT_DURATION = "2h"


async def silenced_counts(db: AsyncSession, renv: RoutingEnv, who: Principal) -> Counter[str] | None:
    """How many alerts (of those the token may see) each silence holds back now; None without `alerts:read`."""
    if not who.has_scope("alerts:read"):
        return None
    suppressed = await routing.all_alerts(db, renv, who, routing.alert_filter(None, "suppressed"))
    return Counter(s for a in suppressed for s in a.silenced_by)


@get("/silences", include_in_schema=False, opt=requires("silences:read"))
async def silence_list(
    request: Request[Any, Any, Any],
    db: AsyncSession,
    codec: CursorCodec,
    services: Services,
    state_: Annotated[str | None, QueryParameter(name="state")] = None,
    cursor: str | None = None,
    changed: str | None = None,
) -> Response[str]:
    who = await signed_in(request)
    now = services.routing_env.now()
    state = state_ or None
    found = await silences.list_silences(db, codec, who, now, state=state, limit=MAX_LIMIT, cursor=cursor)
    seconds = services.settings.alert_view_timeout_seconds  # the counts look at every alert (app/pace.py)
    counts = await bounded(
        request.receive, silenced_counts(db, services.routing_env, who), seconds=seconds, what="The counts"
    )
    return signed_page(
        request,
        "silences.html",
        silencing=counts,
        nav="silences",
        silences=found.data,
        next_cursor=found.next_cursor,
        state=state or "",
        states=SILENCE_STATES,
        changed=changed,
        can_write=can_silence(who),
        default_duration=DEFAULT_DURATION,
    )


def _form_page(
    request: Request[Any, Any, Any], who: Principal, *, status_code: int = 200, **values: Any
) -> Response[str]:
    context = {
        "matchers": "",
        "duration": DEFAULT_DURATION,
        "starts_at": "",
        "comment": "",
        "created_by": "",
        "alert": None,
        "error": None,
        **values,
    }
    return signed_page(
        request, "silence_new.html", nav="silences", status_code=status_code, can_write=can_silence(who), **context
    )


@get("/silences/new", include_in_schema=False, opt=SILENCE_WRITE)
async def silence_form(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, alert: str | None = None
) -> Response[str]:
    """The new-silence form; `?alert=<fingerprint>` fills its matchers with that alert's labels."""
    who = await signed_in(request)
    if not alert:
        return _form_page(request, who)
    found = await routing.get_alert(db, services.routing_env, who, alert)  # 404 for an alert it cannot see
    return _form_page(request, who, matchers="\n".join(matchers_for(found.labels)), alert=found)


def _bad_form(message: str, param: str) -> BeaconError:
    return BeaconError("invalid_field", message, param=param)


def _times(data: dict[str, str], now: datetime) -> tuple[datetime | None, datetime]:
    """The start (None: now) and the end of a silence from the form's `starts_at` and `duration`."""
    start = None
    if text := data.get("starts_at", "").strip():
        try:
            start = datetime.fromisoformat(text)
        except ValueError:
            start = None
        if start is None or start.tzinfo is None:
            raise _bad_form(f"Start {text!r} is not an RFC 3339 time with an offset.", "starts_at")
        if not in_time_range(start):
            raise _bad_form(f"Start {text!r} must lie {TIME_RANGE}.", "starts_at")
    try:
        length = parse_duration(data.get("duration", "") or DEFAULT_DURATION)  # at most 10 years
    except ValueError as exc:
        raise _bad_form(f"Duration: {exc}.", "duration") from None
    return start, max(start or now, now) + length


def _checked(fields: dict[str, Any]) -> SilenceCreate:
    """The form as the API's body, with the API's limits (an empty comment, too many matchers...)."""
    if not fields["comment"]:
        raise _bad_form("Say why in the comment (it is shown with the silence).", "comment")
    try:
        return msgspec.convert(fields, SilenceCreate)
    except msgspec.ValidationError as exc:
        where = re.search(r"at `\$\.(\w+)", str(exc))
        raise _bad_form(str(exc), where.group(1) if where else "matchers") from None


# Making, ending and extending a silence need `silences:write`; routing/silences.py refuses a limited token, as
# for the API's routes.
@post("/silences", include_in_schema=False, status_code=303, opt=requires("silences:write"))
async def silence_create(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, data: Form
) -> Response[Any]:
    who = await signed_in(request)
    check_csrf(request, data.get("csrf"))
    now = services.routing_env.now()
    try:
        start, end = _times(data, now)
        body = _checked(
            {
                "matchers": lines(data.get("matchers")),
                "ends_at": end,
                "comment": data.get("comment", "").strip(),
                "starts_at": start,
                "created_by": data.get("created_by", "").strip() or None,
            }
        )
        created = await silences.create(db, who, body, now)
    except BeaconError as exc:
        if exc.status != 400:
            raise
        # The form again, as typed, with the error beside it.
        kept = {k: data.get(k, "") for k in ("matchers", "duration", "starts_at", "comment", "created_by")}
        return _form_page(request, who, status_code=400, error=exc.message, **kept)
    return Redirect(f"/ui/silences?state={created.state}&changed={quote(created.id)}#{created.id}", status_code=303)


@post("/silences/{silence_id:str}/expire", include_in_schema=False, status_code=303, opt=requires("silences:write"))
async def silence_expire(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str, data: Form
) -> Redirect:
    who = await signed_in(request)
    check_csrf(request, data.get("csrf"))
    done = await silences.expire(db, who, silence_id, services.routing_env.now())
    return Redirect(f"/ui/silences?state=expired&changed={quote(done.id)}#{done.id}", status_code=303)


@post("/silences/{silence_id:str}/extend", include_in_schema=False, status_code=303, opt=requires("silences:write"))
async def silence_extend(
    request: Request[Any, Any, Any], db: AsyncSession, services: Services, silence_id: str, data: Form
) -> Redirect:
    """Move the end of a pending or active silence later by the form's `duration`."""
    who = await signed_in(request)
    check_csrf(request, data.get("csrf"))
    now = services.routing_env.now()
    try:
        length = parse_duration(data.get("duration", "") or DEFAULT_DURATION)
    except ValueError as exc:
        raise _bad_form(f"Duration: {exc}.", "duration") from None
    done = await silences.extend(db, who, silence_id, length, now)
    return Redirect(f"/ui/silences?state={done.state}&changed={quote(done.id)}#{done.id}", status_code=303)
