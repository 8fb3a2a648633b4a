"""Issuing, listing and revoking API tokens (shared by the HTTP API and the CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import require_issuable, unrestricted
from app.auth import SCOPES, Principal, generate_token, hash_token
from app.datasets.names import check_dataset_name
from app.db.advisory import Space, lock
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
        "issuer_id": token.issuer_id,
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
    """Create a token; `issuer` (None from the CLI: a root token) cannot grant more than it holds, nor a longer
    life: a child expires no later than its issuer, and without `expires_at` when its issuer does."""
    wanted = check_scopes(scopes)
    for name_ in datasets or ():
        check_dataset_name(name_, param="datasets")
    if expires_at is not None and expires_at <= utcnow():
        raise BeaconError("invalid_field", "`expires_at` must be in the future.", param="expires_at")
    ancestors: list[str] = []
    if issuer is not None:
        beyond = [s for s in wanted if not issuer.has_scope(s)]
        if beyond:
            raise BeaconError(
                "insufficient_scope",
                f"A token cannot grant the scope `{beyond[0]}` that it does not hold itself.",
            )
        require_issuable(issuer, datasets)
        parent = await _live_issuer(session, issuer.token_id)
        expires_at = _child_expiry(expires_at, parent.expires_at)
        ancestors = [*parent.ancestors, parent.id]
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
        issuer_id=ancestors[-1] if ancestors else None,
        ancestors=ancestors,
    )
    session.add(token)
    await session.commit()
    return TokenCreated(**_fields(token), token=text)


async def _live_issuer(session: AsyncSession, token_id: str) -> Token:
    """The issuer's row, held (shared) until the child is committed, so that a revoked issuer never makes a child:
    revoking takes the lock exclusively. An advisory lock on its id, not FOR SHARE: on Citus `tokens` is a
    reference table, where a row lock locks the whole table. A child committed while a revocation of its issuer's
    own issuer is under way may keep an empty `revoked_at`: the token check refuses it all the same, by its
    chain."""
    await lock(session, Space.TOKEN, token_id, shared=True)
    parent = (await session.execute(select(Token).where(Token.id == token_id))).scalar()
    now = utcnow()
    if parent is None or parent.revoked_at is not None or (parent.expires_at is not None and parent.expires_at <= now):
        raise BeaconError("invalid_token", "The API token is unknown, revoked or expired.")
    return parent


def _child_expiry(wanted: datetime | None, issuer_expires: datetime | None) -> datetime | None:
    if issuer_expires is None:
        return wanted
    if wanted is None:
        return issuer_expires
    if wanted > issuer_expires:
        raise BeaconError(
            "invalid_field",
            f"`expires_at` must not be later than the issuing token's expiry ({iso_ms(issuer_expires)}).",
            param="expires_at",
        )
    return wanted


def visible_to(who: Principal | None) -> ColumnElement[bool]:
    """The tokens `who` may see and revoke: all for an unrestricted `*` token (and the CLI, `None`), otherwise
    those it issued and theirs."""
    if who is None or unrestricted(who):
        return true()
    return Token.ancestors.contains([who.token_id])


async def get_token(session: AsyncSession, token_id: str, who: Principal | None = None) -> Token:
    token = (await session.execute(select(Token).where(Token.id == token_id, visible_to(who)))).scalar()
    if token is None:
        raise not_found("token", token_id)
    return token


async def list_tokens(
    session: AsyncSession, codec: CursorCodec, who: Principal, *, limit: int | None, cursor: str | None
) -> ListEnvelope[TokenOut]:
    return await paginate(
        session,
        select(Token).where(visible_to(who)),
        codec=codec,
        scope="tokens" if unrestricted(who) else f"tokens:{who.token_id}",
        keys=(Token.created_at, Token.id),
        render=to_out,
        limit=limit,
        cursor=cursor,
    )


async def revoke_token(session: AsyncSession, token_id: str, who: Principal | None = None) -> Token:
    """Revoke a token and every token under it, in one statement (the authentication also refuses a token
    whose issuer is revoked, so a child committed meanwhile ends too)."""
    token = await get_token(session, token_id, who)
    await lock(session, Space.TOKEN, token.id)  # waits for the children being made under it
    now = utcnow()
    await session.execute(
        update(Token)
        .where(or_(Token.id == token.id, Token.ancestors.contains([token.id])), Token.revoked_at.is_(None))
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    await session.refresh(token)
    return token


async def all_tokens(session: AsyncSession) -> list[Token]:
    return list((await session.execute(select(Token).order_by(Token.created_at, Token.id))).scalars())


async def count_tokens(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(Token))).scalar_one())
