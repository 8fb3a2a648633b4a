"""Jinja environment for the service's own pages (adapters build their own sandboxed environment)."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from app.settings import TEMPLATES_DIR


@cache
def page_environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
    )


def render_template(name: str, **context: Any) -> str:
    return page_environment().get_template(name).render(**context)
