"""Logging for `beacon serve`: plain lines by default, one JSON object per line with `BEACON_LOG_FORMAT=json`.

Every record carries the id of the request being handled (`request_id`, when there is one). APScheduler's
per-run lines ("Running job…", "…executed successfully", several a second) are dropped, and so is its warning
that a run was skipped because the previous one is still going: every job runs with `max_instances=1` on
purpose, so that is the design working, not news. What Beacon does is logged by Beacon (`beacon.*`): monitor
state changes (INFO), delivery failures and give-ups (WARNING), each with its ids.
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime
from typing import Any

# Set by app/request_log.py for the task that handles a request.
current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("beacon_request_id", default=None)

# The attributes every LogRecord has; anything else was passed in `extra=` and goes into the JSON object.
# (uvicorn adds `color_message`: the message with terminal colour codes.)
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "request_id",
    "color_message",
}


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id.get()
        return True


class QuietScheduler(logging.Filter):
    """Drops APScheduler's routine lines; keeps its errors (a job that raised, a scheduler that stopped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("apscheduler"):
            return True
        if record.levelno >= logging.ERROR:
            return True
        return record.levelno >= logging.WARNING and "maximum number of running instances" not in str(record.msg)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid:
            entry["request_id"] = rid
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


# Control characters in a text line, written as escapes: a message carries what clients typed (a path, a monitor's
# name, a destination's error), and a line break in it would forge a log line, a NUL would corrupt the file.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 0x7F)} | {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        # Before the traceback is added: that one keeps its lines.
        return super().formatMessage(record).translate(_ESCAPES)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        rid = getattr(record, "request_id", None)
        return f"{line} [{rid}]" if rid else line


def configure_logging(level: str = "info", fmt: str = "text") -> None:
    """Replace the root logger's handlers with one to stderr; uvicorn's loggers propagate to it."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter())
    handler.addFilter(QuietScheduler())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # The embedded PostgreSQL's wrapper narrates each command it runs; its warnings and errors still show.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    # Beacon writes its own access line (with the request id, app/request_log.py); uvicorn's would repeat it.
    logging.getLogger("uvicorn.access").disabled = True
