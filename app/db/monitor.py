from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, Integer, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Monitor(Base):
    """A query evaluated on a schedule. `series` is the per-group state (see app/monitors/state.py)."""

    __tablename__ = "monitors"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    apl: Mapped[str] = mapped_column(Text)
    dataset: Mapped[str] = mapped_column(Text)
    operator: Mapped[str | None] = mapped_column(Text)
    threshold: Mapped[float | None] = mapped_column(Float)
    interval_seconds: Mapped[int] = mapped_column(Integer)
    range_seconds: Mapped[int] = mapped_column(Integer)
    delay_seconds: Mapped[int] = mapped_column(Integer)
    alert_on_no_data: Mapped[bool]
    notify_by_group: Mapped[bool]
    resolvable: Mapped[bool]
    trigger_m: Mapped[int] = mapped_column(Integer)
    trigger_n: Mapped[int] = mapped_column(Integer)
    repeat_interval_seconds: Mapped[int | None] = mapped_column(Integer)  # re-send a firing alert this often
    disabled_until: Mapped[datetime | None]
    state: Mapped[str] = mapped_column(Text)
    series: Mapped[dict[str, Any]] = mapped_column(JSONB)
    labels: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict)  # routing labels (app/monitors/alerting.py)
    last_value: Mapped[float | None] = mapped_column(Float)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_evaluated_at: Mapped[datetime | None]
    last_due_at: Mapped[datetime | None]
    next_evaluation_at: Mapped[datetime]
    match_cursor: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
