"""Paths that speak another protocol (the shippers' endpoints, app/shippers/) answer their errors in that
protocol's shape instead of Beacon's envelope: (path test, shape) pairs, made by app/shippers/routes.py and held by
the app's Services."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from litestar import Request, Response

from app.errors import BeaconError

ErrorShape = Callable[[Request[Any, Any, Any], BeaconError, str], Response[Any]]
ShapedPaths = Sequence[tuple[Callable[[str], bool], ErrorShape]]


def shape_for(shapes: ShapedPaths, path: str) -> ErrorShape | None:
    return next((shape for applies, shape in shapes if applies(path)), None)
