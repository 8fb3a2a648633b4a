from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Float, ForeignKey, Integer, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class MonitorEvent(Base):
    """One entry of a monitor's history: a state change (or a match), and the deliveries it caused."""

    __tablename__ = "monitor_events"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    monitor_id: Mapped[str] = mapped_column(Text, ForeignKey("monitors.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float)
    threshold: Mapped[float | None] = mapped_column(Float)
    group_values: Mapped[dict[str, Any]] = mapped_column(JSONB)
    start_time: Mapped[datetime | None]
    end_time: Mapped[datetime | None]
    match_count: Mapped[int | None] = mapped_column(Integer)
    matches: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    error: Mapped[str | None] = mapped_column(Text)
    delivery_ids: Mapped[list[str]] = mapped_column(ARRAY(Text))
    time: Mapped[datetime]
