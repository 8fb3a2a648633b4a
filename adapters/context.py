"""The variables every message template sees: the `event`, plus values derived from it once for all types."""

from __future__ import annotations

from typing import Any

import msgspec

from adapters.contract import AdapterSettings, AlertGroup, Event, GroupAlert, RecentChange
from adapters.limits import truncate_chars
from adapters.templating import number, oneline

OPERATOR_WORDS = {
    "above": "above",
    "above_or_equal": "at or above",
    "below": "below",
    "below_or_equal": "at or below",
}
# (hex for chat_a/chat_c, integer for chat_b) by kind.
COLOURS = {
    "triggered": "#D0021B",
    "error": "#D0021B",
    "resolved": "#2EB67D",
    "matched": "#F5A623",
    "no_data": "#F5A623",
    "test": "#4A90E2",
}
SEVERITY = {"triggered": "critical", "error": "error", "no_data": "warning", "matched": "warning", "resolved": "info"}
PRIORITY = {"triggered": "P2", "error": "P3", "no_data": "P3", "matched": "P3", "resolved": "P5"}


MATCHES_LISTED = 10
MATCH_LINE_CHARS = 300


def match_line(match: dict[str, Any]) -> str:
    """One matching event on one line: `_time` first, then `field=value` pairs, cut to a readable length."""
    parts = [str(match["_time"])] if "_time" in match else []
    parts.extend(f"{k}={json_text(v)}" for k, v in match.items() if k != "_time")
    return truncate_chars(oneline(" ".join(parts)), MATCH_LINE_CHARS)


def json_text(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def facts(event: Event) -> list[dict[str, str]]:
    """Label/value pairs shown as fields by the chat and e-mail templates (only those that apply)."""
    rows: list[tuple[str, str]] = [("State", event.state)]
    if event.value is not None:
        rows.append(("Value", number(event.value)))
    if event.threshold is not None:
        words = OPERATOR_WORDS.get(event.operator or "", event.operator or "")
        rows.append(("Threshold", f"{words} {number(event.threshold)}".strip()))
    if event.group:
        rows.append(("Group", ", ".join(f"{k}={v}" for k, v in event.group.items())))
    if event.start_time and event.end_time:
        rows.append(("Range", f"{event.start_time} – {event.end_time}"))
    if event.kind == "matched":
        count = event.match_count if event.match_count is not None else len(event.matches)
        shown = f" ({len(event.matches)} listed)" if count > len(event.matches) else ""
        rows.append(("Matches", f"{count}{shown}"))
        if event.matches:
            rows.append(("Events", "\n".join(match_line(m) for m in event.matches[:MATCHES_LISTED])))
    if event.error:
        rows.append(("Error", event.error))
    if event.query:
        rows.append(("Query", event.query))
    return [{"name": k, "value": v} for k, v in rows]


ALERTS_LISTED = 10  # in chat messages; webhook and e-mail messages carry every alert
REASON_WORDS = {
    "first": "first notification",
    "new_alerts": "new alerts",
    "resolved": "alerts resolved",
    "repeat": "still firing (repeat)",
}


def labels_text(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def alert_row(alert: GroupAlert, group: AlertGroup) -> dict[str, Any]:
    """One alert as a chat line shows it: what it is (its summary, or its name), and the labels that set it apart
    from the rest of the group."""
    own = {k: v for k, v in alert.labels.items() if k not in group.common_labels}
    what = alert.annotations.get("summary") or alert.labels.get("alertname") or labels_text(alert.labels)
    line = truncate_chars(oneline(f"{what} ({labels_text(own)})" if own else what), MATCH_LINE_CHARS)
    return {
        "status": alert.status,
        "line": line,
        "icon": "🔥" if alert.status == "firing" else "✅",
        "labels": labels_text(alert.labels),
        "annotations": [{"name": k, "value": v} for k, v in alert.annotations.items()],
        "starts_at": alert.starts_at,
        "ends_at": alert.ends_at,
        "generator_url": alert.generator_url,
    }


def group_context(event: Event) -> dict[str, Any]:
    """Values derived once from a group notification for every template: title, summary, alert rows."""
    group = event.alert_group
    if group is None:
        return {"group": None}
    firing, resolved = group.firing(), group.resolved()
    if group.status == "firing":
        title = f"[FIRING:{len(firing)}] {event.monitor_name}"
        summary = f"{len(firing)} alert{'s' if len(firing) != 1 else ''} firing"
        summary += f", {len(resolved)} resolved." if resolved else "."
    else:
        title = f"[RESOLVED] {event.monitor_name}"
        summary = f"All {len(resolved)} alert{'s' if len(resolved) != 1 else ''} resolved."
    rows = [alert_row(a, group) for a in group.alerts]
    lines = [f"{r['icon']} {r['line']}" for r in rows[:ALERTS_LISTED]]
    if len(rows) > ALERTS_LISTED:
        lines.append(f"… and {len(rows) - ALERTS_LISTED} more")
    severity = group.common_labels.get("severity", "")
    return {
        "group": {
            "title": title,
            "summary": summary,
            "reason": REASON_WORDS.get(group.reason, group.reason),
            "labels": labels_text(group.labels),
            "rows": rows,
            "listed": rows[:ALERTS_LISTED],
            "unlisted": max(len(rows) - ALERTS_LISTED, 0),
            "lines": "\n".join(lines),  # the listed alerts, one a line, plain text
            "severity": severity if severity in ("critical", "error", "warning", "info") else None,
        }
    }


CHANGES_HEADING = "Recent changes"
CHANGE_LINE_CHARS = 300


def _link_safe(url: str | None) -> str | None:
    """The URL as a chat link may hold it (chat_a's `<url|text>` ends at `|` or `>`, markdown's `(url)` at `)` or a
    space): those characters percent-encoded. None when there is no URL."""
    if not url:
        return None
    return url.replace(" ", "%20").replace("|", "%7C").replace(">", "%3E").replace("<", "%3C").replace(")", "%29")


def change_row(change: RecentChange) -> dict[str, Any]:
    """One related annotation as every message shows it: what (type, title, labels), when, why it matched, link.
    `line` is the plain-text form, without the link; `link` the URL made safe for chat links."""
    what = f"{change.type}: {change.title}"
    labels = labels_text(change.labels)
    line = f"{what} — {change.when}" + (f" (matched {change.why})" if change.why else "")
    return {
        "link": _link_safe(change.url),
        "md_text": truncate_chars(oneline(what), CHANGE_LINE_CHARS).replace("[", "(").replace("]", ")"),
        "what": truncate_chars(oneline(what), CHANGE_LINE_CHARS),
        "title": truncate_chars(oneline(change.title), CHANGE_LINE_CHARS),
        "type": change.type,
        "labels": labels,
        "when": oneline(change.when),
        "why": truncate_chars(oneline(change.why), CHANGE_LINE_CHARS),
        "time": change.time,
        "end_time": change.end_time,
        "url": change.url,
        "line": truncate_chars(oneline(line), CHANGE_LINE_CHARS),
    }


def changes_context(event: Event) -> dict[str, Any]:
    """`changes`: the event's related annotations as rows, and plain text for templates that take one string:
    `lines` (one change a line, its link after it, then "… and N more"). None when there are none."""
    if not event.changes:
        return {"changes": None}
    rows = [change_row(c) for c in event.changes]
    lines = []
    for row in rows:
        lines.append(f"• {row['line']}")
        if row["url"]:
            lines.append(f"  {row['url']}")
    more = f"… and {event.more_changes} more" if event.more_changes else ""
    if more:
        lines.append(more)
    return {
        "changes": {
            "heading": CHANGES_HEADING,
            "rows": rows,
            "more": event.more_changes,
            "more_text": more,
            "lines": "\n".join(lines),
        }
    }


def template_context(event: Event, settings: AdapterSettings) -> dict[str, Any]:
    colour = COLOURS.get(event.kind, "#4A90E2")
    return {
        **group_context(event),
        **changes_context(event),
        "event": msgspec.to_builtins(event),
        "facts": facts(event),
        "operator_words": OPERATOR_WORDS.get(event.operator or "", event.operator or ""),
        "colour_hex": colour,
        "colour_int": int(colour[1:], 16),
        "severity": SEVERITY.get(event.kind, "info"),
        "priority": PRIORITY.get(event.kind, "P5"),
        "incident_key": event.incident_key(),
        "webhook_type": event.webhook_type,
        "base_url": settings.base_url,
    }
