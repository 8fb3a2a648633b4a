"""PostgreSQL's binary COPY format for rows of `events (dataset_id, time, sys_time, data)`.

Built by hand rather than through asyncpg's record encoder: times arrive here as integer microseconds, so a
row is one `struct.pack` plus the JSON bytes, with no datetime object in between.
"""

from __future__ import annotations

import struct

COLUMNS = ("dataset_id", "time", "sys_time", "data")
HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
# PostgreSQL counts timestamps in microseconds from 2000-01-01 UTC; we count from 1970-01-01.
PG_EPOCH_OFFSET_US = 946_684_800_000_000

# field count, then (length, value) per column; jsonb's binary form is a version byte (1) and the text.
ROW = struct.Struct(">hiiiqiqiB")
ROW_PACK = ROW.pack


def row_prefix(dataset_id: int, time_us: int, sys_time_us: int, data_len: int) -> bytes:
    """Everything of one row before its JSON bytes."""
    return ROW_PACK(
        4, 4, dataset_id, 8, time_us - PG_EPOCH_OFFSET_US, 8, sys_time_us - PG_EPOCH_OFFSET_US, data_len + 1, 1
    )
