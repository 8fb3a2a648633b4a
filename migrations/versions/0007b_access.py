"""Tokens record their issuer; console sessions live on the server.

Revision ID: 0007b_access
Revises: 0006_monitors
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007b_access"
down_revision: str | None = "0006_monitors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # `issuer_id`: the token that made this one (NULL: made by the CLI, a root). `ancestors`: its issuer's chain,
    # root first, written once at creation (a token's issuer never changes), so that the authentication checks
    # every ancestor with one index probe each, and a token's descendants are one GIN lookup. Tokens made before
    # this revision are roots.
    op.execute("ALTER TABLE tokens ADD COLUMN issuer_id text REFERENCES tokens (id) ON DELETE CASCADE")
    op.execute("ALTER TABLE tokens ADD COLUMN ancestors text[] NOT NULL DEFAULT '{}'")
    op.execute("CREATE INDEX tokens_ancestors ON tokens USING gin (ancestors)")
    op.execute("CREATE INDEX tokens_issuer ON tokens (issuer_id)")
    # A console session: the cookie holds a random id whose SHA-256 is kept here; signing out deletes the row, so
    # a copy of the cookie is dead from then on. The token is referenced, never stored.
    op.execute(
        """
        CREATE TABLE console_sessions (
            id_hash     bytea PRIMARY KEY,
            token_id    text NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
            created_at  timestamptz NOT NULL DEFAULT now(),
            expires_at  timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at)")
    op.execute("CREATE INDEX console_sessions_token ON console_sessions (token_id)")


def downgrade() -> None:
    op.execute("DROP TABLE console_sessions")
    op.execute("DROP INDEX tokens_issuer")
    op.execute("DROP INDEX tokens_ancestors")
    op.execute("ALTER TABLE tokens DROP COLUMN ancestors")
    op.execute("ALTER TABLE tokens DROP COLUMN issuer_id")
