from __future__ import annotations

from datetime import datetime

from sqlalchemy import LargeBinary, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class Notifier(Base):
    """A destination monitors route to. Its config (which holds the secrets) is stored sealed (app.secretbox)."""

    __tablename__ = "notifiers"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    target: Mapped[str] = mapped_column(Text)
    config_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    disabled_until: Mapped[datetime | None]
    send_resolved: Mapped[bool]  # whether resolved alerts are sent (set from the type's default when not given)
    # Why Beacon disabled it by itself (a webhook's 410 Gone; `disabled_until` is then DISABLED_FOR_GOOD); None
    # when a person set `disabled_until` (a mute) or it is enabled.
    disabled_reason: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
