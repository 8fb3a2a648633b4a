"""Whole seconds from `90`, `90s`, `5m`, `2h` or `1d`, for the monitor options."""

from __future__ import annotations

import re
from typing import Any

import click

_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_FORM = re.compile(r"(\d+)([smhd]?)")


class Seconds(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        match = _FORM.fullmatch(str(value).strip())
        if not match:
            self.fail(f"{value!r} is not a duration such as 90, 90s, 5m, 2h or 1d", param, ctx)
        return int(match.group(1)) * _SECONDS[match.group(2) or "s"]


SECONDS = Seconds()
