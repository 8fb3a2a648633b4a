"""Config checks shared by adapters (built in and plugins): http(s) URLs, e-mail addresses, secret-free targets."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from email_validator import EmailNotValidError, validate_email

from adapters.contract import ConfigError

MAX_URL_LENGTH = 2048


def http_url_problem(value: str, *, max_length: int = MAX_URL_LENGTH) -> str | None:
    """Why `value` is not an acceptable http(s) URL, or None when it is."""
    if len(value) > max_length:
        return f"is longer than {max_length} characters"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "contains whitespace or control characters"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range or not a number
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in {"http", "https"}:
        return "must be an http:// or https:// URL"
    if not parts.hostname:
        return "has no host"
    try:
        httpx.URL(value)  # what sends it: e.g. `0177.0.0.1` is a host to urlsplit, an invalid address to httpx
    except httpx.InvalidURL:
        return "is not a valid URL"
    return None


def check_http_url(value: str, key: str) -> None:
    problem = http_url_problem(value)
    if problem:
        raise ConfigError(key, f"`config.{key}` {problem}.")


def check_email(value: str, key: str, index: int | None = None) -> None:
    where = f"`config.{key}`" if index is None else f"`config.{key}[{index}]`"
    try:
        validate_email(value, check_deliverability=False)  # syntax only: no DNS at validation time
    except EmailNotValidError as exc:
        raise ConfigError(key, f"{where} is not a valid e-mail address: {exc}") from None


def url_target(url: str) -> str:
    """`host[:port]/…/` + the last 4 characters of the path: recognisable, and the rest of the URL stays secret."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    path = parts.path.strip("/")
    return f"{host}/…/{path[-4:]}" if path else host


def key_target(key: str) -> str:
    return "…" + key[-4:]
