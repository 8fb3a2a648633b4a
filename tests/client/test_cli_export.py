"""`beacon export` against a local server playing the export endpoint: a stream cut midway is an error that says
how many rows arrived, and a file output is left as FILE.partial, never as a FILE that looks complete."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator

from werkzeug import Request, Response

from tests.servers import BEACON, clean_env


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BEACON, *args], env=clean_env(), capture_output=True, text=True, timeout=120)


def rows(n: int) -> Iterator[bytes]:
    for i in range(n):
        yield json.dumps({"i": i, "service": "api"}).encode() + b"\n"


def test_export_writes_every_row_and_the_query_sent(httpserver, tmp_path):
    seen: list[dict] = []

    def export(request: Request) -> Response:
        seen.append(json.loads(request.get_data()))
        return Response(rows(3_000), content_type="application/x-ndjson")

    httpserver.expect_request("/v1/export", method="POST").respond_with_handler(export)
    target = tmp_path / "all.ndjson"
    done = run("export", "['web']", "-o", str(target), "--start-time", "now-1h", "--url", httpserver.url_for(""),
               "--token", "t")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert seen == [{"apl": "['web']", "start_time": "now-1h"}]
    assert [json.loads(line)["i"] for line in target.read_text().splitlines()] == list(range(3_000))
    assert done.stderr.startswith(f"exported 3,000 rows to {target} in ")


def test_a_stream_cut_short_is_an_error_and_leaves_a_partial_file(httpserver, tmp_path):
    whole = sum(len(r) for r in rows(3_000))

    def cut(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            yield from rows(1_500)
            raise ConnectionAbortedError("the server gave up")  # werkzeug drops the connection mid-body

        # The length announced is the whole body's, so the client can tell that the stream stopped short (the
        # service's chunked stream tells it by its missing last chunk).
        response = Response(body(), content_type="application/x-ndjson")
        response.headers["Content-Length"] = str(whole)
        return response

    httpserver.expect_request("/v1/export", method="POST").respond_with_handler(cut)
    target = tmp_path / "all.ndjson"
    done = run("export", "['web']", "-o", str(target), "--url", httpserver.url_for(""), "--token", "t")
    assert done.returncode == 1
    assert done.stderr.startswith("error: the export was cut short after 1,500 rows: ")
    assert f"the 1,500 rows received are in {target}.partial" in done.stderr
    assert not target.exists()
    assert len((tmp_path / "all.ndjson.partial").read_text().splitlines()) == 1_500

    to_stdout = run("export", "['web']", "--url", httpserver.url_for(""), "--token", "t")
    assert to_stdout.returncode == 1 and len(to_stdout.stdout.splitlines()) == 1_500
    assert "cut short after 1,500 rows" in to_stdout.stderr


def test_export_into_a_closed_pipe_ends_quietly(httpserver):
    httpserver.expect_request("/v1/export", method="POST").respond_with_handler(
        lambda _r: Response(rows(200_000), content_type="application/x-ndjson")
    )
    read_end, write_end = os.pipe()
    head = subprocess.Popen(["head", "-n", "3"], stdin=read_end, stdout=subprocess.PIPE)
    export = subprocess.Popen(
        [BEACON, "export", "['web']", "--url", httpserver.url_for(""), "--token", "t"],
        env=clean_env(),
        stdout=write_end,
        stderr=subprocess.PIPE,
    )
    os.close(read_end)
    os.close(write_end)
    first, _ = head.communicate(timeout=60)
    _, stderr = export.communicate(timeout=60)
    assert len(first.splitlines()) == 3
    assert export.returncode == 0 and stderr == b""  # no traceback, no BrokenPipeError
