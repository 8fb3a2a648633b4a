"""Alertmanager's shapes to and from Beacon's: alerts, matchers and silences."""

from __future__ import annotations

from datetime import datetime

import msgspec

from app.amapi import schemas as am
from app.errors import BeaconError
from app.routing.matchers import Matcher, MatcherError, parse_matcher
from app.routing.schemas import AlertOut, AlertPost, SilenceOut
from app.schemas import EARLIEST
from app.timefmt import GO_ZERO_TIME

ALERT_STATE = {"firing": "active", "suppressed": "suppressed"}


def _set(value: datetime | None) -> datetime | None:
    """Go's clients send an unset time as year 1 (`0001-01-01T00:00:00Z`): Beacon's unset is None."""
    return None if value is None or value < EARLIEST else value


def alert_post(i: int, alert: am.PostableAlert) -> AlertPost:
    try:
        return AlertPost(
            labels=alert.labels,
            annotations=alert.annotations,
            starts_at=_set(alert.starts_at),
            ends_at=_set(alert.ends_at),
            generator_url=alert.generator_url or None,
        )
    except ValueError as exc:  # a time beyond the range Beacon stores
        raise BeaconError("invalid_field", f"alert {i}: {exc}", param=f"[{i}]") from None


def gettable_alert(out: AlertOut, receivers: list[str]) -> am.GettableAlert:
    return am.GettableAlert(
        labels=out.labels,
        annotations=out.annotations,
        receivers=[am.Receiver(name) for name in receivers],
        fingerprint=out.fingerprint,
        starts_at=out.starts_at,
        updated_at=out.updated_at,
        ends_at=out.ends_at or GO_ZERO_TIME,
        status=am.AlertStatus(
            state=ALERT_STATE.get(out.state, out.state),
            silenced_by=out.silenced_by,
            inhibited_by=out.inhibited_by,
            muted_by=out.muted_by,
        ),
        generator_url=out.generator_url or "",
    )


def matcher_text(m: am.Matcher) -> str:
    """Alertmanager's matcher object as Beacon's matcher text (`name=~"value"`), quoted and escaped."""
    op = ("=~" if m.is_equal else "!~") if m.is_regex else ("=" if m.is_equal else "!=")
    return str(Matcher(m.name, op, m.value))


def matcher_object(text: str) -> am.Matcher:
    m = parse_matcher(text)  # stored matchers were checked when written
    return am.Matcher(name=m.name, value=m.value, is_regex=m.op in ("=~", "!~"), is_equal=m.op in ("=", "=~"))


def parse_filters(texts: list[str] | None) -> list[Matcher]:
    """`filter` parameters; a bad one is a 400 that says which and why (amtool shows the message)."""
    found = []
    for text in texts or ():
        try:
            found.append(parse_matcher(_unbraced(text)))
        except MatcherError as exc:
            raise BeaconError("invalid_parameter", f"bad matcher format: {text}: {exc}", param="filter") from None
    return found


def _unbraced(text: str) -> str:
    stripped = text.strip()
    return stripped[1:-1] if stripped.startswith("{") and stripped.endswith("}") else stripped


def gettable_silence(s: SilenceOut) -> am.GettableSilence:
    return am.GettableSilence(
        id=s.id,
        status=am.SilenceStatus(s.state),
        updated_at=s.updated_at,
        matchers=[matcher_object(text) for text in s.matchers],
        starts_at=s.starts_at,
        ends_at=s.ends_at,
        created_by=s.created_by,
        comment=s.comment,
    )


def silence_matches_filter(s: SilenceOut, filters: list[Matcher]) -> bool:
    """Alertmanager's rule: each filter names a label the silence has a matcher for, and holds for that
    matcher's value."""
    own = [parse_matcher(text) for text in s.matchers]
    for f in filters:
        same = [m for m in own if m.name == f.name]
        if not same or not all(f.matches({f.name: m.value}) for m in same):
            return False
    return True


def sorted_silences(found: list[SilenceOut]) -> list[SilenceOut]:
    """Alertmanager's order: active ones ending first, then pending ones starting first, then expired ones
    ended last first (the times are ISO strings of one format, so they sort as text)."""
    active = sorted((s for s in found if s.state == "active"), key=lambda s: s.ends_at)
    pending = sorted((s for s in found if s.state == "pending"), key=lambda s: s.starts_at)
    expired = sorted((s for s in found if s.state == "expired"), key=lambda s: s.ends_at, reverse=True)
    return active + pending + expired


def json_string(message: str) -> bytes:
    return msgspec.json.encode(message)
