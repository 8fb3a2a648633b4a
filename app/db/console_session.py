from __future__ import annotations

from datetime import datetime

from sqlalchemy import LargeBinary, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class ConsoleSession(Base):
    """A signed-in console session: the SHA-256 of the random id in its cookie, and whose token it uses.
    Signing out deletes the row, which ends every copy of the cookie."""

    __tablename__ = "console_sessions"

    id_hash: Mapped[bytes] = mapped_column(LargeBinary, primary_key=True)
    token_id: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
