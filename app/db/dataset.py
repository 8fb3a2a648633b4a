from __future__ import annotations

from datetime import datetime

from sqlalchemy import ARRAY, ForeignKey, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Dataset(Base):
    """A named dataset; created by the first ingest into it (migration 0002_events)."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime]


class DatasetField(Base):
    """A field seen in a dataset's events, with the JSON types its values had."""

    __tablename__ = "dataset_fields"

    dataset_id: Mapped[int] = mapped_column(Integer, ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(Text, primary_key=True)
    types: Mapped[list[str]] = mapped_column(ARRAY(Text))
    first_seen: Mapped[datetime]
