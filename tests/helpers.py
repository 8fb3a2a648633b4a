"""Assertions shared by the tests: what a client checks on every error."""

from __future__ import annotations

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
