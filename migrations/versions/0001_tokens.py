"""API tokens.

Revision ID: 0001_tokens
Revises:
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0001_tokens"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE tokens (
            id          text PRIMARY KEY,
            name        text NOT NULL,
            token_hash  bytea NOT NULL UNIQUE,
            scopes      text[] NOT NULL,
            datasets    text[],
            created_at  timestamptz NOT NULL DEFAULT now(),
            expires_at  timestamptz,
            revoked_at  timestamptz
        )
        """
    )
    # Keyset pagination walks (created_at, id) newest first.
    op.execute("CREATE INDEX tokens_created_at_id ON tokens (created_at DESC, id DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE tokens")
