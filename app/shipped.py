"""Where the files shipped beside the code are: migrations/ and templates/ sit beside app/ in a checkout (and an
editable install); a wheel carries them inside app/ (setup.py). Standard library only: the adapters find their
templates here without importing the server's settings."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def _shipped(name: str) -> Path:
    inside = PACKAGE_DIR / name
    return inside if inside.is_dir() else PROJECT_ROOT / name


TEMPLATES_DIR = _shipped("templates")
MIGRATIONS_DIR = _shipped("migrations")
