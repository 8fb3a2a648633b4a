"""Assertions shared by the tests: what a client checks on every error."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx


def assert_error(
    response: httpx.Response, status: int, code: str, *, type_: str | None = None, param: str | None = None
) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert err["code"] == code, err
    if type_ is not None:
        assert err["type"] == type_
    assert err["message"] and isinstance(err["message"], str)
    assert err["doc_url"].endswith(f"/errors#{code}")
    assert err["request_id"].startswith("req_") and err["request_id"][4:].isalnum()
    assert response.headers["x-request-id"] == err["request_id"]
    if param is not None:
        assert err.get("param") == param, err
    return err


class _Collect(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.lines = lines
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))  # the formatted text, tracebacks included


@contextmanager
def captured_logs(*names: str) -> Iterator[list[str]]:
    """Every log line (DEBUG and up) of the root logger and of `names` (loggers that do not propagate), as text.

    Works with or without pytest's logging plugin (`-p no:logging`), unlike `caplog`.
    """
    lines: list[str] = []
    handler = _Collect(lines)
    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("litestar", *names))]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)
