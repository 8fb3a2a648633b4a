# Types of the compiled row builder (app/ingest/_fastrows.c).
class FastRows:
    def __init__(
        self,
        *,
        dataset_id: int,
        arrival_us: int,
        max_us: int,
        timestamp_field: str,
        max_event_bytes: int,
        max_days: int,
        days: set[int],
        minutes: dict[int, int],
        shapes: set[tuple[tuple[str, ...], tuple[type, ...]]],
        stamped_keys: set[tuple[str, ...]],
    ) -> None: ...
    def add(self, lines: list[bytes], start: int, buf: bytearray, /) -> tuple[int, int, int, int]: ...
