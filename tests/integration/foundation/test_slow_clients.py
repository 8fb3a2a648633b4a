"""Slow clients: a body that stalls holds no database connection and is timed out (408), so 40 stalled uploads
leave everyone else's requests answering. Real sockets against a real uvicorn server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import orjson
from litestar import Litestar
from litestar.routes import HTTPRoute

from app.services import services_of
from tests.helpers import assert_error, captured_logs
from tests.servers import served_app

WRITES = ("POST", "PUT", "PATCH", "DELETE")


class Stalled:
    """A request whose head and first body byte went out, and nothing after (Content-Length says 1000)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, method: str, path: str, headers: dict[str, str]) -> Stalled:
        name, port = host.split(":")
        reader, writer = await asyncio.open_connection(name, int(port))
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Content-Length: 1000"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + b"{")
        await writer.drain()
        return cls(reader, writer)

    async def response(self, within: float) -> tuple[int, dict[str, str], bytes]:
        """The status, headers and body of the answer; the server must close the connection after it."""
        raw = await asyncio.wait_for(self._read_to_eof(), within)  # the server closes the connection after it
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
        return int(status_line.split()[1]), headers, body

    async def _read_to_eof(self) -> bytes:
        raw = b""
        while piece := await self.reader.read(65536):
            raw += piece
        return raw

    def close(self) -> None:
        self.writer.close()


def in_use(app: Litestar) -> dict[str, int]:
    """Database connections the app holds now: the ORM pool's checked out, the asyncpg pools' taken."""
    services = services_of(app)
    return {
        "engine": services.engine.pool.checkedout(),
        "read_pool": services.read_pool.get_size() - services.read_pool.get_idle_size(),
        "query_pool": services.query_pool.get_size() - services.query_pool.get_idle_size(),
    }


async def test_forty_stalled_uploads_leave_the_api_answering(
    make_app: Callable[..., Litestar], auth: dict[str, str]
) -> None:
    app = make_app()  # the default timeouts: the uploads stay stalled for the whole test
    async with served_app(app) as url:
        host = url.removeprefix("http://")
        headers = {**auth, "Content-Type": "application/x-ndjson"}
        stalled = await asyncio.gather(*(Stalled.open(host, "POST", "/v1/ingest/x", headers) for _ in range(45)))
        try:
            await asyncio.sleep(0.3)  # every upload has reached the server and waits for its body
            assert in_use(app) == {"engine": 0, "read_pool": 0, "query_pool": 0}
            async with httpx.AsyncClient(base_url=f"http://{host}", headers=auth, timeout=15) as http:
                started = time.monotonic()
                monitors = await http.get("/v1/monitors")
                ingest = await http.post(
                    "/v1/ingest/y", content=b'{"a": 1}\n', headers={"Content-Type": "application/x-ndjson"}
                )
                note = await http.post("/v1/annotations", json={"type": "deploy", "title": "v2", "datasets": ["y"]})
                elapsed = time.monotonic() - started
            assert monitors.status_code == 200, monitors.text
            assert ingest.status_code == 200 and ingest.json()["ingested"] == 1, ingest.text
            assert note.status_code == 201, note.text
            assert elapsed < 5, elapsed  # was: each waited 30 s for the pool, then 503
        finally:
            for s in stalled:
                s.close()


async def test_a_body_that_stops_arriving_is_a_408_and_the_connection_closes(
    make_app: Callable[..., Litestar], auth: dict[str, str]
) -> None:
    app = make_app(body_idle_timeout_seconds=0.3, body_timeout_seconds=30)
    async with served_app(app) as url:
        host = url.removeprefix("http://")
        started = time.monotonic()
        stalled = await Stalled.open(host, "POST", "/v1/ingest/x", {**auth, "Content-Type": "application/x-ndjson"})
        status, headers, body = await stalled.response(within=10)
        assert 0.25 < time.monotonic() - started < 5
        stalled.close()
    assert headers["connection"] == "close"
    err = assert_error(httpx.Response(status, headers=headers, content=body), 408, "request_timeout")
    assert err["type"] == "invalid_request_error" and "stopped arriving for 0.3 s" in err["message"], err


async def test_a_body_that_trickles_past_the_total_timeout_is_a_408(
    make_app: Callable[..., Litestar], auth: dict[str, str]
) -> None:
    app = make_app(body_idle_timeout_seconds=1, body_timeout_seconds=0.8)
    async with served_app(app) as url:
        host = url.removeprefix("http://")
        stalled = await Stalled.open(host, "POST", "/v1/annotations", {**auth, "Content-Type": "application/json"})
        answer = asyncio.create_task(stalled.response(within=10))
        for _ in range(50):  # a byte every 0.1 s until the answer comes: never idle for long, never done
            await asyncio.wait([answer], timeout=0.1)
            if answer.done():
                break
            stalled.writer.write(b" ")
        status, _, body = await answer
        stalled.close()
    assert status == 408
    assert "did not arrive within 0.8 s" in orjson.loads(body)["error"]["message"]


def body_routes(app: Litestar) -> list[tuple[str, str, str]]:
    """(method, path with its parameters filled, content type) of every route that reads a request body."""
    found = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for method, (_, kwargs) in route.route_handler_map.items():
            ingest = route.path.startswith("/v1/ingest/")
            if method not in WRITES or not ("data" in kwargs.expected_reserved_kwargs or ingest):
                continue
            path = route.path
            for param in kwargs.expected_path_params:
                path = path.replace(f"{{{param.field_name}:str}}", "x")
            form = route.path.startswith("/ui/")
            kind = "application/x-www-form-urlencoded" if form else "application/x-ndjson" if ingest else None
            found.append((method, path, kind or "application/json"))
    return found


async def test_no_route_holds_a_database_connection_while_its_body_arrives(
    make_app: Callable[..., Litestar], auth: dict[str, str]
) -> None:
    app = make_app(body_idle_timeout_seconds=1.0, body_timeout_seconds=30)
    routes = body_routes(app)
    assert len(routes) >= 25 and ("POST", "/v1/ingest/x", "application/x-ndjson") in routes
    async with served_app(app) as url:
        host = url.removeprefix("http://")
        # The console's pages as a signed-in browser sends them (its guard turns anyone else away at once).
        async with httpx.AsyncClient(base_url=url) as browser:
            signed = await browser.post("/ui/login", data={"token": auth["Authorization"].removeprefix("Bearer ")})
            assert signed.status_code == 303, signed.text
            session = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())

        def headers(path: str, kind: str) -> dict[str, str]:
            page = {"Cookie": session} if path.startswith("/ui/") else {}
            return {**auth, **page, "Content-Type": kind, "Origin": f"http://{host}"}

        stalled = await asyncio.gather(
            *(Stalled.open(host, method, path, headers(path, kind)) for method, path, kind in routes)
        )
        try:
            await asyncio.sleep(0.5)
            assert in_use(app) == {"engine": 0, "read_pool": 0, "query_pool": 0}
            answers = await asyncio.gather(*(s.response(within=10) for s in stalled))
        finally:
            for s in stalled:
                s.close()
    # Each of them waited for its body to its end (nothing was answered before), holding nothing meanwhile.
    assert {route: status for route, (status, _, _) in zip(routes, answers, strict=True)} == {
        route: 408 for route in routes
    }


async def test_a_client_that_goes_away_mid_upload_is_not_a_server_error(
    make_app: Callable[..., Litestar], auth: dict[str, str]
) -> None:
    """A client that disconnects before its body is complete is its own doing: logged as the client's closing
    (a 499, nginx's word for it), never as a 500 with a traceback, and nothing is stored."""
    app = make_app()
    with captured_logs("beacon.access", "beacon.requests") as logs:
        async with served_app(app) as url:
            host = url.removeprefix("http://")
            for method, path, kind in (
                ("POST", "/v1/ingest/gone", "application/x-ndjson"),
                ("POST", "/v1/annotations", "application/json"),
                ("POST", "/v1/alerts", "application/json"),
            ):
                stalled = await Stalled.open(host, method, path, {**auth, "Content-Type": kind})
                stalled.close()
            async with httpx.AsyncClient(base_url=url, headers=auth, timeout=15) as http:
                deadline = time.monotonic() + 10
                while sum("499" in line for line in logs) < 3:
                    assert time.monotonic() < deadline, logs
                    await asyncio.sleep(0.05)
                assert (await http.get("/v1/datasets")).json()["data"] == []
                assert (await http.get("/v1/annotations")).json()["data"] == []
    assert not any(" 500" in line or "Traceback" in line or "internal_error" in line for line in logs), logs
