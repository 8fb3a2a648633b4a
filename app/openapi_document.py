"""What the served OpenAPI document says beyond what Litestar derives from the handlers' signatures.

Litestar writes types; the server checks more than types (app/inputs.py, app/pagination.py, the services). A
document looser than the server makes generated clients and fuzzers send requests the server refuses, so the
document is finished here with the server's own rules, taken from the definitions it validates with (never
copied numbers): page sizes, dataset and label names, enumerations, the accepted time range, no NUL in any text.
And with what a reader needs: the package's version, a summary and description for every operation (from the
handler's docstring), a description for every parameter, `format: date-time` on every datetime, NDJSON bodies
described so that generators understand them, and links from each created resource to the operations on it.

`finish(document)` returns a finished copy; `FinishedJson` and `FinishedYaml` serve it (app/openapi.py). A rule
that names a part of the document that is no longer there raises, so a renamed field cannot silently lose it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from app.auth import SCOPES
from app.datasets.names import DATASET_NAME
from app.db.annotation import ENVIRONMENT_WIDE
from app.deliveries.schemas import STATUSES as DELIVERY_STATUSES
from app.ingest.golayout import NAMED_LAYOUTS
from app.inputs import NUL
from app.monitors.schemas import STATES as MONITOR_STATES
from app.pagination import DEFAULT_LIMIT, MAX_LIMIT
from app.routing.labels import LABEL_NAME, MAX_LABELS, MAX_VALUE_CHARS
from app.routing.matchers import MATCHER_SHAPE
from app.routing.schemas import ALERT_STATES, SILENCE_STATES
from app.schemas import EARLIEST, LATEST
from beacon_client.notation.timespans import RELATIVE_TIME as RELATIVE_NOTATION
from beacon_client.notation.timespans import TIMESPAN_UNITS

Schema = dict[str, Any]
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def package_version() -> str:
    try:
        return version("beacon")
    except PackageNotFoundError:  # a checkout run without installing: say so rather than invent a number
        return "0+unknown"


def anchored(pattern: str) -> str:
    """A Python `fullmatch` pattern as an ECMA-262 one (JSON Schema patterns search: anchor them)."""
    return f"^(?:{pattern})$"


# Text without U+0000 (app/inputs.py refuses it everywhere: PostgreSQL's text cannot hold it).
NO_NUL = "^[^\\u0000]*$"
NOT_BLANK = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
assert NUL == "\x00"


def _years(first: int, last: int) -> str:
    """A regular expression for the four-digit years first..last (here 1970..2199)."""
    assert (first, last) == (1970, 2199), "update the year pattern with the range"
    return "(?:19[7-9][0-9]|2[01][0-9][0-9])"


# RFC 3339 date-time with an offset, in the years the server accepts (app/schemas.py: EARLIEST..LATEST).
DATE_TIME_IN_RANGE = "^" + _years(EARLIEST.year, LATEST.year - 1) + "-"
# `now`, or `now-3h`: the query language's relative time, with the units it knows (beacon_client/notation/timespans.py).
_UNITS = "|".join(sorted(map(re.escape, TIMESPAN_UNITS), key=len, reverse=True))
RELATIVE_TIME = "^\\s*" + anchored(RELATIVE_NOTATION.pattern.replace("[A-Za-z]+", f"(?:{_UNITS})"))[1:-1] + "\\s*$"
assert "[A-Za-z]+" in RELATIVE_NOTATION.pattern, "update RELATIVE_TIME with beacon_client/notation/timespans.py"
DATASET = anchored(DATASET_NAME.pattern)
LABEL = anchored(LABEL_NAME.pattern)
MATCHER = anchored(MATCHER_SHAPE.pattern)


@cache
def _date_time() -> Schema:
    return {"type": "string", "format": "date-time", "pattern": DATE_TIME_IN_RANGE}


def instant() -> Schema:
    """A time as queries take it: RFC 3339 with an offset, or relative to now (`now-3h`, app/timeparams.py)."""
    return {"anyOf": [_date_time(), {"type": "string", "pattern": RELATIVE_TIME}]}


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


# A Go layout holds at least one element (app/ingest/golayout.py `_next_chunk`: a digit 1-5 alone is one, as are
# `Jan`, `Mon`, `MST`, `PM`, `pm`, zone offsets), or is the name of one of Go's layouts, in any case.
GO_LAYOUT = (
    "(?:^(?:" + "|".join(_any_case(name) for name in NAMED_LAYOUTS) + ")$)|[1-5]|Jan(?![a-z])|Mon(?![a-z])"
    "|MST|PM|pm|-07|Z07|0[1-6]"
)
# An http(s) URL as adapters/checks.py `http_url_problem` takes it: a host, a port in range, no whitespace.
_PORT = "(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
HTTP_URL = "^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*(?::" + _PORT + ")?(?:[/?#][!-~]*)?$"


# --- the finishing pass -------------------------------------------------------------------------------------------


def finish(document: Schema, notifier_types: list[str]) -> Schema:
    """A finished copy of Litestar's document; `notifier_types`: the registered adapters' types (plugins too)."""
    doc = copy.deepcopy(document)
    _version(doc)
    _parameters(doc)
    _enumerations(doc)
    _request_bodies(doc, notifier_types)
    _datetimes(doc)
    _operations(doc)
    _shippers(doc)
    _links(doc)
    return doc


def operations(doc: Schema) -> Iterator[tuple[str, str, Schema]]:
    for path, item in doc.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def _version(doc: Schema) -> None:
    doc["info"]["version"] = package_version()


def _not_nullable(schema: Schema) -> Schema:
    """An optional text parameter is absent or a text: a query string cannot carry JSON's null (`?type=null` is the
    text "null"). A number's `null` stays: the server reads `?limit=null` as no limit given."""
    branches = schema.get("oneOf")
    if branches is not None:
        kept = [b for b in branches if b.get("type") != "null"]
        if len(kept) == 1 and kept[0].get("type") in ("string", "array"):
            rest = {k: v for k, v in schema.items() if k != "oneOf"}
            return {**kept[0], **rest}
    return schema


def component(doc: Schema, name: str) -> Schema:
    schemas = doc["components"]["schemas"]
    if name not in schemas:
        raise KeyError(f"the OpenAPI document has no component {name!r}: update app/openapi_document.py")
    found: Schema = schemas[name]
    return found


def prop(doc: Schema, name: str, field: str) -> Schema:
    props = component(doc, name).get("properties", {})
    if field not in props:
        raise KeyError(f"component {name!r} has no property {field!r}: update app/openapi_document.py")
    found: Schema = props[field]
    return found


def strings_in(schema: Schema) -> Iterator[Schema]:
    """The string schemas a property's schema holds directly (itself, or a branch of its oneOf)."""
    if schema.get("type") == "string":
        yield schema
    for branch in [*schema.get("oneOf", ()), *schema.get("anyOf", ())]:
        yield from strings_in(branch)


def arrays_in(schema: Schema) -> Iterator[Schema]:
    if schema.get("type") == "array":
        yield schema
    for branch in [*schema.get("oneOf", ()), *schema.get("anyOf", ())]:
        yield from arrays_in(branch)


def objects_in(schema: Schema) -> Iterator[Schema]:
    if schema.get("type") == "object":
        yield schema
    for branch in [*schema.get("oneOf", ()), *schema.get("anyOf", ())]:
        yield from objects_in(branch)


# --- parameters ---------------------------------------------------------------------------------------------------

# Descriptions of the parameters many operations share, by name and place.
ID_PREFIXES = {
    "annotation_id": ("annotation", "ann_"),
    "notifier_id": ("notifier", "ntf_"),
    "monitor_id": ("monitor", "mon_"),
    "delivery_id": ("delivery", "dlv_"),
    "token_id": ("token", "tok_"),
}
SHARED_DESCRIPTIONS = {
    ("query", "limit"): f"Page size, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}); outside that range is a 400.",
    ("query", "cursor"): "The `next_cursor` of the previous page (opaque and signed: only the server makes them).",
    ("path", "silence_id"): "The silence's id (a UUID, as Alertmanager's).",
    ("path", "fingerprint"): "The alert's fingerprint: 16 hex characters, a hash of its labels.",
    ("path", "dataset"): "The dataset's name (created on the first write).",
    ("path", "name"): "The name.",
    ("path", "index"): "The default index (a Beacon dataset) of the bulk request's actions.",
    ("query", "format"): "`json` for a JSON answer; text otherwise.",
}


def _parameters(doc: Schema) -> None:
    for _method, path, op in operations(doc):
        for param in op.get("parameters", ()):
            place, name = param["in"], param["name"]
            schema = param["schema"] = _not_nullable(param.get("schema", {}))
            if place == "path" and name in ID_PREFIXES:
                kind, prefix = ID_PREFIXES[name]
                param.setdefault("description", f"The {kind}'s id (`{prefix}` and hex).")
            elif (place, name) in SHARED_DESCRIPTIONS and not param.get("description"):
                param["description"] = SHARED_DESCRIPTIONS[(place, name)]
            if place == "path" and name == "name" and path.startswith("/v1/datasets/"):
                param["description"] = "The dataset's name."
            if name == "limit" and place == "query":
                schema.update(minimum=1, maximum=MAX_LIMIT, default=DEFAULT_LIMIT)
            elif (place, name) == ("path", "dataset") or (path.startswith("/v1/datasets/") and name == "name"):
                schema["pattern"] = DATASET
            elif name == "datasets" and place == "query":
                # Comma-separated or repeated; each piece (spaces around it ignored) a name, or `*`.
                piece = rf"\s*(?:\*|{DATASET_NAME.pattern})?\s*"
                schema["items"]["pattern"] = f"^{piece}(?:,{piece})*$"
            elif name == "filter" and place == "query":
                schema["items"].update(pattern=MATCHER, format="label-matcher")
            elif name in ("start_time", "end_time") and place == "query":
                described = {k: v for k, v in schema.items() if k not in ("type",)}
                param["schema"] = {**described, **instant()}
            elif name == "timestamp-field":
                schema["minLength"] = 1  # an empty name is a 400 (app/ingest/controllers.py)
            elif name == "timestamp-format":
                schema["pattern"] = GO_LAYOUT
            elif (place, name) == ("header", "If-Match"):
                # A version (app/routing/config.py parse_if_match): a blank one names none, and is refused.
                schema["pattern"] = NOT_BLANK
                param["required"] = path == "/v1/routing"  # PUT: 428 without it; an import applies over any
            for text in strings_in(param["schema"]):
                text.setdefault("pattern", NO_NUL)
            for array in arrays_in(param["schema"]):
                for text in strings_in(array.get("items", {})):
                    text.setdefault("pattern", NO_NUL)


def enumerate_parameter(doc: Schema, method: str, path: str, name: str, values: tuple[str, ...]) -> None:
    """A query parameter that takes one of `values` (the tuple the service checks it against)."""
    for param in doc["paths"][path][method].get("parameters", ()):
        if param["name"] == name:
            param["schema"] = {**param["schema"], "enum": list(values)}
            param["schema"].pop("pattern", None)
            return
    raise KeyError(f"{method.upper()} {path} has no parameter {name!r}: update app/openapi_document.py")


def _enumerations(doc: Schema) -> None:
    enumerate_parameter(doc, "get", "/v1/monitors", "state", MONITOR_STATES)
    enumerate_parameter(doc, "get", "/v1/silences", "state", SILENCE_STATES)
    enumerate_parameter(doc, "get", "/v1/alerts", "state", ALERT_STATES)
    enumerate_parameter(doc, "get", "/v1/alerts/groups", "state", ALERT_STATES)
    enumerate_parameter(doc, "get", "/v1/deliveries", "status", DELIVERY_STATUSES)


# --- request bodies -----------------------------------------------------------------------------------------------


def refs_in(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            yield ref.rsplit("/", 1)[1]
        for value in schema.values():
            yield from refs_in(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from refs_in(value)


def request_components(doc: Schema) -> list[str]:
    """The components a request body holds, directly or inside another."""
    todo = [name for _m, _p, op in operations(doc) for name in refs_in(op.get("requestBody", {}))]
    seen: list[str] = []
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.append(name)
            todo.extend(refs_in(component(doc, name)))
    return seen


def _each_string(schema: Schema, apply: Callable[[Schema], None]) -> None:
    """`apply` to every string schema inside `schema` (not behind a $ref: components are finished one by one)."""
    if schema.get("type") == "string" or (isinstance(schema.get("type"), list) and "string" in schema["type"]):
        apply(schema)
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, ()):
            _each_string(branch, apply)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _each_string(schema[key], apply)
    for value in schema.get("properties", {}).values():
        _each_string(value, apply)


def _no_nul(text: Schema) -> None:
    if text.get("format") == "binary" or "enum" in text or "const" in text:
        return
    text.setdefault("pattern", NO_NUL)


def _in_range(text: Schema) -> None:
    if text.get("format") == "date-time":
        text.setdefault("pattern", DATE_TIME_IN_RANGE)


def _or_unix_time(value: Schema) -> Schema:
    """A request datetime may also be a unix time in seconds (the body's decoding converts one), in the range."""
    seconds = {"type": "number", "minimum": EARLIEST.timestamp(), "exclusiveMaximum": LATEST.timestamp()}
    if "oneOf" in value:
        return {**value, "oneOf": [*value["oneOf"], seconds]}
    return {"oneOf": [value, seconds]}


def label_map(schema: Schema, *, at_least_one: bool = False) -> None:
    """Labels as app/routing/labels.py checks them: names, at most MAX_LABELS, values of at most MAX_VALUE_CHARS."""
    for labels in objects_in(schema):
        labels.update(propertyNames={"pattern": LABEL}, maxProperties=MAX_LABELS)
        labels["additionalProperties"] = {"type": "string", "maxLength": MAX_VALUE_CHARS}
        if at_least_one:
            labels["minProperties"] = 1


def matcher_list(schema: Schema, *, at_least_one: bool = False) -> None:
    for matchers in arrays_in(schema):
        matchers["items"] = {**matchers.get("items", {}), "pattern": MATCHER, "format": "label-matcher"}
    if at_least_one:
        schema["minItems"] = 1


_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")


def _bounds_of_updates(doc: Schema, names: list[str]) -> None:
    """A partial update's field has its creation's bounds (Litestar drops a bound of 0 on `T | UnsetType`)."""
    for name in names:
        if not name.endswith("Update") or f"{name[: -len('Update')]}Create" not in names:
            continue
        create = component(doc, f"{name[: -len('Update')]}Create").get("properties", {})
        for field, value in component(doc, name).get("properties", {}).items():
            for bound in _BOUNDS:
                if bound in create.get(field, {}) and bound not in value:
                    value[bound] = create[field][bound]


# The parts of a preview's made-up event (`POST /v1/notifiers/{id}/preview`), which the server renders unchecked.
PREVIEW_PARTS = frozenset(("Event", "RecentChange", "AlertGroup", "GroupAlert"))


def _request_bodies(doc: Schema, notifier_types: list[str]) -> None:
    names = request_components(doc)
    for name in names:
        schema = component(doc, name)
        if schema.get("type") == "object" and "properties" in schema:
            # Every request Struct is a RequestBody (app/schemas.py): an unknown field is a 400.
            schema["additionalProperties"] = False
        for field, value in schema.get("properties", {}).items():
            if field == "labels" and name in PREVIEW_PARTS:
                pass  # a preview's made-up event: its labels are shown, not checked
            elif field == "labels":
                label_map(value, at_least_one=name in ("RoutingTestRequest", "AlertPost"))
            elif field in ("matchers", "source_matchers", "target_matchers"):
                matcher_list(value, at_least_one=name in ("SilenceCreate", "SilenceSpec", "SilenceUpdate"))
            elif field == "equal" and name == "InhibitRule":
                for array in arrays_in(value):
                    array["items"] = {**array.get("items", {}), "pattern": LABEL}
            elif field == "annotations" and name == "AlertPost":
                for notes in objects_in(value):
                    notes["propertyNames"] = {"pattern": LABEL}
            elif field == "apl":
                for text in strings_in(value):
                    text["format"] = "apl"
            elif field in ("start_time", "end_time") and name in ("QueryRequest", "ExportRequest"):
                schema["properties"][field] = {"anyOf": [*instant()["anyOf"], {"type": "null"}]}
            elif field == "notifier_ids":
                for array in arrays_in(value):
                    array["items"] = {**array.get("items", {}), "minLength": 1}
            elif field == "url" and name.startswith("Annotation"):
                for text in strings_in(value):
                    text["pattern"] = HTTP_URL
        _each_string(schema, _in_range)
        for field, value in schema.get("properties", {}).items():
            if "anyOf" not in value and any(text.get("format") == "date-time" for text in strings_in(value)):
                schema["properties"][field] = _or_unix_time(value)
    for name in ("AnnotationCreate", "AnnotationUpdate"):
        datasets = prop(doc, name, "datasets")
        (array,) = arrays_in(datasets)
        array.pop("type")
        items = array.pop("items")
        # Dataset names, or `["*"]` alone: environment-wide (app/annotations/service.py datasets_of).
        array["anyOf"] = [
            {"type": "array", "items": {**items, "pattern": DATASET}},
            {"type": "array", "items": {"type": "string", "const": ENVIRONMENT_WIDE}, "maxItems": 1},
        ]
    for array in arrays_in(prop(doc, "TokenCreate", "datasets")):
        array["items"] = {**array["items"], "pattern": DATASET}
    for array in arrays_in(prop(doc, "TokenCreate", "scopes")):
        array["items"] = {"type": "string", "enum": list(SCOPES)}
    prop(doc, "NotifierCreate", "type")["enum"] = notifier_types
    # An alert's labels: at least one with a value (app/routing/service.py); an annotation's: none empty.
    prop(doc, "AlertPost", "labels")["not"] = {"additionalProperties": {"maxLength": 0}}
    for name in ("AnnotationCreate", "AnnotationUpdate"):
        for labels in objects_in(prop(doc, name, "labels")):
            labels["additionalProperties"]["minLength"] = 1
    _bounds_of_updates(doc, names)
    for name in names:
        _each_string(component(doc, name), _no_nul)
    for path, method in (
        ("/v1/notifiers/{notifier_id}/preview", "post"),
        ("/v1/monitors/{monitor_id}/evaluate", "post"),
    ):
        doc["paths"][path][method]["requestBody"]["required"] = False  # no body: a test event, a real evaluation
    for _m, _p, op in operations(doc):
        json_body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if json_body is not None:
            _each_string(json_body.get("schema", {}), _no_nul)


# --- datetimes ----------------------------------------------------------------------------------------------------

DATETIME_NAMES = frozenset(
    ("time", "start_time", "end_time", "min_time", "max_time", "first_seen", "disabled_until", "starts_at", "ends_at")
)
# Not instants: a routing time interval's `start_time`/`end_time` are times of day (`09:00`).
NOT_DATETIMES = frozenset(("TimeRange",))


def is_datetime_name(field: str) -> bool:
    return field in DATETIME_NAMES or field.endswith("_at")


def _datetimes(doc: Schema) -> None:
    """Responses write datetimes as RFC 3339 text (app/timefmt.py), which Litestar documents as plain strings."""
    requests = set(request_components(doc))
    for name, schema in doc["components"]["schemas"].items():
        if name in requests or name in NOT_DATETIMES:
            continue
        for field, value in schema.get("properties", {}).items():
            if is_datetime_name(field):
                for text in strings_in(value):
                    text["format"] = "date-time"


# --- operations ---------------------------------------------------------------------------------------------------


def _default_summary(op: Schema) -> bool:
    """Litestar's summary when the handler gives none: its function's name, title-cased (`Create`, `ListAlerts`)."""
    summary = op.get("summary") or ""
    return re.fullmatch(r"[A-Z][A-Za-z]*", summary) is not None


def _operations(doc: Schema) -> None:
    """Summary: the first paragraph of the handler's docstring (Litestar makes the whole of it the description)."""
    for _method, _path, op in operations(doc):
        description = (op.get("description") or "").strip()
        if description and _default_summary(op):
            first, _, rest = description.partition("\n\n")
            op["summary"] = " ".join(first.split()).rstrip(".")
            op["description"] = rest.strip() or description
    ndjson(doc)


def ndjson(doc: Schema) -> None:
    """NDJSON, described so that generators and fuzzers understand it: text, one JSON value per line."""
    ingest = doc["paths"]["/v1/ingest/{dataset}"]["post"]["requestBody"]["content"]
    ingest["application/x-ndjson"] = {
        "schema": {
            "type": "string",
            "description": "One JSON object per line (blank lines ignored).",
            "contentMediaType": "application/x-ndjson",
        },
        "example": '{"_time": "2026-11-21T08:15:30Z", "level": "error"}\n{"level": "info"}\n',
    }
    # A JSON body may also be one event alone (an object is a batch of one); an item that is not an object fails
    # alone, counted in `failed` (api.md), so the array's items may be anything.
    array = ingest["application/json"]["schema"]
    array["items"] = {"description": "An event: a JSON object (anything else is counted in `failed`)."}
    ingest["application/json"]["schema"] = {"anyOf": [array, {"type": "object"}]}
    export = doc["paths"]["/v1/export"]["post"]["responses"]["200"]
    export["description"] = "Every row of the query: one JSON object per line, streamed."
    export["content"] = {
        "application/x-ndjson": {
            "schema": {
                "type": "string",
                "description": "One JSON object per line: a row, its columns by name.",
                "contentMediaType": "application/x-ndjson",
            }
        }
    }


# --- links --------------------------------------------------------------------------------------------------------

# A created resource -> the operations on it: (collection path, item path, id parameter).
RESOURCES = (
    ("/v1/annotations", "/v1/annotations/{annotation_id}", "annotation_id"),
    ("/v1/notifiers", "/v1/notifiers/{notifier_id}", "notifier_id"),
    ("/v1/monitors", "/v1/monitors/{monitor_id}", "monitor_id"),
    ("/v1/silences", "/v1/silences/{silence_id}", "silence_id"),
    ("/v1/tokens", "/v1/tokens/{token_id}", "token_id"),
)


def _links(doc: Schema) -> None:
    _alert_links(doc)
    _resource_links(doc)


def _alert_links(doc: Schema) -> None:
    posted = doc["paths"]["/v1/alerts"]["post"]["responses"]["200"].setdefault("links", {})
    read = doc["paths"]["/v1/alerts/{fingerprint}"]["get"]
    posted[read["operationId"]] = {
        "operationId": read["operationId"],
        "parameters": {"fingerprint": "$response.body#/fingerprints/0"},
    }


def _resource_links(doc: Schema) -> None:
    """OpenAPI links from each create to the operations on what it created (clients and stateful fuzzers follow
    them: the id in the 201 body is the path parameter of the others)."""
    paths = doc["paths"]
    for collection, item, param in RESOURCES:
        created = paths[collection]["post"]["responses"]["201"]
        links = created.setdefault("links", {})
        for other_path, item_ops in paths.items():
            if other_path != item and not other_path.startswith(item + "/"):
                continue
            for method, op in item_ops.items():
                if method not in METHODS:
                    continue
                if other_path.endswith("/rotate-secret"):
                    continue  # webhook notifiers only: the 201 does not say which type it made a link for
                name = op.get("operationId") or f"{method}{other_path}"
                links[name] = {"operationId": name, "parameters": {param: "$response.body#/id"}}


# --- the shippers' protocols --------------------------------------------------------------------------------------


def _shippers(doc: Schema) -> None:
    """Elasticsearch's bulk API needs a body (400 `parse_exception` without one); a template may come without."""
    for path in ("/v1/elastic/_bulk", "/v1/elastic/{index}/_bulk"):
        for method in ("put", "post"):
            body = doc["paths"][path][method]["requestBody"]
            body["content"]["application/x-ndjson"]["schema"]["minLength"] = 1
    for path in ("/v1/elastic/_template/{name}", "/v1/elastic/_index_template/{name}"):
        doc["paths"][path]["put"]["requestBody"]["required"] = False
    for path in ("/v1/elastic/_template/{name}", "/v1/elastic/_index_template/{name}"):
        doc["paths"][path]["put"]["requestBody"]["content"]["application/json"]["schema"] = {
            "description": "Any JSON: acknowledged, not read."
        }
    # A protobuf body is described as OpenAPI describes any media type's body: by the data it carries, here the
    # message in proto3's JSON mapping; the media type says how it travels (protobuf's binary encoding). Described
    # by nothing at all (`{}`), it would be any value, so that no request could be invalid.
    for path, message in PROTOBUF_MESSAGES.items():
        content = doc["paths"][path]["post"]["requestBody"]["content"]
        content["application/x-protobuf"] = {"schema": {"type": "object", "description": message}}
    _yaml_body(doc)


PROTOBUF_MESSAGES = {
    "/v1/logs": "An OTLP `ExportLogsServiceRequest`, as proto3's JSON mapping describes it; sent in protobuf's "
    "binary encoding.",
    "/v1/loki/api/v1/push": "A `logproto.PushRequest` (`{streams: [{labels, entries: [{timestamp, line}]}]}` in "
    "proto3's JSON mapping); sent in protobuf's binary encoding, snappy-compressed (block format).",
}


def _yaml_body(doc: Schema) -> None:
    """An Alertmanager configuration is a YAML mapping (app/routing/importing/yamltext.py refuses anything else
    with a 400): described as the object it is, not as any text."""
    content = doc["paths"]["/v1/routing/import"]["post"]["requestBody"]["content"]
    for media in content.values():
        media["schema"] = {
            "type": "object",
            "description": "The configuration's top level (`route`, `receivers`, `inhibit_rules`, ...), in YAML.",
        }
