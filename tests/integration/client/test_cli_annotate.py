"""`beacon annotate` end to end against `beacon serve`, as a CI job runs it."""

from __future__ import annotations

import re
from datetime import UTC, datetime

REQUEST = re.compile(r"\[status (\d+), request (req_[0-9a-f]+)\]")


def test_one_line_in_a_ci_job(served):
    with served.client() as beacon:  # the datasets exist: nothing to warn about (test_cli_warnings.py)
        for name in ("web", "api"):
            beacon.ingest(name, [{"a": 1}])
    done = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1.2.3", "--dataset", "web", "--dataset", "api",
        "--url", "https://ci.example.com/jobs/42", "--time", "2026-11-21T08:00:00Z",
        "--end-time", "2026-11-21T09:05:00+01:00", "--description", "rolled out by CI",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ann_id = done.stdout.strip()
    assert re.fullmatch(r"ann_[0-9a-f]+", ann_id) and done.stderr == ""
    with served.client() as beacon:
        ann = beacon.get_annotation(ann_id)
    assert (ann.type, ann.title, ann.datasets, ann.url, ann.description) == (
        "deploy",
        "v1.2.3",
        ["web", "api"],
        "https://ci.example.com/jobs/42",
        "rolled out by CI",
    )
    assert ann.time == datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
    assert ann.end_time == datetime(2026, 11, 21, 8, 5, tzinfo=UTC)


def test_labels_and_an_environment_wide_marker(served):
    done = served.beacon(
        "annotate", "--type", "deploy", "--title", "checkout 1.4.2", "--dataset", "*",
        "--label", "service=checkout", "--label", "env=prod",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # "*" is not a dataset to check
    with served.client() as beacon:
        ann = beacon.get_annotation(done.stdout.strip())
    assert ann.datasets == ["*"] and ann.labels == {"env": "prod", "service": "checkout"}
    bad = served.beacon("annotate", "--type", "deploy", "--title", "x", "--dataset", "web", "--label", "nolabel")
    assert bad.returncode != 0 and "name=value" in bad.stderr


def test_server_and_token_as_options(served):
    done = served.beacon(
        "annotate", "--type", "incident", "--title", "db down", "--dataset", "db",
        "--server", served.url, "--token", served.token,
        BEACON_URL="http://127.0.0.1:9", BEACON_TOKEN="bcn_wrong",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with served.client() as beacon:
        ann = beacon.get_annotation(done.stdout.strip())
    assert ann.type == "incident" and ann.end_time is None and ann.time is not None


def test_failures_exit_1_with_code_message_and_request_id(served):
    bad_token = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1", "--dataset", "web", BEACON_TOKEN="bcn_" + "x" * 40
    )
    assert bad_token.returncode == 1 and bad_token.stdout == ""
    assert bad_token.stderr.startswith("error: invalid_token: ")
    status = REQUEST.search(bad_token.stderr)
    assert status and status.group(1) == "401"

    backwards = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1", "--dataset", "not-made-by-any-test",
        "--time", "2026-11-21T08:00:00Z", "--end-time", "2026-11-21T07:00:00Z",
    )  # fmt: skip
    assert backwards.returncode == 1  # refused: no warning that the dataset does not exist, only the error
    assert backwards.stderr.startswith("error: invalid_field: ") and "(param end_time)" in backwards.stderr
    assert REQUEST.search(backwards.stderr)

    no_offset = served.beacon(
        "annotate", "--type", "deploy", "--title", "v1", "--dataset", "web", "--time", "2026-11-21 08:00"
    )
    assert no_offset.returncode == 1 and "(param time)" in no_offset.stderr
