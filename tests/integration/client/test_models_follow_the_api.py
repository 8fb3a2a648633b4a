"""The client's models follow the API (issue 30 item 8): every endpoint of beacon_client.endpoints is matched to its
operation in the served /schema/openapi.json (method and path), and the model it reads the answer into is compared
with that operation's response schema, nested models too. Same field names; types that read what the API sends
(a datetime where the API sends an RFC 3339 string); and a field the API may leave out has a default in the
client, one it may send as null takes None. A field the API adds (as deliveries' `alert_group_key` once was) or
drops, or a type that changes, fails here.

The client is lenient the other way on purpose: a field the API always sends may still have a default in the
client (a newer client against an older server), and may take None where the API never sends null.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import msgspec
from msgspec import inspect as mi

import beacon_client.endpoints
import beacon_client.models
from beacon_client.call import Call

# Where the API's document says less than the service does, said once and checked still to be so (an entry that
# no longer differs fails, to be removed). GET /v1/routing answers with the schema of PUT's body, in which
# `object` and `version` may be left out; the answer always has both, and put_routing needs the version back.
API_LOOSER: dict[str, str] = {
    "get_routing.object: null": "PUT's body schema: the answer always has it",
    "get_routing.version: null": "PUT's body schema: the answer always has it",
    "get_routing.version: may be absent": "PUT's body schema: the answer always has it",
}


def endpoints() -> Iterator[tuple[str, Callable[..., Call[Any]]]]:
    package = beacon_client.endpoints
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, fn in vars(module).items():
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_"):
                yield name, fn


def placeholder(hint: Any) -> Any:
    """A value of the parameter's type, to build the request (ids and names are one path segment)."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if str in options:
        return "x1"
    for option in options:
        origin = typing.get_origin(option) or option
        if origin is bytes:
            return b""
        if issubclass(origin, Mapping):
            return {}
        if issubclass(origin, Iterable):
            return []
    raise AssertionError(f"no placeholder for {hint}")


def request_of(fn: Callable[..., Call[Any]]) -> tuple[Call[Any], Any]:
    """The call made with placeholders for the required arguments, and the type its answer is read into."""
    hints = typing.get_type_hints(fn)
    required = [
        placeholder(hints[name])
        for name, p in inspect.signature(fn).parameters.items()
        if p.default is inspect.Parameter.empty and p.kind is not p.KEYWORD_ONLY
    ]
    (answer,) = typing.get_args(hints["return"])
    return fn(*required), answer


class Api:
    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas = document["components"]["schemas"]
        self.operations: list[tuple[str, re.Pattern[str], str, dict[str, Any]]] = [
            (method.upper(), re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"), path, operation)
            for path, item in document["paths"].items()
            for method, operation in item.items()
        ]

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        """The operation a request goes to: a literal path before a template (`/v1/alerts/groups`, not
        `/v1/alerts/{fingerprint}`)."""
        found = [(p, op) for m, rx, p, op in self.operations if m == method and rx.match(path)]
        assert found, f"{method} {path}: no such operation in the API"
        return min(found, key=lambda pair: pair[0].count("{"))

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.schemas[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def alternatives(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        schema = self.resolve(schema)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return [alt for option in schema[key] for alt in self.alternatives(option)]
        if isinstance(schema.get("type"), list):
            return [{**schema, "type": t} for t in schema["type"]]
        return [schema]


SIMPLE = {mi.StrType: "string", mi.IntType: "integer", mi.FloatType: "number", mi.BoolType: "boolean"}


class Comparison:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.drift: list[str] = []
        self.looser_seen: set[str] = set()
        self.models: set[type] = set()
        self._done: set[tuple[type, int]] = set()

    def differ(self, where: str, what: str) -> None:
        if f"{where}: {what}" in API_LOOSER:
            self.looser_seen.add(f"{where}: {what}")
        else:
            self.drift.append(f"{where}: {what}")

    def compare(self, client: mi.Type, schema: dict[str, Any], where: str) -> None:
        options = self.api.alternatives(schema)
        api_null = any(o.get("type") == "null" for o in options)
        options = [o for o in options if o.get("type") != "null"]
        kinds = list(client.types) if isinstance(client, mi.UnionType) else [client]
        if api_null and not any(isinstance(k, mi.NoneType) for k in kinds):
            self.differ(where, "null")
        kinds = [k for k in kinds if not isinstance(k, mi.NoneType)]
        if len(kinds) == 1 and isinstance(kinds[0], mi.AnyType):
            return
        if len(kinds) != 1 or len(options) != 1:
            self.differ(where, f"the client reads {kinds}, the API sends one of {options}")
            return
        self.compare_one(kinds[0], options[0], where)

    def compare_one(self, client: mi.Type, api: dict[str, Any], where: str) -> None:
        kind, fmt = api.get("type"), api.get("format")
        if isinstance(client, mi.StructType):
            self.compare_struct(client, api, where)
        elif isinstance(client, mi.DictType):  # a dict reads any object (the routing document's parts stay dicts)
            if kind != "object":
                self.differ(where, f"the client reads an object, the API sends {api}")
            elif isinstance(api.get("additionalProperties"), dict):
                self.compare(client.value_type, api["additionalProperties"], f"{where}[*]")
        elif isinstance(client, mi.ListType):
            if kind != "array":
                self.differ(where, f"the client reads a list, the API sends {api}")
            else:
                self.compare(client.item_type, api.get("items", {}), f"{where}[]")
        elif isinstance(client, mi.DateTimeType):
            if kind != "string" or fmt not in (None, "date-time"):
                self.differ(where, f"the client reads a datetime, the API sends {api}")
        elif kind == "string" and fmt == "date-time":
            self.differ(where, f"the API sends a date-time, the client reads {client}")
        elif SIMPLE.get(type(client)) != kind:
            self.differ(where, f"the client reads {client}, the API sends {api}")

    def compare_struct(self, client: mi.StructType, api: dict[str, Any], where: str) -> None:
        self.models.add(client.cls)
        if (client.cls, id(api)) in self._done:
            return
        self._done.add((client.cls, id(api)))
        if api.get("type") != "object" or "properties" not in api:
            self.differ(where, f"the client reads {client.cls.__name__}, the API sends {api}")
            return
        properties, required = api["properties"], set(api.get("required", ()))
        fields = {f.encode_name: f for f in client.fields}
        for name in sorted(properties.keys() - fields.keys()):
            self.differ(f"{where}.{name}", f"sent by the API, missing in {client.cls.__name__}")
        for name in sorted(fields.keys() - properties.keys()):
            self.differ(f"{where}.{name}", f"in {client.cls.__name__}, not sent by the API")
        for name in sorted(fields.keys() & properties.keys()):
            if name not in required and fields[name].required:
                self.differ(f"{where}.{name}", "may be absent")
            self.compare(fields[name].type, properties[name], f"{where}.{name}")


def response_schema(operation: dict[str, Any]) -> dict[str, Any] | None:
    (status,) = [code for code in operation["responses"] if code.startswith("2")]
    content = operation["responses"][status].get("content") or {}
    return content["application/json"]["schema"] if "application/json" in content else None


async def test_every_model_of_the_client_follows_the_served_openapi_document(client):
    answer = await client.get("/schema/openapi.json")
    assert answer.status_code == 200
    api = Api(answer.json())
    comparison = Comparison(api)
    for name, fn in endpoints():
        call, answer_type = request_of(fn)
        path, operation = api.operation(call.method, call.path)
        schema = response_schema(operation)
        if answer_type is type(None):
            assert schema is None, f"{name}: {call.method} {path} answers JSON, the client reads nothing"
            continue
        assert schema is not None, f"{name}: {call.method} {path} answers no JSON, the client reads {answer_type}"
        comparison.compare(mi.type_info(answer_type), schema, name)

    assert comparison.drift == []
    assert comparison.looser_seen == set(API_LOOSER), "the API's document says more now: drop the entries"
    defined = {
        cls
        for cls in vars(beacon_client.models).values()
        if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and cls.__module__ == "beacon_client.models"
    }
    compared = {getattr(cls, "__origin__", cls) for cls in comparison.models}
    assert defined - compared - {beacon_client.models.Resource} == set(), "models no endpoint reads"
