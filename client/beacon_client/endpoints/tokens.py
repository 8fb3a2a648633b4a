from __future__ import annotations

from collections.abc import Sequence

from beacon_client.call import Call, TimeArg, decode, json_call, no_content, query_string, segment
from beacon_client.models import Page, Token, TokenCreated


def create_token(
    name: str, scopes: Sequence[str], *, datasets: Sequence[str] | None = None, expires_at: TimeArg | None = None
) -> Call[TokenCreated]:
    """Create a token (needs `tokens:write`); its text is in `.token`, shown this once."""
    return json_call(
        "POST",
        "/v1/tokens",
        decode(TokenCreated),
        name=name,
        scopes=list(scopes),
        datasets=list(datasets) if datasets is not None else None,
        expires_at=expires_at,
    )


def list_tokens(*, limit: int | None = None, cursor: str | None = None) -> Call[Page[Token]]:
    return Call("GET", "/v1/tokens", decode(Page[Token]), params=query_string(limit=limit, cursor=cursor))


def get_token(token_id: str) -> Call[Token]:
    return Call("GET", f"/v1/tokens/{segment(token_id)}", decode(Token))


def revoke_token(token_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/tokens/{segment(token_id)}", no_content)
