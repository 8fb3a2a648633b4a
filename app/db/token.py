from __future__ import annotations

from datetime import datetime

from sqlalchemy import LargeBinary, Text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Token(Base):
    """An API token. Only the SHA-256 of the token text is stored.

    `issuer_id` is the token that made it (None: the CLI's root tokens); `ancestors` its issuer's chain, root
    first, fixed at creation.
    """

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    token_hash: Mapped[bytes] = mapped_column(LargeBinary, unique=True)
    scopes: Mapped[list[str]] = mapped_column(ARRAY(Text))
    datasets: Mapped[list[str] | None] = mapped_column(ARRAY(Text), nullable=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    issuer_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    ancestors: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list)
