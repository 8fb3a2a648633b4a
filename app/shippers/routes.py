"""The shippers' route handlers and the error shapes of their paths, for create_app."""

from __future__ import annotations

from collections.abc import Callable

from litestar.types import ControllerRouterHandler

from app.error_shapes import ErrorShape
from app.shippers.elastic import answers as elastic_answers
from app.shippers.elastic import probes
from app.shippers.elastic.controllers import bulk, index_bulk
from app.shippers.loki import answers as loki_answers
from app.shippers.loki.controllers import loki_push
from app.shippers.otlp import answers as otlp_answers
from app.shippers.otlp.controllers import otlp_logs


def route_handlers() -> list[ControllerRouterHandler]:
    return [
        otlp_logs,
        bulk,
        index_bulk,
        probes.cluster_root,
        probes.cluster_ping,
        probes.license_info,
        probes.cluster_health,
        probes.cat_health,
        probes.get_template,
        probes.has_template,
        probes.put_template,
        loki_push,
    ]


def error_shapes() -> list[tuple[Callable[[str], bool], ErrorShape]]:
    """(path test, shape): each protocol's paths answer errors as that protocol does."""
    return [
        (lambda path: path == "/v1/logs", otlp_answers.render_error),
        (lambda path: path == "/v1/elastic" or path.startswith("/v1/elastic/"), elastic_answers.render_error),
        (lambda path: path.startswith("/v1/loki/"), loki_answers.render_error),
    ]
