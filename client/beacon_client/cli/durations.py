"""Durations for the CLI's options: beacon_client.notation.durations' notation, as a timedelta (`DURATION`) or as
whole seconds (`SECONDS`, where a bare number is seconds). The notation is imported when a value is read, not by
`--help`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import click


def _parse(
    type_: click.ParamType, value: Any, param: click.Parameter | None, ctx: click.Context | None, **examples: str
) -> timedelta:
    from beacon_client.notation.durations import parse_duration

    try:
        return parse_duration(str(value), **examples)
    except ValueError as exc:
        type_.fail(str(exc), param, ctx)


class Duration(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        return value if isinstance(value, timedelta) else _parse(self, value, param, ctx)


class Seconds(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if text.isascii() and text.isdigit():
            return int(text)
        return int(_parse(self, text, param, ctx, examples="90, 90s, 5m, 2h or 1h30m").total_seconds())


DURATION = Duration()
SECONDS = Seconds()
