"""Jinja environment for the service's own pages (adapters build their own sandboxed environment)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from app.settings import TEMPLATES_DIR

# A span neither starts nor ends with a space, so a lone backtick in a sentence does not pair with the next one.
_CODE_SPAN = re.compile(r"`([^`\s](?:[^`\n]*[^`\s])?)`")


def code_spans(text: Any) -> Markup:
    """Text written for people with `code` in backticks (error messages, warnings, the error catalogue) as HTML:
    escaped, each backticked span a <code> element; a lone backtick stays as it is."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(str(text)))))


@cache
def page_environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
    )
    env.filters["code_spans"] = code_spans
    return env


def render_template(name: str, **context: Any) -> str:
    return page_environment().get_template(name).render(**context)
