"""Recording every SQL statement this process sends to PostgreSQL, for the Citus statement check (tests/sqlcheck.py).

Three ways statements leave Beacon, each hooked through a public interface:
- SQLAlchemy (ORM and text()): the `before_cursor_execute` event, on every Engine (asyncpg's prepared statements,
  which SQLAlchemy uses, bypass asyncpg's query logging);
- asyncpg straight (`fetch`, `execute`, ...): a query logger (`Connection.add_query_logger`) added to every
  connection as it is made;
- asyncpg cursors (exports): `Connection.cursor`, wrapped.
COPY is not recorded: Citus routes COPY rows by their distribution column.

Statements run by the Alembic migrations are marked (`migrating`): the plan is applied after them.

Opt in for a whole run with `pytest --record-sql=DIR` (or BEACON_TEST_RECORD_SQL=DIR): each process writes what
it saw, and the findings, to DIR/statements-<worker>.json (tests/conftest.py).
"""

from __future__ import annotations

import functools
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import alembic.command
import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import Engine

from tests.databases import THREAD_NAME as CLONES_THREAD


@dataclass(frozen=True)
class Recorded:
    sql: str
    via: str  # "sqlalchemy", "asyncpg" or "cursor"
    migrating: bool


@dataclass
class Recorder:
    statements: list[Recorded] = field(default_factory=list)
    _migrating: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _active: bool = False

    def add(self, sql: str, via: str) -> None:
        with self._lock:
            if self._active:  # connections made while recording keep their logger afterwards
                self.statements.append(Recorded(sql, via, self._migrating > 0))

    def app_statements(self) -> list[str]:
        """What the app sent, migrations left out."""
        return [r.sql for r in self.statements if not r.migrating]

    def counts(self) -> Counter[str]:
        return Counter(self.app_statements())

    def start(self) -> None:
        recorder = self
        self._active = True

        def on_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            recorder.add(statement, "sqlalchemy")

        event.listen(Engine, "before_cursor_execute", on_execute)
        self._undo.append(lambda: event.remove(Engine, "before_cursor_execute", on_execute))

        def on_query(record: Any) -> None:
            recorder.add(record.query, "asyncpg")

        real_init = asyncpg.Connection.__init__

        @functools.wraps(real_init)
        def init(self: asyncpg.Connection, *args: Any, **kwargs: Any) -> None:
            real_init(self, *args, **kwargs)
            # Not the database pool's own connections: it empties the last test's database in the background, at
            # times while the next test records (a CI run found its statements among the app's).
            if threading.current_thread().name != CLONES_THREAD:
                self.add_query_logger(on_query)

        real_cursor = asyncpg.Connection.cursor

        @functools.wraps(real_cursor)
        def cursor(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> Any:
            recorder.add(query, "cursor")
            return real_cursor(self, query, *args, **kwargs)

        asyncpg.Connection.__init__ = init  # type: ignore[method-assign]
        asyncpg.Connection.cursor = cursor  # type: ignore[method-assign]
        self._undo.append(lambda: setattr(asyncpg.Connection, "__init__", real_init))
        self._undo.append(lambda: setattr(asyncpg.Connection, "cursor", real_cursor))

        for name in ("upgrade", "downgrade", "stamp"):
            real = getattr(alembic.command, name)

            def marked(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                with recorder.migrating():
                    return _real(*args, **kwargs)

            setattr(alembic.command, name, marked)
            self._undo.append(functools.partial(setattr, alembic.command, name, real))

    def stop(self) -> None:
        self._active = False
        while self._undo:
            self._undo.pop()()

    @contextmanager
    def migrating(self) -> Iterator[None]:
        with self._lock:
            self._migrating += 1
        try:
            yield
        finally:
            with self._lock:
                self._migrating -= 1


@contextmanager
def recording() -> Iterator[Recorder]:
    recorder = Recorder()
    recorder.start()
    try:
        yield recorder
    finally:
        recorder.stop()


def write_report(recorder: Recorder, path: Path) -> None:
    """The distinct statements the app sent (with how often) and the findings on them, as JSON."""
    from tests.sqlcheck import check_all

    counts = recorder.counts()
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "statements": [{"sql": sql, "count": n} for sql, n in counts.most_common()],
        "findings": [asdict(f) for f in check_all(counts)],
    }
    path.write_text(json.dumps(report, indent=1))
