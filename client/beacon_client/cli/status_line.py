"""A self-rewriting status line on stderr, shown only on a terminal (the progress of `ingest` and `export`)."""

from __future__ import annotations

import sys
import time


class StatusLine:
    """Rewrites one line at most every `interval` seconds; `done` ends it with a newline if it was shown."""

    def __init__(self, enabled: bool, interval: float = 0.2) -> None:
        self.enabled = enabled
        self.interval = interval
        self.started = time.monotonic()
        self._last = float("-inf")  # the first update is shown
        self._shown = False

    def due(self, *, force: bool = False) -> float | None:
        """Seconds since the start when the line should be rewritten now, else None."""
        if not self.enabled:
            return None
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return None
        self._last = now
        return now - self.started

    def show(self, text: str) -> None:
        sys.stderr.write("\r" + text)
        sys.stderr.flush()
        self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
