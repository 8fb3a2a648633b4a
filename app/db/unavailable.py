"""Whether an error is the database being unreachable (a 503 to retry, not a 500), whoever meets it: a request's
handler, the delivery worker, the recorder of outcomes."""

from __future__ import annotations

import asyncpg
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

# Failures of the connection to PostgreSQL, not of a statement: the server is down, starting up or shutting
# down, refuses more connections, or dropped ours. asyncpg raises them raw on the read pool and in COPY;
# SQLAlchemy wraps them (`DBAPIError.orig`, whose `__cause__` is asyncpg's exception).
_CONNECTION_FAILURES: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # class 08: the connection does not exist, failed, was rejected
    asyncpg.CannotConnectNowError,  # 57P03: starting up, shutting down, in recovery
    asyncpg.AdminShutdownError,  # 57P01: terminated (shutdown, pg_terminate_backend)
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.DatabaseDroppedError,  # 57P04
    asyncpg.IdleSessionTimeoutError,  # 57P05
    asyncpg.TooManyConnectionsError,  # 53300
    asyncpg.InternalClientError,  # the protocol's state after its connection broke mid-operation
    OSError,  # refused, reset, unreachable, a connect timeout (TimeoutError is an OSError)
    OperationalError,
    PoolTimeoutError,
)


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` is, or was caused by, a connection-level database failure (a 503, not a 500)."""
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    while todo:
        err = todo.pop()
        if id(err) in seen:
            continue
        seen.add(id(err))
        if isinstance(err, _CONNECTION_FAILURES) or (isinstance(err, DBAPIError) and err.connection_invalidated):
            return True
        if isinstance(err, BaseExceptionGroup):
            todo.extend(err.exceptions)
        todo.extend(e for e in (getattr(err, "orig", None), err.__cause__) if isinstance(e, BaseException))
    return False
