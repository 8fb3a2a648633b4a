"""NDJSON line splitting across chunk boundaries, with over-long lines skipped instead of buffered."""

from __future__ import annotations

from app.ingest.lines import LineSplitter


def split_all(chunks: list[bytes], max_line: int = 100) -> tuple[list[bytes], int]:
    splitter = LineSplitter(max_line)
    lines: list[bytes] = []
    oversized = 0
    for chunk in chunks:
        got, over = splitter.feed(chunk)
        lines += got
        oversized += over
    return lines + splitter.finish(), oversized


def test_lines_across_chunks() -> None:
    assert split_all([b'{"a":', b"1}\n{", b'"b":2}\n', b'{"c":3}']) == ([b'{"a":1}', b'{"b":2}', b'{"c":3}'], 0)


def test_blank_and_crlf_lines_are_passed_through() -> None:
    lines, _ = split_all([b'{"a":1}\r\n\n{"b":2}\n'])
    assert lines == [b'{"a":1}\r', b"", b'{"b":2}']


def test_overlong_line_is_skipped_without_buffering() -> None:
    splitter = LineSplitter(10)
    assert splitter.feed(b'{"ok":1}\n' + b"x" * 50) == ([b'{"ok":1}'], True)
    assert splitter.feed(b"y" * 1000) == ([], False)  # still inside the long line: dropped as it comes
    assert splitter.feed(b'zz\n{"b":2}\n') == ([b'{"b":2}'], False)
    assert splitter.finish() == []


def test_overlong_last_line() -> None:
    assert split_all([b'{"a":1}\n', b"q" * 500], max_line=100) == ([b'{"a":1}'], 1)


def test_nul_escapes_are_flagged_per_region_even_across_chunks() -> None:
    splitter = LineSplitter(100)
    assert splitter.feed_checked(b'{"a": "no escapes"}\n{"b": "x\\u00') == ([b'{"a": "no escapes"}'], False, False)
    lines, _, nul = splitter.feed_checked(b'00y"}\n')
    assert lines == [b'{"b": "x\\u0000y"}'] and nul
    assert splitter.feed_checked(b'{"c": "a \\\\ backslash"}\n')[2] is False
