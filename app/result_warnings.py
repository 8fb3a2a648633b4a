"""`warnings` in successful answers: what was accepted but is probably not what was meant.

A warning never changes what the request did; it names the likely mistake (`field`, `param`) and, when
there is one, the closest known name (`suggestion`), so that a client can show it next to the result.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

WarningCode = Literal["unknown_field", "unknown_dataset", "time_from_arrival", "too_many_fields", "too_many_cells"]


class ResultWarning(msgspec.Struct, kw_only=True):
    code: Annotated[
        WarningCode,
        msgspec.Meta(
            description="`unknown_field`: the query names a field no event of its dataset has ever had (it reads "
            "as null); `unknown_dataset`: a monitor's dataset does not exist yet; `time_from_arrival`: events "
            "without a timestamp were stamped with their arrival time although they carry a field that looks "
            "like their time; `too_many_fields`: the events of a query result hold more fields than a result "
            "carries columns (the fields the most events have are kept); `too_many_cells`: a query result stops "
            "before its row cap, at the most values (rows x columns) a result carries."
        ),
    ]
    message: Annotated[str, msgspec.Meta(description="The warning in words, with the fix.")]
    field: Annotated[
        str | None, msgspec.Meta(description="The event field (or, for `unknown_dataset`, the dataset) it is about.")
    ] = None
    suggestion: Annotated[
        str | None, msgspec.Meta(description='The closest known name ("did you mean ...?"), if any.')
    ] = None
    param: Annotated[
        str | None, msgspec.Meta(description="The request parameter that would change the outcome, if any.")
    ] = None
