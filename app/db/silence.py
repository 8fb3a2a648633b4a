from __future__ import annotations

from datetime import datetime

from sqlalchemy import ARRAY, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Silence(Base):
    """Alerts matching every matcher notify nothing between `starts_at` and `ends_at` (app/routing/silences.py)."""

    __tablename__ = "silences"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    matchers: Mapped[list[str]] = mapped_column(ARRAY(Text))
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    comment: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
