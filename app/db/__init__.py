"""Database: engine and sessions, models (one per file), the embedded PostgreSQL helper, migrations."""
