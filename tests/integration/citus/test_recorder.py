"""The statement recorder keeps what the app sends and nothing of the test harness: the database pool empties the
last test's database in its own thread, at times while the next test records (a CI run found its statements among
the app's and failed the Citus check on them)."""

from __future__ import annotations

import time

from tests.databases import Clones
from tests.sqlrecorder import recording


def test_the_database_pools_own_statements_are_not_recorded(clones: Clones) -> None:
    with recording() as recorder:
        name = clones.take()
        clones.give_back(name)  # emptied now, in the pool's thread, on a connection made while this records
        for _ in range(1000):
            if name in clones._spare:
                break
            time.sleep(0.01)
    assert name in clones._spare, "the database was not emptied within 10 s"
    assert not [s for s in recorder.app_statements() if "array_remove" in s or "TRUNCATE" in s]
