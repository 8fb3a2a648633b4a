"""Elasticsearch clients nobody here wrote, against a real Beacon's `/v1/elastic`: Debian's syslog-ng
(`elasticsearch-http()` destination) and rsyslog (`omelasticsearch`) as daemons of their own, reading a loopback
socket (syslog-ng) and a file (rsyslog), and Elastic's Python client. Each daemon is started once for the module;
each ships a few thousand lines, read back exactly."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.shippers.conftest import Daemon, Live, shippers_dir
from tests.servers import free_port

COUNT = 3000


def lines(prefix: str) -> list[str]:
    # Text a shipper must carry as it is: quotes, a backslash, a tab and non-ASCII.
    return [f'{prefix} {i} "quoted" back\\slash\ttab é' for i in range(COUNT)]


@pytest.fixture(scope="module")
def syslog_ng(live: Live, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """syslog-ng reading TCP lines on a loopback port (returned), sending them to Beacon's bulk API."""
    root = shippers_dir() / "root"
    work = tmp_path_factory.mktemp("syslog-ng")
    port = free_port()
    (work / "syslog-ng.conf").write_text(
        f"""@version: 3.38
@define include-path "{root}/etc/syslog-ng:{root}/usr/share/syslog-ng/include"
@include "scl.conf"
options {{ stats-freq(0); }};
source s_lines {{ network(ip("127.0.0.1") port({port}) transport("tcp") flags(no-parse)); }};
destination d_beacon {{
  elasticsearch-http(
    url("{live.url}/v1/elastic/_bulk")
    index("syslog-ng")
    type("")
    user("syslog-ng")
    password("{live.token}")
    workers(1)
    batch-lines(500)
    batch-timeout(200)
  );
}};
log {{ source(s_lines); destination(d_beacon); }};
"""
    )
    daemon = Daemon(
        "syslog-ng",
        [
            str(root / "usr/sbin/syslog-ng"),
            "--foreground",
            "--stderr",
            f"--cfgfile={work / 'syslog-ng.conf'}",
            f"--module-path={next((root / 'usr/lib/syslog-ng').glob('3.*'))}",
            f"--persist-file={work / 'syslog-ng.persist'}",
            f"--pidfile={work / 'syslog-ng.pid'}",
            f"--control={work / 'syslog-ng.ctl'}",
        ],
        work,
    )
    try:
        _wait_for_port(port, daemon)
        yield port
    finally:
        daemon.stop()


def _wait_for_port(port: int, daemon: Daemon, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        reason = daemon.exited()
        assert reason is None, reason
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"{daemon.name} did not listen on {port}"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def rsyslog(live: Live, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """rsyslog following a file (returned) with imfile, sending its lines to Beacon's bulk API with omelasticsearch."""
    root = shippers_dir() / "root"
    work = tmp_path_factory.mktemp("rsyslog")
    followed = work / "app.log"
    followed.touch()
    (work / "rsyslog.conf").write_text(
        f"""global(workDirectory="{work}" parser.escapeControlCharactersOnReceive="off")
module(load="imfile" mode="inotify")
module(load="omelasticsearch")
template(name="beacon_doc" type="list" option.jsonf="on") {{
  property(outname="@timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="message" name="msg" format="jsonf")
  property(outname="tag" name="syslogtag" format="jsonf")
}}
input(type="imfile" file="{followed}" tag="app:" ruleset="to_beacon")
ruleset(name="to_beacon") {{
  action(type="omelasticsearch" server="{live.url}/v1/elastic/" searchIndex="rsyslog" template="beacon_doc"
         bulkmode="on" maxbytes="1m" uid="rsyslog" pwd="{live.token}" queue.type="linkedList"
         queue.dequeueBatchSize="500" queue.timeoutWorkerthreadShutdown="100")
}}
"""
    )
    daemon = Daemon(
        "rsyslog",
        [
            str(root / "usr/sbin/rsyslogd"),
            "-n",
            "-f",
            str(work / "rsyslog.conf"),
            "-i",
            str(work / "rsyslog.pid"),
            "-M",
            str(root / "usr/lib/x86_64-linux-gnu/rsyslog"),
        ],
        work,
    )
    try:
        deadline = time.monotonic() + 30
        while not (work / "rsyslog.pid").exists():  # written once its configuration is loaded
            reason = daemon.exited()
            assert reason is None, reason
            assert time.monotonic() < deadline, "rsyslog did not start"
            time.sleep(0.1)
        yield followed
    finally:
        daemon.stop()


def test_rsyslog_omelasticsearch(live: Live, rsyslog: Path) -> None:
    sent = lines("rsyslog")
    with rsyslog.open("a", encoding="utf-8") as followed:
        followed.write("".join(line + "\n" for line in sent))
    live.wait_for("rsyslog", COUNT)
    rows = live.export("['rsyslog'] | project message, tag")
    assert sorted(r["message"] for r in rows) == sorted(sent)
    assert {r["tag"] for r in rows} == {"app:"}


def test_syslog_ng_elasticsearch_http(live: Live, syslog_ng: int) -> None:
    sent = lines("syslog-ng")
    with socket.create_connection(("127.0.0.1", syslog_ng)) as conn:
        conn.sendall("".join(line + "\n" for line in sent).encode())
    live.wait_for("syslog-ng", COUNT)
    rows = live.export("['syslog-ng'] | project MESSAGE")
    assert sorted(r["MESSAGE"] for r in rows) == sorted(sent)


def test_elasticsearch_python_client(live: Live) -> None:
    from elasticsearch import Elasticsearch, helpers

    es = Elasticsearch(f"{live.url}/v1/elastic", basic_auth=("elastic", live.token), request_timeout=60)
    try:
        assert es.ping()
        assert es.info()["version"]["number"].startswith("8.")
        assert es.cluster.health()["status"] == "green"
        start = 1_795_248_930_000  # ms: 2026-11-21T08:15:30Z
        actions = (
            {"_index": "es-python", "_source": {"@timestamp": start + i, "message": f"doc {i}", "n": i}}
            for i in range(COUNT)
        )
        stored, errors = helpers.bulk(es, actions, chunk_size=500)
        assert (stored, errors) == (COUNT, [])
        # The items that failed are the client's to retry: it is told which.
        ok, failed = helpers.bulk(
            es,
            [{"_index": "es-python", "_source": {"message": "bad time", "@timestamp": "noon"}}],
            raise_on_error=False,
        )
        assert ok == 0 and failed[0]["index"]["status"] == 400
    finally:
        es.close()
    rows = live.export("['es-python'] | project _time, message, n")
    assert len(rows) == COUNT
    assert sorted((r["n"], r["message"]) for r in rows) == [(i, f"doc {i}") for i in range(COUNT)]
    assert rows[0]["_time"].startswith("2026-11-21T08:15")
