"""`warnings` in successful answers: what was accepted but is probably not what was meant.

A warning never changes what the request did; it names the likely mistake (`field`, `param`) and, when
there is one, the closest known name (`suggestion`), so that a client can show it next to the result.
"""

from __future__ import annotations

import msgspec


class ResultWarning(msgspec.Struct, kw_only=True):
    code: str  # `unknown_field`, `unknown_dataset`, `time_from_arrival`
    message: str
    field: str | None = None  # the event field (or dataset) it is about
    suggestion: str | None = None  # the closest known name ("did you mean ...?")
    param: str | None = None  # the request parameter that would change the outcome
