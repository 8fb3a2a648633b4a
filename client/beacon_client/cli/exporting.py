"""`beacon export`: every row of a query, streamed as NDJSON to stdout or a file, progress on stderr."""

from __future__ import annotations

import os
import sys
import time
from typing import IO

import click

from beacon_client.cli.common import connection_options, fail, make_client, reporting
from beacon_client.cli.status_line import StatusLine


class ExportProgress(StatusLine):
    """Rows, megabytes and rate while rows arrive."""

    def update(self, rows: int, written: int) -> None:
        seconds = self.due()
        if seconds is not None:
            self.show(f"{rows:,} rows, {written / 1e6:,.1f} MB, {rows / max(seconds, 1e-6):,.0f} rows/s ")


@click.command()
@click.argument("apl")
@click.option("--start-time", help="RFC 3339 or relative, e.g. now-1h.")
@click.option("--end-time", help="RFC 3339 or relative (default now).")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="File to write (default: stdout). Written as FILE.partial and renamed once complete.",
)
@connection_options
def export(apl: str, start_time: str | None, end_time: str | None, output: str, url: str, token: str | None) -> None:
    """Stream every row of an APL query (- reads it from stdin) as NDJSON, one object per line; no row cap.

    Progress on stderr while it runs (on a terminal), then a summary line on stderr.
    """
    import httpx
    import msgspec

    text = sys.stdin.read() if apl == "-" else apl
    encode = msgspec.json.Encoder().encode
    started = time.monotonic()
    progress = ExportProgress(enabled=sys.stderr.isatty())
    partial = f"{output}.partial"
    out: IO[bytes] = sys.stdout.buffer if output == "-" else open(partial, "wb")  # closed below
    rows = written = 0
    try:
        with reporting(url), make_client(url, token) as client:
            try:
                for row in client.export(text, start_time=start_time, end_time=end_time):
                    line = encode(row) + b"\n"
                    out.write(line)
                    rows += 1
                    written += len(line)
                    if rows % 1000 == 0:
                        progress.update(rows, written)
            except httpx.HTTPError as exc:  # the stream was cut after it began (the service gave up, a network drop)
                progress.done()
                kept = f"; the {rows:,} rows received are in {partial}" if output != "-" else ""
                fail(f"the export was cut short after {rows:,} rows: {exc or type(exc).__name__}{kept}")
        out.flush()
    except BrokenPipeError:  # `beacon export … | head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # no second error at exit
        sys.exit(0)
    finally:
        if out is not sys.stdout.buffer:
            out.close()
            if rows == 0 and sys.exc_info()[0] is not None:  # refused before any row: leave no empty file behind
                os.unlink(partial)
    if output != "-":
        os.replace(partial, output)
    progress.done()
    seconds = time.monotonic() - started
    where = "" if output == "-" else f" to {output}"
    click.echo(f"exported {rows:,} rows{where} in {seconds:.1f} s ({written / 1e6:,.1f} MB)", err=True)
