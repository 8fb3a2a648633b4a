"""Browser tests: the real app served by uvicorn on a free port, driven by Playwright in Debian's Chromium."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import uvicorn

from app.asgi import create_app
from app.db.engine import make_engine, make_sessionmaker
from app.settings import Settings
from app.tokens.service import create_token
from tests.conftest import IN_CI, run_sync
from tests.servers import free_port

START, END = "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z"
POINT = {
    "type": "deploy",
    "title": "Deploy v1.2.3",
    "time": "2025-03-01T06:00:00Z",
    "url": "https://ci.example/runs/123",
}
SPAN = {
    "type": "incident",
    "title": "DB failover",
    "time": "2025-03-01T12:00:00Z",
    "end_time": "2025-03-01T18:00:00Z",
    "url": "https://status.example/incidents/42",
}

CHROMIUM = os.environ.get("BEACON_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# The tracked screenshots in docs/ are rewritten only when asked; otherwise each run writes to a temporary place.
UPDATE_SCREENSHOTS = os.environ.get("BEACON_UPDATE_SCREENSHOTS") == "1"
_screenshot_dir: list[Path] = []
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


@pytest.fixture(scope="session", autouse=True)
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = SCREENSHOTS if UPDATE_SCREENSHOTS else tmp_path_factory.mktemp("screenshots")
    _screenshot_dir[:] = [found]
    return found


def new_page(browser: Any, timezone_id: str = "UTC") -> Any:
    """A page in a fresh context (no cookies), in the given time zone (the console shows times in it)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id=timezone_id)
    return context.new_page()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = new_page(browser)
    context = pg.context
    # The pages' Content-Security-Policy must block nothing the console itself uses (Chromium reports each
    # thing it blocks on the console).
    blocked: list[str] = []
    pg.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    yield pg
    context.close()
    assert not blocked, blocked


def screenshot(page: Any, name: str) -> Path:
    folder = _screenshot_dir[0]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, allow_private_destinations=True)  # the notifier posts to a local receiver


def make_token(database_url: str, scopes: list[str]) -> str:
    async def make() -> str:
        engine = make_engine(database_url, pool_size=1)
        try:
            async with make_sessionmaker(engine)() as session:
                return (await create_token(session, name="browser", scopes=scopes)).token
        finally:
            await engine.dispose()

    return run_sync(make())


@pytest.fixture
def token(database_url: str) -> str:
    return make_token(database_url, ["*"])


@pytest.fixture
def api(live_server: LiveServer, token: str) -> Any:
    with httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        yield client


@pytest.fixture
def web(api: httpx.Client) -> str:
    """A day of events (busier in the afternoon) with a point and a span annotation, both with urls."""
    events = [
        {"_time": f"2025-03-01T{h:02d}:{m:02d}:00Z", "duration_ms": base + h * 3 + m % 7, "service": s}
        for h in range(24)
        for m in range(0, 60, 3 if 12 <= h < 18 else 10)
        for s, base in (("api", 20), ("web", 45))
    ]
    r = api.post(
        "/v1/ingest/web",
        content=b"".join(orjson.dumps(e) + b"\n" for e in events),
        headers={"content-type": "application/x-ndjson"},
    )
    assert r.status_code == 200 and r.json()["ingested"] == len(events), r.text
    for annotation in (POINT, SPAN):
        assert api.post("/v1/annotations", json={"datasets": ["web"], **annotation}).status_code == 201
    return "web"


def sign_in(page: Any, live_server: LiveServer, token: str, shot: str | None = None) -> None:
    page.goto(f"{live_server.url}/ui/login")
    page.fill("input[name=token]", token)
    if shot:
        screenshot(page, shot)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/ui/datasets")
