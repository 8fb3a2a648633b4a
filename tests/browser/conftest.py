"""Browser tests: the real app served by uvicorn on a free port, driven by Playwright in Debian's Chromium."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from app.asgi import create_app
from app.settings import Settings
from tests.conftest import IN_CI
from tests.servers import free_port

CHROMIUM = os.environ.get("BEACON_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# Without these, Chromium keeps trying to reach Google's hosts, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class LiveServer:
    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(replace(settings, base_url=self.url))
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("live server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


@pytest.fixture
def live_server(settings: Settings) -> Iterator[LiveServer]:
    with LiveServer(settings) as server:
        yield server


@pytest.fixture(scope="module")
def browser(template_database: str) -> Iterator[Any]:
    # Playwright's sync API keeps an event loop running in this thread while it is open, and asyncio.run()
    # (migrations, async tests) cannot run beside it: so the template is migrated first, and the browser closes
    # with its module, before pytest (or an xdist worker) goes on to the async tests.
    if not Path(CHROMIUM).exists():
        if IN_CI:
            pytest.fail(f"CI=true but Chromium is missing at {CHROMIUM}")
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    # The pages' Content-Security-Policy must block nothing the console itself uses (Chromium reports each
    # thing it blocks on the console).
    blocked: list[str] = []
    pg.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    yield pg
    context.close()
    assert not blocked, blocked


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
