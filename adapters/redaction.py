"""Masking secrets in text that leaves an adapter: every secret-bearing part of a secret, in any encoding.

A destination may echo our request in its error page ("Cannot POST /services/T000/B000/XXXX", a 404 page that
HTML-escapes the path, a JSON body that writes `\\/`), so masking the exact secret is not enough. A secret is
cut into the parts that carry it (for an http(s) URL: its userinfo and the Basic credentials made of it, its
path and each path segment, its query and each query value, its fragment), and the text is searched in a
decoded view: percent escapes, HTML character references and JSON escapes undone (repeatedly, for
double-encoded text), case ignored. Each match is masked in the original text, whatever form it took.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import unquote, urlsplit

MASK = "**********"
# A path, path segment, query value or user name shorter than this is not masked on its own (`v1`, `api`,
# `true`): it carries no secret worth garbling every such word of an error for. The whole secret always is.
MIN_PART = 4

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#?[0-9A-Za-z]{1,31};|\\u[0-9A-Fa-f]{4}|\\[\\/\"']")
_DECODE_ROUNDS = 3


def secret_parts(secret: str) -> list[str]:
    """The strings that would give `secret` away: itself and, for an http(s) URL, the parts that carry it."""
    parts = [secret]
    try:
        url = urlsplit(secret)
    except ValueError:
        return parts
    if url.scheme.lower() not in {"http", "https"} or not url.netloc:
        return parts
    userinfo, at, _ = url.netloc.rpartition("@")
    if at:
        user, _, password = userinfo.partition(":")
        basic = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        parts += [userinfo, password, basic]  # httpx sends URL userinfo as Basic credentials
        if len(unquote(user)) >= MIN_PART:
            parts.append(user)
    values = [pair.partition("=")[2] for pair in re.split("[&;]", url.query)]
    pieces = [url.path, url.query, url.fragment, *url.path.split("/"), *values]
    parts += [p for p in pieces if len(unquote(p)) >= MIN_PART]
    return list(dict.fromkeys(p for p in parts if p))


def _unescape(token: str) -> str:
    """One escape undone, as latin-1 characters standing for bytes."""
    if token[0] == "%":
        return chr(int(token[1:], 16))
    if token[0] == "&":
        text = html.unescape(token)
    elif token[1] == "u":
        text = chr(int(token[2:], 16))
    else:
        text = token[1]
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


def _decoded(text: str) -> tuple[str, list[tuple[int, int]] | None]:
    """`text` as UTF-8 bytes (one latin-1 character each), escapes undone, lower-cased; and for each
    character of that view the span of `text` it comes from (None when that is the character itself)."""
    if text.isascii() and not _ESCAPE.search(text):
        return text.lower(), None
    spans = [(i, i + 1) for i, ch in enumerate(text) for _ in ch.encode("utf-8", "surrogatepass")]
    view = text.encode("utf-8", "surrogatepass").decode("latin-1")
    for _ in range(_DECODE_ROUNDS):
        pieces: list[str] = []
        new_spans: list[tuple[int, int]] = []
        pos = 0
        for match in _ESCAPE.finditer(view):
            start, end = match.span()
            decoded = _unescape(match.group())
            pieces += [view[pos:start], decoded]
            new_spans += spans[pos:start] + [(spans[start][0], spans[end - 1][1])] * len(decoded)
            pos = end
        if not pos:
            break
        pieces.append(view[pos:])
        new_spans += spans[pos:]
        view, spans = "".join(pieces), new_spans
    return view.lower(), spans  # latin-1 characters lower-case one to one


@lru_cache(maxsize=1024)
def _needles(secrets: tuple[str, ...]) -> frozenset[str]:
    """What to look for, in the decoded view, to find `secrets` (an adapter's are the same on every send)."""
    needles = {_decoded(part)[0] for secret in secrets if secret for part in secret_parts(secret)}
    needles.discard("")
    return frozenset(needles)


def secret_spans(text: str, secrets: Iterable[str]) -> list[tuple[int, int]]:
    """The spans of `text` that give a secret away, merged and in order."""
    if not text:
        return []
    needles = _needles(tuple(secrets))
    if not needles:
        return []
    view, spans = _decoded(text)
    found: list[tuple[int, int]] = []
    for needle in needles:
        at = view.find(needle)
        while at != -1:
            end = at + len(needle)
            found.append((spans[at][0], spans[end - 1][1]) if spans else (at, end))
            at = view.find(needle, at + 1)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every part of every secret masked, in whatever encoding it appears."""
    out: list[str] = []
    pos = 0
    for start, end in secret_spans(text, secrets):
        out += [text[pos:start], MASK]
        pos = end
    return "".join(out) + text[pos:] if out else text
