"""The log formats of `beacon serve` (app/logs.py): what an operator's log pipeline reads."""

from __future__ import annotations

import json
import logging

from app.logs import current_request_id


def test_json_lines_carry_the_request_id_and_extras(captured_logs):
    out = captured_logs("json")
    token = current_request_id.set("req_abc")
    try:
        logging.getLogger("beacon.monitors").info("monitor %s is alerting", "mon_1", extra={"monitor_id": "mon_1"})
    finally:
        current_request_id.reset(token)
    logging.getLogger("beacon.deliveries").warning("gave up")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "monitor mon_1 is alerting" and first["level"] == "info"
    assert first["request_id"] == "req_abc" and first["monitor_id"] == "mon_1" and first["logger"] == "beacon.monitors"
    assert "request_id" not in second and second["level"] == "warning"


def test_text_lines_end_with_the_request_id(captured_logs):
    out = captured_logs("text")
    token = current_request_id.set("req_xyz")
    try:
        logging.getLogger("beacon.access").info("GET /v1/tokens 200 3.1 ms")
    finally:
        current_request_id.reset(token)
    assert out.getvalue().rstrip().endswith("INFO beacon.access: GET /v1/tokens 200 3.1 ms [req_xyz]")


def test_the_schedulers_routine_lines_are_dropped_and_its_errors_kept(captured_logs):
    out = captured_logs("text")
    executor = logging.getLogger("apscheduler.executors.default")
    executor.info('Running job "run" (scheduled at …)')
    executor.info('Job "run" executed successfully')
    scheduler = logging.getLogger("apscheduler.scheduler")
    scheduler.warning('Execution of job "run" skipped: maximum number of running instances reached (1)')
    scheduler.info("Scheduler started")
    executor.error('Job "run" raised an exception')
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[0]]
    assert 'Job "run" raised an exception' in out.getvalue()
