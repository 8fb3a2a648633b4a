from __future__ import annotations

from typing import Annotated

import msgspec

from app.schemas import AwareDatetime, RequestBody

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class TokenCreate(RequestBody):
    name: Name
    scopes: Annotated[list[str], msgspec.Meta(min_length=1)]
    datasets: list[str] | None = None
    expires_at: AwareDatetime | None = None


class TokenOut(msgspec.Struct, kw_only=True):
    id: str
    name: str
    scopes: list[str]
    datasets: list[str] | None
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    issuer_id: str | None = None  # the token that made this one; None for the CLI's root tokens
    object: str = "token"


class TokenCreated(TokenOut, kw_only=True):
    token: str  # the token text: shown in this response only
