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
        if self._skipping:
            cut = chunk.find(b"\n")
            if cut < 0:
                return [], False
            self._skipping = False
            chunk = chunk[cut + 1 :]
        buf = self._pending + chunk if self._pending else chunk
        cut = buf.rfind(b"\n")
        if cut < 0:
            lines: list[bytes] = []
            rest = buf
        else:
            lines = buf[:cut].split(b"\n")
            rest = buf[cut + 1 :]
        if len(rest) > self._max:
            self._pending = b""
            self._skipping = True
            return lines, True
        self._pending = rest
        return lines, False

    def finish(self) -> list[bytes]:
        """The last line, when the body does not end with a newline."""
        rest, self._pending = self._pending, b""
        return [rest] if rest and not self._skipping else []
