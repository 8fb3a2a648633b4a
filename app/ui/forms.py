"""The body type of console forms (URL-encoded fields)."""

from __future__ import annotations

from typing import Annotated

from litestar.enums import RequestEncodingType
from litestar.params import Body

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
