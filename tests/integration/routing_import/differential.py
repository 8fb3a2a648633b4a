"""The differential harness: Debian's Alertmanager and `beacon serve` run from the same imported file, the same
alert stream posted to both through `/api/v2/alerts` (and the same silences through `/api/v2/silences`), every
notification of both collected by one local receiver, then compared group by group.

Both send Alertmanager's webhook body (Beacon's notifiers are `webhook` with `format: alertmanager`); Beacon's
requests are told apart by their Standard Webhooks signature headers. A notification is compared by what a
receiver acts on: status, receiver, group key and labels, common labels and annotations, and each alert (labels,
annotations, status, startsAt, endsAt, generatorURL); its arrival time may differ by at most `TOLERANCE`, plus the
delay the machine adds to Alertmanager's own notifications (`machine_delay`: nothing on a quiet machine; on a
2-core box running several test suites, Alertmanager itself was seen a second late, and Beacon, whose every step
is a PostgreSQL transaction on the same box, later still).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.servers import collected, free_port, poll_ready

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
TOLERANCE = 1.0  # seconds between the two sides' arrival times


@dataclass
class Received:
    at: float  # seconds since the stream started
    path: str
    beacon: bool
    body: dict[str, Any]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # both sides send a burst at once: socketserver's default backlog (5) drops some


class Receiver:
    """One local HTTP server that keeps every notification it gets (from either side)."""

    def __init__(self) -> None:
        self.got: list[Received] = []
        self.start = time.monotonic()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.got.append(
                    Received(time.monotonic() - owner.start, self.path, "webhook-id" in self.headers, json.loads(body))
                )
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Alertmanager:
    """Debian's Alertmanager on a free port: no gossip, its own storage."""

    def __init__(self, config: Path, storage: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [ALERTMANAGER, f"--config.file={config}", f"--storage.path={storage}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address=", "--log.level=warn"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.log = collected(self.proc.stderr)  # its warnings and errors, shown when a scenario fails

    def wait_ready(self, timeout: float = 60) -> None:
        def running() -> None:
            if self.proc.poll() is not None:
                raise AssertionError("alertmanager exited:\n" + "\n".join(self.log))

        if not poll_ready(f"{self.url}/-/ready", running, timeout, every=0.1):
            raise AssertionError("alertmanager did not become ready")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Alert:
    """An alert as posted. `starts`/`ends`: seconds from the moment of the post (not set: `startsAt` is the moment
    the alert was first posted, and it has no `endsAt`)."""

    labels: dict[str, str]
    starts: float | None = None
    ends: float | None = None
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass
class Step:
    at: float  # seconds after the stream's start
    alerts: Sequence[Alert] = ()
    silence: dict[str, str] | None = None  # label -> value, silenced for ten minutes from now


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


GENERATOR = "http://prometheus.example:9090/graph?g0.expr=up"


def _silence(matching: dict[str, str]) -> dict[str, Any]:
    return {
        "matchers": [{"name": k, "value": v, "isRegex": False, "isEqual": True} for k, v in matching.items()],
        "startsAt": _iso(time.time()),
        "endsAt": _iso(time.time() + 600),
        "createdBy": "differential",
        "comment": "the same silence on both",
    }


async def run_stream(steps: Sequence[Step], targets: Sequence[tuple[str, dict[str, str]]], receiver: Receiver) -> None:
    """Post the steps to every target (base URL, headers) at their times, the same bodies to each at once: the
    steps of one time in one request per target (silences first), so that no post waits for another."""
    receiver.start = time.monotonic()
    first_start: dict[tuple[tuple[str, str], ...], float] = {}
    times = sorted({s.at for s in steps})
    async with httpx.AsyncClient(timeout=10) as http:
        for at in times:
            now_steps = [s for s in steps if s.at == at]
            await asyncio.sleep(max(0.0, receiver.start + at - time.monotonic()))
            for step in now_steps:
                if step.silence is not None:
                    body = _silence(step.silence)
                    await _all(http.post(f"{url}/api/v2/silences", json=body, headers=h) for url, h in targets)
            now = time.time()
            body = []
            for alert in (a for s in now_steps for a in s.alerts):
                key = tuple(sorted(alert.labels.items()))
                start = now + alert.starts if alert.starts is not None else first_start.get(key, now)
                first_start.setdefault(key, start)
                body.append(
                    {
                        "labels": alert.labels,
                        "annotations": {"summary": alert.labels.get("alertname", ""), **alert.annotations},
                        "startsAt": _iso(start),
                        **({"endsAt": _iso(now + alert.ends)} if alert.ends is not None else {}),
                        "generatorURL": GENERATOR,
                    }
                )
            if body:
                await _all(http.post(f"{url}/api/v2/alerts", json=body, headers=h) for url, h in targets)


async def _all(posts: Any) -> None:
    for response in await asyncio.gather(*posts):
        assert response.status_code == 200, (response.request.url, response.text)


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def summary(body: dict[str, Any]) -> tuple[Any, ...]:
    """What a receiver acts on in one notification (the alerts in no particular order)."""
    alerts = sorted(
        (
            a["status"],
            tuple(sorted(a["labels"].items())),
            tuple(sorted(a["annotations"].items())),
            _when(a["startsAt"]),
            _when(a["endsAt"]),
            a["generatorURL"],
        )
        for a in body["alerts"]
    )
    return (
        body["status"],
        body["receiver"],
        body["groupKey"],
        tuple(sorted(body["groupLabels"].items())),
        tuple(sorted(body["commonLabels"].items())),
        tuple(sorted(body["commonAnnotations"].items())),
        body["truncatedAlerts"],
        tuple(alerts),
    )


Groups = dict[tuple[str, str], list[tuple[float, tuple[Any, ...]]]]  # (path, group labels) -> notifications


def by_group(got: Sequence[Received], *, beacon: bool, path: str) -> Groups:
    found: Groups = defaultdict(list)
    for r in got:
        if r.beacon == beacon and r.path == path:
            labels = ",".join(f"{k}={v}" for k, v in sorted(r.body["groupLabels"].items()))
            found[(r.path, labels)].append((r.at, summary(r.body)))
    return dict(found)


def machine_delay(am: Groups, expected: dict[tuple[str, str], float]) -> float:
    """How much later than its timers said Alertmanager sent the first notification of the groups in `expected`
    (group -> when it was due, in seconds after the stream's start): the median, 0 at least."""
    late = sorted(am[group][0][0] - due for group, due in expected.items() if am.get(group))
    return max(0.0, late[len(late) // 2]) if late else 0.0


def differences(am: Groups, beacon: Groups, tolerance: float = TOLERANCE) -> list[str]:
    """Every way the two sides' notifications differ, per group, in words (empty: the same)."""
    problems = []
    for group in sorted(set(am) | set(beacon)):
        ours, theirs = beacon.get(group, []), am.get(group, [])
        if len(ours) != len(theirs):
            problems.append(
                f"{group}: Alertmanager sent {len(theirs)} notification(s) at {[round(t, 1) for t, _ in theirs]}, "
                f"Beacon {len(ours)} at {[round(t, 1) for t, _ in ours]}\n  Alertmanager: {[s for _, s in theirs]}"
                f"\n  Beacon:       {[s for _, s in ours]}"
            )
            continue
        for i, ((t_am, s_am), (t_b, s_b)) in enumerate(zip(theirs, ours, strict=True)):
            if s_am != s_b:
                problems.append(f"{group} #{i}: Alertmanager {s_am}\n  Beacon       {s_b}")
            if abs(t_am - t_b) > tolerance:
                apart = f"at most {tolerance:.2f} s apart"
                problems.append(f"{group} #{i}: Alertmanager at {t_am:.2f} s, Beacon at {t_b:.2f} s ({apart})")
    return problems
