from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, FetchedValue, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base

ENVIRONMENT_WIDE = "*"  # how the API spells an annotation of no one dataset (stored as an empty `datasets`)


class Annotation(Base):
    """A marker (point or span) on the charts of the datasets it names (every chart when it names none), and a
    change that notifications of related alerts report (app/annotations/changes.py).

    origin          api | monitor (Beacon's own state-change markers: never a change) | grafana | honeycomb |
                    pagerduty
    confined        written by a dataset-limited token: it relates to alerts of its own datasets only
    number          the integer id Grafana's API knows it by
    source_fields   what a deploy tool sent that Beacon has no field for (read back through the tool's API)
    silence_id      the silence a rollout holds while its span lasts
    """

    __tablename__ = "annotations"
    __mapper_args__ = {"eager_defaults": True}  # `number` comes back from the INSERT (Grafana's answer holds it)

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    type: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    datasets: Mapped[list[str]] = mapped_column(ARRAY(Text))
    time: Mapped[datetime]
    end_time: Mapped[datetime | None]
    url: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    labels: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict)
    origin: Mapped[str] = mapped_column(Text, default="api")
    confined: Mapped[bool] = mapped_column(default=False)
    number: Mapped[int] = mapped_column(BigInteger, server_default=FetchedValue())
    source_fields: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    silence_id: Mapped[str | None] = mapped_column(Text, default=None)
    updated_at: Mapped[datetime]

    @property
    def environment_wide(self) -> bool:
        return not self.datasets
