"""A protobuf body that does not decode whole: the complete log records are kept, never part of one."""

from __future__ import annotations

import pytest

from app.errors import BeaconError
from app.shippers.otlp import protobuf
from tests.integration.shippers.test_otlp import otlp_request


def test_every_truncation_keeps_only_whole_records():
    whole = otlp_request(3)
    originals = [r.SerializeToString() for r in whole.resource_logs[0].scope_logs[0].log_records]
    data = whole.SerializeToString()
    kept_counts = set()
    for cut in range(1, len(data)):
        try:
            decoded = protobuf.decode(data[:cut], compiled=False)  # salvage is upb's path
        except BeaconError as exc:
            assert exc.code == "invalid_body"
            continue
        records = [r for rl in decoded.request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
        assert [r.SerializeToString() for r in records] == originals[: len(records)], cut
        if len(records) < 3:
            assert decoded.rejected >= 1, cut
        kept_counts.add(len(records))
    assert kept_counts == {1, 2}  # cut inside the second record, and inside the third


@pytest.mark.parametrize("garbage", [b"\xff\xff\xff", b"\x0a\x05abc", b"hello", b"\x08"])
def test_garbage_is_refused(garbage):
    with pytest.raises(BeaconError) as err:
        protobuf.decode(garbage)
    assert err.value.code == "invalid_body"


def test_a_corrupt_record_between_good_ones_is_rejected_alone():
    req = otlp_request(3)
    records = req.resource_logs[0].scope_logs[0].log_records
    good = [r.SerializeToString() for r in records]
    data = req.SerializeToString()
    # Replace the second record's bytes with garbage of the same length (its length prefix stays valid).
    start = data.index(good[1])
    broken = data[:start] + b"\xff" * len(good[1]) + data[start + len(good[1]) :]
    decoded = protobuf.decode(broken, compiled=False)
    kept = [r.SerializeToString() for r in decoded.request.resource_logs[0].scope_logs[0].log_records]
    assert kept == [good[0], good[2]]
    assert decoded.rejected == 1
    assert decoded.request.resource_logs[0].resource.attributes[0].value.string_value == "checkout"
