"""A pytest plugin (`-p tests.module_groups` in pyproject.toml): a module whose tests share a fixture of module (or
class) scope runs on one xdist worker.

Under `-n`, xdist spreads tests one by one, and a module-scoped fixture is then built once on every worker that
gets one of the module's tests: a `beacon serve` per client module, the differential run of Alertmanager and
Beacon (15 s), a wheel build, each up to three times. `--dist loadgroup` keeps the tests of one `xdist_group`
together; this plugin gives every such module its group. With pytest 9.2 and pytest-xdist 3.8 the group no longer
reaches the node id (pytest-dev/pytest-xdist#1386) and the tests were silently spread again: a grouped test then
fails, saying so.
"""

from __future__ import annotations

import pytest

SHARED_SCOPES = {"module", "class"}
_UNGROUPED = pytest.StashKey[set[str]]()


def _shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in SHARED_SCOPES for defs in info.name2fixturedefs.values() for d in defs)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Before xdist reads the marks: the group of a module with a shared fixture is the module."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """In a worker under `--dist loadgroup`: a grouped test whose node id lacks its group was not kept together."""
    if getattr(session.config.option, "loadgroup", False):  # set in xdist workers only
        session.config.stash[_UNGROUPED] = {
            i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid
        }


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in item.config.stash.get(_UNGROUPED, set()):
        pytest.fail(
            "xdist did not apply this test's xdist_group (pytest-xdist#1386: pytest 9.2 with pytest-xdist 3.8): its "
            "module's shared fixture is built on every worker; install the versions pyproject.toml asks for"
        )
