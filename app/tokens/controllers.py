from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, post
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import requires
from app.auth import principal
from app.pagination import CursorCodec, Limit, ListEnvelope
from app.tokens import service
from app.tokens.schemas import TokenCreate, TokenCreated, TokenOut


class TokenController(Controller):
    path = "/v1/tokens"
    tags = ["tokens"]
    opt = requires("tokens:write")

    @post("/", status_code=201)
    async def create(self, request: Request[Any, Any, Any], data: TokenCreate, db: AsyncSession) -> TokenCreated:
        """Create a token.

        The 201 body holds the token text once (`bcn_` and 40 characters); only its hash is kept. A child token holds
        no scope or dataset beyond its issuer's and expires no later. Needs `tokens:write`."""
        return await service.create_token(
            db,
            name=data.name,
            scopes=data.scopes,
            datasets=data.datasets,
            expires_at=data.expires_at,
            issuer=principal(request),
        )

    # A token that is not an unrestricted `*` reaches only the tokens it issued and theirs (404 for others).
    @get("/")
    async def list(
        self,
        request: Request[Any, Any, Any],
        db: AsyncSession,
        codec: CursorCodec,
        limit: Limit = None,
        cursor: str | None = None,
    ) -> ListEnvelope[TokenOut]:
        """List the tokens this token issued (all of them for a `*` token).

        Newest first; the token text is never shown again after creation. Needs `tokens:write`."""
        return await service.list_tokens(db, codec, principal(request), limit=limit, cursor=cursor)

    @get("/{token_id:str}")
    async def retrieve(self, request: Request[Any, Any, Any], db: AsyncSession, token_id: str) -> TokenOut:
        """Retrieve a token.

        Its name, scopes, datasets and dates, never its text. Needs `tokens:write`."""
        return service.to_out(await service.get_token(db, token_id, principal(request)))

    @delete("/{token_id:str}", status_code=204)
    async def revoke(self, request: Request[Any, Any, Any], db: AsyncSession, token_id: str) -> None:
        """Revoke a token.

        It, and every token it issued, stops working at once (204). Needs `tokens:write`."""
        await service.revoke_token(db, token_id, principal(request))
