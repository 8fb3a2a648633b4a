"""Issuing, listing and revoking API tokens (shared by the HTTP API and the CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import SCOPES, Principal, generate_token, hash_token
from app.datasets.names import check_dataset_name
from app.db.token import Token
from app.errors import BeaconError, not_found
from app.pagination import CursorCodec, ListEnvelope, paginate
from app.request_ids import new_id
from app.timefmt import iso_ms, iso_ms_or_none, utcnow
from app.tokens.schemas import TokenCreated, TokenOut

__all__ = ["TokenOut"]


def _fields(token: Token) -> dict[str, Any]:
    return {
        "id": token.id,
        "name": token.name,
        "scopes": list(token.scopes),
        "datasets": list(token.datasets) if token.datasets else None,
        "created_at": iso_ms(token.created_at),
        "expires_at": iso_ms_or_none(token.expires_at),
        "revoked_at": iso_ms_or_none(token.revoked_at),
    }


def to_out(token: Token) -> TokenOut:
    return TokenOut(**_fields(token))


def check_scopes(scopes: Sequence[str], param: str = "scopes") -> list[str]:
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise BeaconError(
            "invalid_field",
            f"Unknown scope {unknown[0]!r}; scopes are {', '.join(SCOPES)}.",
            param=param,
        )
    return sorted(set(scopes))


async def create_token(
    session: AsyncSession,
    *,
    name: str,
    scopes: Sequence[str],
    datasets: Sequence[str] | None = None,
    expires_at: datetime | None = None,
    issuer: Principal | None = None,
) -> TokenCreated:
    """Create a token; `issuer` (None from the CLI) cannot grant more than it holds."""
    wanted = check_scopes(scopes)
    for name_ in datasets or ():
        check_dataset_name(name_, param="datasets")
    if expires_at is not None and expires_at <= utcnow():
        raise BeaconError("invalid_field", "`expires_at` must be in the future.", param="expires_at")
    if issuer is not None:
        beyond = [s for s in wanted if not issuer.has_scope(s)]
        if beyond:
            raise BeaconError(
                "insufficient_scope",
                f"A token cannot grant the scope `{beyond[0]}` that it does not hold itself.",
            )
        if issuer.datasets is not None and (not datasets or not set(datasets) <= set(issuer.datasets)):
            raise BeaconError(
                "insufficient_scope",
                "A token limited to datasets can only issue tokens limited to those datasets.",
            )
    text = generate_token()
    token = Token(
        id=new_id("tok_"),
        name=name,
        token_hash=hash_token(text),
        scopes=wanted,
        datasets=sorted(set(datasets)) if datasets else None,
        created_at=utcnow(),
        expires_at=expires_at,
        revoked_at=None,
    )
    session.add(token)
    await session.commit()
    return TokenCreated(**_fields(token), token=text)


async def get_token(session: AsyncSession, token_id: str) -> Token:
    token = await session.get(Token, token_id)
    if token is None:
        raise not_found("token", token_id)
    return token


async def list_tokens(
    session: AsyncSession, codec: CursorCodec, *, limit: int | None, cursor: str | None
) -> ListEnvelope[TokenOut]:
    return await paginate(
        session,
        select(Token),
        codec=codec,
        scope="tokens",
        keys=(Token.created_at, Token.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


async def revoke_token(session: AsyncSession, token_id: str) -> Token:
    token = await get_token(session, token_id)
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        await session.commit()
    return token


async def all_tokens(session: AsyncSession) -> list[Token]:
    return list((await session.execute(select(Token).order_by(Token.created_at, Token.id))).scalars())


async def count_tokens(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(Token))).scalar_one())
