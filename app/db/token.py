from __future__ import annotations

from datetime import datetime

from sqlalchemy import ARRAY, LargeBinary, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Token(Base):
    """An API token. Only the SHA-256 of the token text is stored."""

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    token_hash: Mapped[bytes] = mapped_column(LargeBinary, unique=True)
    scopes: Mapped[list[str]] = mapped_column(ARRAY(Text))
    datasets: Mapped[list[str] | None] = mapped_column(ARRAY(Text), nullable=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
