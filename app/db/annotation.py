from __future__ import annotations

from datetime import datetime

from sqlalchemy import Text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Annotation(Base):
    """A marker (point or span) on the charts of the datasets it names."""

    __tablename__ = "annotations"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    type: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    datasets: Mapped[list[str]] = mapped_column(ARRAY(Text))
    time: Mapped[datetime]
    end_time: Mapped[datetime | None]
    url: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
