"""The shippers' protocols against native NDJSON: the same events, the same server, the same run.

    .venv/bin/python bench/shippers.py [--events 100000] [--batch 5000] [--clients 2] [--rounds 3]

1. A scratch database (BEACON_BENCH_DATABASE_URL's server) and one `beacon serve` on it.
2. The same events (bench/ingest.py's realistic ones, ~300 bytes each) as bodies of each protocol, built before the
   clock starts: `POST /v1/ingest` NDJSON (the baseline), OTLP protobuf and OTLP/JSON (`POST /v1/logs`: each event a
   log record, its message the body, its time `time_unix_nano`, its level the severity, the other fields
   attributes, `host` a resource attribute), Elasticsearch bulk (an `index` action and the event with
   `@timestamp`), and Loki JSON and snappy protobuf (streams by service and level, the message the line).
   Plain bodies (no gzip): what is measured is the decoding, not inflating.
3. Each protocol sends all events in batches from concurrent clients into a dataset of its own, timed from the
   first request to the last answer; the server's CPU time (its process, from /proc) is read around it. Rounds
   alternate the protocols (the machine is shared: one round alone can be unlucky); the best of each is printed
   with its ratio to native NDJSON's best, in events/s and in server CPU per event.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import snappy
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.shippers.loki import proto as loki_proto  # noqa: E402
from bench.ingest import flat, make_events  # noqa: E402
from bench.serve import finish, scratch_database, start_beacon, tree_cpu_seconds, wait_ready  # noqa: E402

SEVERITY = {"info": 9, "error": 17}


def _ns(event: dict[str, Any]) -> int:
    moment = datetime.fromisoformat(event["_time"].replace("Z", "+00:00"))
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def native(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    return "/v1/ingest/bench-native", {"content-type": "application/x-ndjson"}, b"\n".join(map(orjson.dumps, events))


def _otlp(events: list[dict[str, Any]]) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    by_host: dict[str, Any] = {}
    for event in events:
        scope_logs = by_host.get(event["host"])
        if scope_logs is None:
            resource_logs = request.resource_logs.add()
            resource_logs.resource.attributes.add(key="host", value={"string_value": event["host"]})
            scope_logs = by_host[event["host"]] = resource_logs.scope_logs.add()
            scope_logs.scope.name = "bench"
        record = scope_logs.log_records.add(
            time_unix_nano=_ns(event),
            severity_number=SEVERITY[event["level"]],
            severity_text=event["level"],
        )
        record.body.string_value = event["message"]
        for key, value in flat(event).items():
            if key in ("_time", "host", "level", "message"):
                continue
            kind = (
                "string_value" if isinstance(value, str) else "int_value" if isinstance(value, int) else "double_value"
            )
            record.attributes.add(key=key, value={kind: value})
    return request


def otlp_protobuf(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    headers = {"content-type": "application/x-protobuf", "x-beacon-dataset": "bench-otlp-protobuf"}
    return "/v1/logs", headers, _otlp(events).SerializeToString()


def otlp_json(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    from google.protobuf import json_format

    headers = {"content-type": "application/json", "x-beacon-dataset": "bench-otlp-json"}
    return "/v1/logs", headers, json_format.MessageToJson(_otlp(events), indent=None).encode()


def bulk(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    action = b'{"index":{"_index":"bench-bulk"}}'
    lines = []
    for event in events:
        doc = dict(event)
        doc["@timestamp"] = doc.pop("_time")
        lines += [action, orjson.dumps(doc)]
    return "/v1/elastic/_bulk", {"content-type": "application/x-ndjson"}, b"\n".join(lines) + b"\n"


def _streams(events: list[dict[str, Any]]) -> dict[tuple[str, str], list[tuple[int, str]]]:
    streams: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for event in events:
        streams.setdefault((event["service"], event["level"]), []).append((_ns(event), event["message"]))
    return streams


def loki_json(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    streams = [
        {"stream": {"service": s, "level": lv, "dataset": "bench-loki-json"}, "values": [[str(t), m] for t, m in e]}
        for (s, lv), e in _streams(events).items()
    ]
    return "/v1/loki/api/v1/push", {"content-type": "application/json"}, orjson.dumps({"streams": streams})


def loki_protobuf(events: list[dict[str, Any]]) -> tuple[str, dict[str, str], bytes]:
    request = loki_proto.push_request()()
    for (service, level), entries in _streams(events).items():
        stream = request.streams.add(
            labels=f'{{service="{service}", level="{level}", dataset="bench-loki-pb"}}'.encode()
        )
        for time_ns, line in entries:
            entry = stream.entries.add(line=line.encode())
            entry.timestamp.seconds, entry.timestamp.nanos = divmod(time_ns, 1_000_000_000)
    body = snappy.compress(request.SerializeToString())
    return "/v1/loki/api/v1/push", {"content-type": "application/x-protobuf"}, body


PROTOCOLS: dict[str, Callable[[list[dict[str, Any]]], tuple[str, dict[str, str], bytes]]] = {
    "native NDJSON (baseline)": native,
    "OTLP protobuf": otlp_protobuf,
    "OTLP/JSON": otlp_json,
    "Elasticsearch bulk": bulk,
    "Loki JSON": loki_json,
    "Loki protobuf (snappy)": loki_protobuf,
}
_OK = {200, 204}


async def run(base: str, token: str, requests: list[tuple[str, dict[str, str], bytes]], clients: int) -> float:
    queue = list(reversed(requests))
    async with httpx.AsyncClient(base_url=base, headers={"authorization": f"Bearer {token}"}, timeout=300) as http:

        async def client() -> None:
            while queue:
                path, headers, body = queue.pop()
                r = await http.post(path, headers=headers, content=body)
                assert r.status_code in _OK, (path, r.status_code, r.text[:500])
                if path == "/v1/elastic/_bulk":  # without parsing the ~1 MB answer on this side of the clock
                    assert r.content.startswith(b'{"took":') and b'"errors":false' in r.content[:40], r.text[:500]

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated protocol names to run beside the baseline")
    args = parser.parse_args()
    chosen = {name for name in args.only.split(",") if name}
    protocols = {n: b for n, b in PROTOCOLS.items() if not chosen or n in chosen or n.startswith("native")}
    events = make_events(args.events)
    batches = [events[i : i + args.batch] for i in range(0, len(events), args.batch)]
    bodies = {name: [build(batch) for batch in batches] for name, build in protocols.items()}
    for name, requests in bodies.items():
        size = sum(len(body) for _, _, body in requests)
        print(f"{name}: {len(requests)} requests, {size / len(events):.0f} bytes/event as sent")
    admin, db_name, url = await scratch_database("shippers")
    proc = None
    best: dict[str, tuple[float, float]] = {}
    try:
        proc, token, port = start_beacon(url, "bench-shippers")
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as http:
            await wait_ready(http, base)
        await run(base, token, bodies["native NDJSON (baseline)"][:1], 1)  # warm up (dataset, partitions, caches)
        for round_no in range(1, args.rounds + 1):
            for name, requests in bodies.items():
                cpu_before = tree_cpu_seconds(proc.pid)
                elapsed = await run(base, token, requests, args.clients)
                cpu = tree_cpu_seconds(proc.pid) - cpu_before
                rate, cpu_us = len(events) / elapsed, cpu / len(events) * 1e6
                print(f"round {round_no} {name}: {rate:,.0f} events/s, server CPU {cpu_us:.1f} µs/event")
                old = best.get(name)
                best[name] = (max(rate, old[0]) if old else rate, min(cpu_us, old[1]) if old else cpu_us)
    finally:
        await finish(proc, admin, db_name)
    base_rate, base_cpu = best["native NDJSON (baseline)"]
    print("\n| protocol | best events/s | ratio | server CPU µs/event (least) | ratio |\n|---|---|---|---|---|")
    for name, (rate, cpu_us) in best.items():
        print(f"| {name} | {rate:,.0f} | {rate / base_rate:.2f} | {cpu_us:.1f} | {cpu_us / base_cpu:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
