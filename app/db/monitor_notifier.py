from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class MonitorNotifier(Base):
    """A monitor routes to a notifier; deleting either deletes the route."""

    __tablename__ = "monitor_notifiers"

    monitor_id: Mapped[str] = mapped_column(Text, ForeignKey("monitors.id", ondelete="CASCADE"), primary_key=True)
    notifier_id: Mapped[str] = mapped_column(Text, ForeignKey("notifiers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
