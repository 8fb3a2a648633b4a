"""OTLP clients nobody here wrote, against a real Beacon: OpenTelemetry's Python SDK with its OTLP/HTTP log exporter
(protobuf, gzip) and OpenTelemetry JS's OTLP/HTTP exporter (OTLP/JSON, under the machine's Node.js). Each ships a
few thousand records; every one is read back exactly."""

from __future__ import annotations

import logging
import subprocess
import warnings
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from tests.integration.shippers.conftest import NODE_CLIENTS, Live, node, shippers_dir

COUNT = 3000


def test_python_sdk_exporter_protobuf(live: Live) -> None:
    exporter = OTLPLogExporter(
        endpoint=f"{live.url}/v1/logs",
        headers={"authorization": f"Bearer {live.token}", "x-beacon-dataset": "otel-python"},
        compression=Compression.Gzip,
    )
    provider = LoggerProvider(resource=Resource.create({"service.name": "checkout"}))
    # Its queue holds every record, so that the client drops none however slowly the machine runs the test.
    provider.add_log_record_processor(
        BatchLogRecordProcessor(exporter, max_export_batch_size=512, max_queue_size=2 * COUNT)
    )
    logger = logging.getLogger("shippers.checkout")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    with warnings.catch_warnings():  # the SDK's stdlib logging bridge, deprecated in favour of a separate package
        warnings.simplefilter("ignore", DeprecationWarning)
        handler = LoggingHandler(level=logging.INFO, logger_provider=provider)
    logger.addHandler(handler)
    try:
        for i in range(COUNT):
            (logger.warning if i % 3 == 0 else logger.info)("order %d paid", i, extra={"order.id": i})
        assert provider.force_flush(30_000)
    finally:
        logger.removeHandler(handler)
        provider.shutdown()
    rows = live.export(
        "['otel-python'] | project message, severity_text, ['attributes.order.id'], ['resource.service.name'], "
        "['scope.name']"
    )
    assert len(rows) == COUNT
    assert {(r["message"], r["severity_text"], r["attributes.order.id"]) for r in rows} == {
        (f"order {i} paid", "WARN" if i % 3 == 0 else "INFO", i) for i in range(COUNT)
    }
    assert {(r["resource.service.name"], r["scope.name"]) for r in rows} == {("checkout", "shippers.checkout")}


def test_javascript_exporter_json(live: Live) -> None:
    cache = shippers_dir()
    done = subprocess.run(
        [node(), str(NODE_CLIENTS / "otlp_json.js"), live.url, live.token, "otel-js", str(COUNT)],
        env={"NODE_PATH": str(cache / "node" / "node_modules"), "PATH": str(Path(node()).parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = live.export(
        "['otel-js'] | project message, severity_number, ['attributes.order.id'], ['attributes.order.express'], "
        "['attributes.order.tags'], ['scope.name'], ['scope.version'], ['resource.service.name']"
    )
    assert len(rows) == COUNT
    assert sorted((r["message"], r["attributes.order.id"], r["attributes.order.express"]) for r in rows) == sorted(
        (f"order {i} shipped", i, i % 2 == 0) for i in range(COUNT)
    )
    assert {
        (
            r["severity_number"],
            str(r["attributes.order.tags"]),
            r["scope.name"],
            r["scope.version"],
            r["resource.service.name"],
        )
        for r in rows
    } == {(9, str(["a", "b"]), "shop.orders", "2.0.1", "node-shop")}
