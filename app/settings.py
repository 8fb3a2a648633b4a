"""Settings read from BEACON_* environment variables.

Nothing here runs at import time: callers build a `Settings` with `Settings.from_env()` (or construct one
directly in tests) and pass it to `create_app`.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from adapters.contract import AdapterSettings
from app.shipped import MIGRATIONS_DIR, PACKAGE_DIR, PROJECT_ROOT, TEMPLATES_DIR

__all__ = ["MIGRATIONS_DIR", "PACKAGE_DIR", "PROJECT_ROOT", "TEMPLATES_DIR", "Settings"]

_TRUE = {"1", "true", "yes", "on"}


LOG_FORMATS = ("text", "json")


def normalize_database_url(url: str) -> str:
    """Return an SQLAlchemy asyncpg URL for `postgresql://…`, `postgres://…` or `postgresql+asyncpg://…`.

    Query parameters (such as a unix-socket `?host=/path`) are kept as they are.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"postgresql", "postgres", "postgresql+asyncpg"}:
        raise ValueError(f"BEACON_DATABASE_URL must be a postgresql:// URL, got scheme {parts.scheme!r}")
    return urlunsplit(parts._replace(scheme="postgresql+asyncpg"))


def asyncpg_dsn(url: str) -> str:
    """The same URL in the plain `postgresql://` form that asyncpg.connect() takes."""
    parts = urlsplit(normalize_database_url(url))
    return urlunsplit(parts._replace(scheme="postgresql"))


@dataclass(frozen=True)
class RateLimits:
    """Requests per rolling 60-second window, per token and endpoint group; and console sign-in attempts per
    client address and in total."""

    ingest: int = 6000
    query: int = 1000
    read: int = 2000
    other: int = 600
    sign_in_per_address: int = 10
    sign_in: int = 100


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    data_dir: Path = Path(".beacon")
    redis_url: str | None = None
    redis_key_prefix: str = "beacon"
    rate_limit_store: str = "memory"  # without Redis: "memory" (this process) or "postgres" (shared)
    base_url: str = "http://127.0.0.1:8000"
    docs_url: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    rate_limits: RateLimits = field(default_factory=RateLimits)
    allow_private_destinations: bool = False
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks, comma-separated, as
    # uvicorn's `forwarded_allow_ips`): none by default, so a client cannot choose the address it is counted as.
    trusted_proxies: str = ""
    # A bearer token GET /metrics requires, when set (tenants must not see each other's volume).
    metrics_token: str | None = field(default=None, repr=False)
    # `beacon serve --dev` (BEACON_DEV): a newcomer's machine. Private destinations are allowed, and the server says
    # so on start, on every console page and in /healthz; nothing else changes.
    dev_mode: bool = False
    run_scheduler: bool = True
    log_level: str = "info"
    log_format: str = "text"  # or "json": one JSON object per line (app/logs.py)
    # Notifier destinations whose address is a setting (tests point them at local servers).
    incident_a_url: str = "https://events.pagerduty.com"
    incident_b_url: str = "https://api.opsgenie.com"
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    smtp_starttls: bool = True
    smtp_from: str = "beacon@localhost"
    ingest_max_decompressed_bytes: int = 100 * 1024 * 1024
    # Request bodies (app/request_bodies.py): the longest pause between two pieces, the longest a whole body may
    # take from the request's start, and the bytes of bodies one process holds at once.
    body_idle_timeout_seconds: float = 15.0
    body_timeout_seconds: float = 120.0
    body_buffer_bytes: int = 256 * 1024 * 1024
    retention_interval_seconds: float = 3600.0
    query_timeout_seconds: float = 30.0  # statement timeout of POST /v1/query and /v1/export
    query_max_rows: int = 50_000  # server maximum of the rows one POST /v1/query returns
    # Columns of one query result (whole events bring one per field), and its values (rows x columns).
    query_max_columns: int = 1_000
    query_max_cells: int = 2_000_000
    # Queries one token runs at once in a process, and how many more wait their turn (app/query/slots.py).
    query_concurrency_per_token: int = 4
    query_queue_per_token: int = 8
    # Deliveries: the worker's poll interval, the retry budget and backoff, the timeout of one HTTP send.
    delivery_poll_seconds: float = 2.0
    delivery_max_attempts: int = 10
    delivery_backoff_seconds: float = 2.0
    delivery_backoff_max_seconds: float = 600.0
    http_timeout_seconds: float = 10.0
    # Sends in flight per process, and per notifier (one destination) within them; how long a claimed
    # delivery stays the claimer's (a process killed mid-send: the row is claimable again after this).
    delivery_concurrency: int = 32
    delivery_per_destination: int = 8
    delivery_lease_seconds: float = 60.0
    # Monitors: how often the loop looks for due monitors, how many it evaluates at once (per process), the
    # statement timeout of one evaluation, and how long a match_event monitor waits for an event's request to
    # be committed before it looks for it by arrival time (`_sysTime`).
    monitor_tick_seconds: float = 1.0
    monitor_concurrency: int = 4
    monitor_query_timeout_seconds: float = 10.0
    monitor_match_settle_seconds: float = 5.0
    # Routing: how often the job places new alerts in their groups and flushes the groups that are due; how long
    # a view of every alert with its silences may take (app/pace.py).
    routing_tick_seconds: float = 1.0
    alert_view_timeout_seconds: float = 60.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(f"BEACON_{name}")
            return value if value not in (None, "") else None

        def get_int(name: str, default: int) -> int:
            raw = get(name)
            if raw is None:
                return default
            try:
                return int(raw)
            except ValueError:
                raise ValueError(f"BEACON_{name} must be an integer, got {raw!r}") from None

        def get_float(name: str, default: float) -> float:
            raw = get(name)
            if raw is None:
                return default
            try:
                return float(raw)
            except ValueError:
                raise ValueError(f"BEACON_{name} must be a number, got {raw!r}") from None

        def get_bool(name: str, default: bool) -> bool:
            raw = get(name)
            return default if raw is None else raw.strip().lower() in _TRUE

        defaults = RateLimits()
        database_url = get("DATABASE_URL")
        log_format = (get("LOG_FORMAT") or "text").strip().lower()
        if log_format not in LOG_FORMATS:
            raise ValueError(f"BEACON_LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, got {log_format!r}")
        store = (get("RATE_LIMIT_STORE") or "memory").strip().lower()
        if store not in ("memory", "postgres"):
            raise ValueError(f"BEACON_RATE_LIMIT_STORE must be memory or postgres, got {store!r}")
        dev_mode = get_bool("DEV", False)
        return cls(
            database_url=normalize_database_url(database_url) if database_url else None,
            data_dir=Path(get("DATA_DIR") or ".beacon"),
            redis_url=get("REDIS_URL"),
            redis_key_prefix=get("REDIS_KEY_PREFIX") or "beacon",
            rate_limit_store=store,
            base_url=(get("BASE_URL") or cls.base_url).rstrip("/"),
            docs_url=(get("DOCS_URL") or "").rstrip("/") or None,
            secret_key=get("SECRET_KEY"),
            rate_limits=RateLimits(
                ingest=get_int("RATE_LIMIT_INGEST", defaults.ingest),
                query=get_int("RATE_LIMIT_QUERY", defaults.query),
                read=get_int("RATE_LIMIT_READ", defaults.read),
                other=get_int("RATE_LIMIT_OTHER", defaults.other),
                sign_in_per_address=get_int("RATE_LIMIT_SIGN_IN_PER_ADDRESS", defaults.sign_in_per_address),
                sign_in=get_int("RATE_LIMIT_SIGN_IN", defaults.sign_in),
            ),
            allow_private_destinations=dev_mode or get_bool("ALLOW_PRIVATE_DESTINATIONS", False),
            dev_mode=dev_mode,
            trusted_proxies=(get("TRUSTED_PROXIES") or "").strip(),
            metrics_token=get("METRICS_TOKEN"),
            run_scheduler=get_bool("RUN_SCHEDULER", True),
            log_level=get("LOG_LEVEL") or "info",
            log_format=log_format,
            incident_a_url=(get("INCIDENT_A_URL") or cls.incident_a_url).rstrip("/"),
            incident_b_url=(get("INCIDENT_B_URL") or cls.incident_b_url).rstrip("/"),
            smtp_host=get("SMTP_HOST"),
            smtp_port=get_int("SMTP_PORT", cls.smtp_port),
            smtp_username=get("SMTP_USERNAME"),
            smtp_password=get("SMTP_PASSWORD"),
            smtp_starttls=get_bool("SMTP_STARTTLS", True),
            smtp_from=get("SMTP_FROM") or cls.smtp_from,
            ingest_max_decompressed_bytes=get_int("INGEST_MAX_DECOMPRESSED_BYTES", 100 * 1024 * 1024),
            body_idle_timeout_seconds=get_float("BODY_IDLE_TIMEOUT_SECONDS", cls.body_idle_timeout_seconds),
            body_timeout_seconds=get_float("BODY_TIMEOUT_SECONDS", cls.body_timeout_seconds),
            body_buffer_bytes=get_int("BODY_BUFFER_BYTES", cls.body_buffer_bytes),
            retention_interval_seconds=float(get_int("RETENTION_INTERVAL_SECONDS", 3600)),
            query_timeout_seconds=get_float("QUERY_TIMEOUT_SECONDS", cls.query_timeout_seconds),
            query_max_rows=get_int("QUERY_MAX_ROWS", cls.query_max_rows),
            query_max_columns=get_int("QUERY_MAX_COLUMNS", cls.query_max_columns),
            query_max_cells=get_int("QUERY_MAX_CELLS", cls.query_max_cells),
            query_concurrency_per_token=get_int("QUERY_CONCURRENCY_PER_TOKEN", cls.query_concurrency_per_token),
            query_queue_per_token=get_int("QUERY_QUEUE_PER_TOKEN", cls.query_queue_per_token),
            delivery_poll_seconds=get_float("DELIVERY_POLL_SECONDS", cls.delivery_poll_seconds),
            delivery_max_attempts=get_int("DELIVERY_MAX_ATTEMPTS", cls.delivery_max_attempts),
            delivery_backoff_seconds=get_float("DELIVERY_BACKOFF_SECONDS", cls.delivery_backoff_seconds),
            delivery_backoff_max_seconds=get_float("DELIVERY_BACKOFF_MAX_SECONDS", cls.delivery_backoff_max_seconds),
            http_timeout_seconds=get_float("HTTP_TIMEOUT_SECONDS", cls.http_timeout_seconds),
            delivery_concurrency=get_int("DELIVERY_CONCURRENCY", cls.delivery_concurrency),
            delivery_per_destination=get_int("DELIVERY_PER_DESTINATION", cls.delivery_per_destination),
            delivery_lease_seconds=get_float("DELIVERY_LEASE_SECONDS", cls.delivery_lease_seconds),
            monitor_tick_seconds=get_float("MONITOR_TICK_SECONDS", cls.monitor_tick_seconds),
            monitor_concurrency=get_int("MONITOR_CONCURRENCY", cls.monitor_concurrency),
            monitor_query_timeout_seconds=get_float("MONITOR_QUERY_TIMEOUT_SECONDS", cls.monitor_query_timeout_seconds),
            monitor_match_settle_seconds=get_float("MONITOR_MATCH_SETTLE_SECONDS", cls.monitor_match_settle_seconds),
            routing_tick_seconds=get_float("ROUTING_TICK_SECONDS", cls.routing_tick_seconds),
            alert_view_timeout_seconds=get_float("ALERT_VIEW_TIMEOUT_SECONDS", cls.alert_view_timeout_seconds),
        )

    @property
    def effective_docs_url(self) -> str:
        return self.docs_url or f"{self.base_url}/docs"

    def for_adapters(self) -> AdapterSettings:
        """What adapters may read of these settings (a plugin's too): nothing beyond it reaches them."""
        return AdapterSettings(**{f.name: getattr(self, f.name) for f in fields(AdapterSettings)})

    def with_secret_key(self) -> Settings:
        """Fill in `secret_key` from `DATA_DIR/secret_key`, generating and keeping one on first use."""
        if self.secret_key:
            return self
        path = self.data_dir / "secret_key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".secret_key.{os.getpid()}")
            # Created 0600 before the key goes in, then renamed: never readable by others, never half-written,
            # and two processes starting together agree on one key (the loser's rename is skipped).
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(48))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        return replace(self, secret_key=path.read_text().strip())
