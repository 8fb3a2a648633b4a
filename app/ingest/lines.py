"""Splitting a stream of NDJSON bytes into lines, holding at most one line's worth of bytes (plus a chunk).

A line longer than the event limit is not buffered: the splitter reports it once and then skips bytes until
the next newline, so one giant line cannot make the server hold it.
"""

from __future__ import annotations


class LineSplitter:
    def __init__(self, max_line: int) -> None:
        self._max = max_line
        self._pending = b""
        self._skipping = False

    def feed(self, chunk: bytes) -> tuple[list[bytes], bool]:
        """(complete lines in `chunk`, whether an over-long line began after them)."""
        lines, oversized, _ = self.feed_checked(chunk)
        return lines, oversized

    def feed_checked(self, chunk: bytes) -> tuple[list[bytes], bool, bool]:
        """As `feed`, plus whether those lines may hold a `\\u0000` escape (a NUL, which jsonb refuses).

        One scan of the whole region for a backslash (memchr speed), and only if there is one a scan for
        the escape, costs far less than looking inside each event.
        """
        if self._skipping:
            cut = chunk.find(b"\n")
            if cut < 0:
                return [], False, False
            self._skipping = False
            chunk = chunk[cut + 1 :]
        buf = self._pending + chunk if self._pending else chunk
        cut = buf.rfind(b"\n")
        if cut < 0:
            lines: list[bytes] = []
            rest = buf
            nul = False
        else:
            region = buf[:cut]
            nul = b"\\" in region and b"\\u0000" in region
            lines = region.split(b"\n")
            rest = buf[cut + 1 :]
        if len(rest) > self._max:
            self._pending = b""
            self._skipping = True
            return lines, True, nul
        self._pending = rest
        return lines, False, nul

    def finish(self) -> list[bytes]:
        """The last line, when the body does not end with a newline."""
        rest, self._pending = self._pending, b""
        return [rest] if rest and not self._skipping else []
