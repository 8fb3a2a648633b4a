"""Run the Alembic migrations programmatically (used by `beacon migrate`, `beacon serve` and the tests)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from app.settings import MIGRATIONS_DIR, normalize_database_url


def alembic_config(database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    # env.py reads the URL from here (or from BEACON_DATABASE_URL when run through the alembic CLI).
    cfg.attributes["database_url"] = normalize_database_url(database_url)
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    """Must be called outside a running event loop: env.py drives its own."""
    command.upgrade(alembic_config(database_url), revision)
