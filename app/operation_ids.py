"""Readable operationIds: the names generated clients give their functions (`create_annotation`, `listTokens`).

Litestar's default glues the path and the handler's name (`V1AnnotationsCreate`), which nobody would keep. Here
an id is derived from the handler's name and its path, so that every one follows one rule, camelCase:

    <verb><Resource...><Rest>

- verb: the handler's first word, as a user says it (`retrieve` is get, `remove` is delete), or the HTTP method
  where one handler serves several (`putElasticBulk`, `postElasticBulk`);
- Resource: each resource the path names after `/v1`, one item (singular) when a parameter follows it, else the
  collection: plural for a list (or a handler that names the plural, `post_alerts`), singular otherwise
  (`create` makes one);
- a path that ends in the handler's own words is an action (`/rotate-secret`, `/preview`): the verb is the
  handler's, the rest of its words follow the resource (`rotateNotifierSecret`); a GET named after its path's
  last segment is a view of the resource before it (`/fields` is `listDatasetFields`, `/history` is
  `getMonitorHistory`).

A handler whose name says nothing of this (the shippers' protocol endpoints, ingest, query, export) names its
operation in its decorator (`operation_id=`). tests/fuzz/test_document.py checks that every id is unique and
follows the rule.
"""

from __future__ import annotations

from typing import Any

VERBS = {"retrieve": "get", "remove": "delete"}


def plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us"))  # `status` is one


def singular(word: str) -> str:
    if word.endswith("ies"):
        return word[: -len("ies")] + "y"
    return word[:-1] if plural(word) else word


def _words(segment: str) -> list[str]:
    return [w for w in segment.strip("_").replace("-", "_").split("_") if w]


def _camel(words: list[str]) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words)


def operation_id(route_handler: Any, http_method: str, path_components: list[Any]) -> str:
    """Litestar's `operation_id_creator`: `path_components` are strings and parameter definitions."""
    words = route_handler.handler_name.split("_")
    if len(route_handler.http_methods) > 1:  # one handler for several methods (`bulk`: PUT and POST): the method
        words = [http_method.lower(), *words]
    # The path after /v1: a static segment's words, or None for a parameter.
    parts: list[list[str] | None] = [_words(c) if isinstance(c, str) else None for c in path_components]
    if parts and parts[0] == ["v1"]:
        parts = parts[1:]
    verb, rest = VERBS.get(words[0], words[0]), words[1:]
    last = parts[-1] if parts else None
    acting = last is not None and len(parts) > 1 and set(last) <= set(words)
    if acting:  # an action on, or a view of, what the path names before it
        parts = parts[:-1]
        if last == words and http_method.upper() == "GET":
            verb, rest = ("list" if plural(words[-1]) else "get"), words
    nouns: list[str] = []
    for i, part in enumerate(parts):
        if part is None:
            continue
        many = not acting and i == len(parts) - 1 and (verb == "list" or part[-1] in rest)
        nouns.extend(part if many else [*part[:-1], singular(part[-1])])
    named = {w for part in parts if part for w in part}
    return verb + _camel(nouns) + _camel([w for w in rest if w not in named])
