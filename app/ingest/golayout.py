"""Go reference-time layouts (`02/Jan/2006:15:04:05 -0700`): the named layouts and the tokeniser.

The tokeniser follows Go's `nextStdChunk` element by element, so a layout means here what it means in Go.
Parsing (goparse.py) follows `time.Parse` too, with three deliberate differences that suit log timestamps:
- a layout without a year takes the arrival year (the previous one if that would put the event more than a
  day in the future); one without any date part takes the arrival date;
- a zone abbreviation (`MST` element) must be one we know the offset of (`UTC`, `GMT±h`, `PST`, `CEST`, …):
  Go silently reads unknown ones as UTC, which would misplace events by hours, so we fail the event instead;
- the result is kept to microseconds (PostgreSQL's precision).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

NAMED_LAYOUTS: dict[str, str] = {
    "Layout": "01/02 03:04:05PM '06 -0700",
    "ANSIC": "Mon Jan _2 15:04:05 2006",
    "UnixDate": "Mon Jan _2 15:04:05 MST 2006",
    "RubyDate": "Mon Jan 02 15:04:05 -0700 2006",
    "RFC822": "02 Jan 06 15:04 MST",
    "RFC822Z": "02 Jan 06 15:04 -0700",
    "RFC850": "Monday, 02-Jan-06 15:04:05 MST",
    "RFC1123": "Mon, 02 Jan 2006 15:04:05 MST",
    "RFC1123Z": "Mon, 02 Jan 2006 15:04:05 -0700",
    "RFC3339": "2006-01-02T15:04:05Z07:00",
    "RFC3339Nano": "2006-01-02T15:04:05.999999999Z07:00",
    "Kitchen": "3:04PM",
    "Stamp": "Jan _2 15:04:05",
    "StampMilli": "Jan _2 15:04:05.000",
    "StampMicro": "Jan _2 15:04:05.000000",
    "StampNano": "Jan _2 15:04:05.000000000",
    "DateTime": "2006-01-02 15:04:05",
    "DateOnly": "2006-01-02",
    "TimeOnly": "15:04:05",
}
_NAMED_LOWER = {k.lower(): v for k, v in NAMED_LAYOUTS.items()}

# Element codes (names as in Go's time/format.go).
LONG_MONTH, MONTH, NUM_MONTH, ZERO_MONTH = "January", "Jan", "1", "01"
LONG_WEEKDAY, WEEKDAY = "Monday", "Mon"
DAY, UNDER_DAY, ZERO_DAY = "2", "_2", "02"
UNDER_YEARDAY, ZERO_YEARDAY = "__2", "002"
HOUR, HOUR12, ZERO_HOUR12 = "15", "3", "03"
MINUTE, ZERO_MINUTE, SECOND, ZERO_SECOND = "4", "04", "5", "05"
LONG_YEAR, YEAR = "2006", "06"
PM_UPPER, PM_LOWER = "PM", "pm"
TZ = "MST"
ISO_TZ = ("Z070000", "Z07:00:00", "Z0700", "Z07:00", "Z07")
NUM_TZ = ("-070000", "-07:00:00", "-0700", "-07:00", "-07")
FRAC0, FRAC9 = "frac0", "frac9"

DATE_ELEMENTS = {LONG_MONTH, MONTH, NUM_MONTH, ZERO_MONTH, DAY, UNDER_DAY, ZERO_DAY, UNDER_YEARDAY, ZERO_YEARDAY}
_YEAR_ELEMENTS = {LONG_YEAR, YEAR}

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
DAYS_BEFORE = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365)

# Zone abbreviations whose offset is unambiguous in practice (seconds east of UTC).
ZONE_OFFSETS: dict[str, int] = {
    "UTC": 0,
    "GMT": 0,
    "UT": 0,
    "Z": 0,
    "EST": -5 * 3600,
    "EDT": -4 * 3600,
    "CST": -6 * 3600,
    "CDT": -5 * 3600,
    "MST": -7 * 3600,
    "MDT": -6 * 3600,
    "PST": -8 * 3600,
    "PDT": -7 * 3600,
    "AKST": -9 * 3600,
    "AKDT": -8 * 3600,
    "HST": -10 * 3600,
    "WET": 0,
    "WEST": 3600,
    "BST": 3600,
    "CET": 3600,
    "CEST": 2 * 3600,
    "EET": 2 * 3600,
    "EEST": 3 * 3600,
    "MSK": 3 * 3600,
    "JST": 9 * 3600,
    "KST": 9 * 3600,
    "HKT": 8 * 3600,
    "SGT": 8 * 3600,
    "AWST": 8 * 3600,
    "ACST": 9 * 3600 + 1800,
    "ACDT": 10 * 3600 + 1800,
    "AEST": 10 * 3600,
    "AEDT": 11 * 3600,
    "NZST": 12 * 3600,
    "NZDT": 13 * 3600,
}


@dataclass(frozen=True)
class Element:
    code: str
    digits: int = 0  # fractional-second elements: how many 0s/9s


Chunk = str | Element


def _starts_lower(s: str) -> bool:
    return bool(s) and "a" <= s[0] <= "z"


def _next_chunk(layout: str) -> tuple[str, Element | None, str]:
    """Go's nextStdChunk: (literal prefix, element or None, rest of the layout)."""
    n = len(layout)
    for i, c in enumerate(layout):
        rest = layout[i:]
        if c == "J" and rest.startswith("Jan"):
            if rest.startswith("January"):
                return layout[:i], Element(LONG_MONTH), layout[i + 7 :]
            if not _starts_lower(layout[i + 3 :]):
                return layout[:i], Element(MONTH), layout[i + 3 :]
        elif c == "M" and n >= i + 3:
            if rest.startswith("Mon"):
                if rest.startswith("Monday"):
                    return layout[:i], Element(LONG_WEEKDAY), layout[i + 6 :]
                if not _starts_lower(layout[i + 3 :]):
                    return layout[:i], Element(WEEKDAY), layout[i + 3 :]
            if rest.startswith("MST"):
                return layout[:i], Element(TZ), layout[i + 3 :]
        elif c == "0":
            if n >= i + 2 and "1" <= layout[i + 1] <= "6":
                code = (ZERO_MONTH, ZERO_DAY, ZERO_HOUR12, ZERO_MINUTE, ZERO_SECOND, YEAR)[int(layout[i + 1]) - 1]
                return layout[:i], Element(code), layout[i + 2 :]
            if rest.startswith("002"):
                return layout[:i], Element(ZERO_YEARDAY), layout[i + 3 :]
        elif c == "1":
            if rest.startswith("15"):
                return layout[:i], Element(HOUR), layout[i + 2 :]
            return layout[:i], Element(NUM_MONTH), layout[i + 1 :]
        elif c == "2":
            if rest.startswith("2006"):
                return layout[:i], Element(LONG_YEAR), layout[i + 4 :]
            return layout[:i], Element(DAY), layout[i + 1 :]
        elif c == "_":
            if rest.startswith("_2"):
                if rest.startswith("_2006"):  # a literal `_` followed by the year
                    return layout[: i + 1], Element(LONG_YEAR), layout[i + 5 :]
                return layout[:i], Element(UNDER_DAY), layout[i + 2 :]
            if rest.startswith("__2"):
                return layout[:i], Element(UNDER_YEARDAY), layout[i + 3 :]
        elif c == "3":
            return layout[:i], Element(HOUR12), layout[i + 1 :]
        elif c == "4":
            return layout[:i], Element(MINUTE), layout[i + 1 :]
        elif c == "5":
            return layout[:i], Element(SECOND), layout[i + 1 :]
        elif c == "P" and rest.startswith("PM"):
            return layout[:i], Element(PM_UPPER), layout[i + 2 :]
        elif c == "p" and rest.startswith("pm"):
            return layout[:i], Element(PM_LOWER), layout[i + 2 :]
        elif c == "-":
            for code in NUM_TZ:
                if rest.startswith(code):
                    return layout[:i], Element(code), layout[i + len(code) :]
        elif c == "Z":
            for code in ISO_TZ:
                if rest.startswith(code):
                    return layout[:i], Element(code), layout[i + len(code) :]
        elif c in ".," and i + 1 < n and layout[i + 1] in "09":
            ch = layout[i + 1]
            j = i + 1
            while j < n and layout[j] == ch:
                j += 1
            if not (j < n and layout[j].isdigit()):  # only a fraction if the run of digits ends here
                return layout[:i], Element(FRAC0 if ch == "0" else FRAC9, j - i - 1), layout[j:]
    return layout, None, ""


@lru_cache(maxsize=256)
def compile_layout(layout: str) -> tuple[Chunk, ...]:
    """Split a layout (or the name of a Go named layout) into literals and elements.

    Raises ValueError when the text holds no time element at all (it could never parse a timestamp).
    """
    layout = resolve_named(layout)
    chunks: list[Chunk] = []
    rest = layout
    while rest:
        prefix, element, rest = _next_chunk(rest)
        if prefix:
            chunks.append(prefix)
        if element is None:
            break
        chunks.append(element)
    if not any(isinstance(c, Element) for c in chunks):
        raise ValueError(f"{layout!r} is not a Go reference-time layout (no element such as 2006, 01, 15 or 04)")
    return tuple(chunks)


def resolve_named(layout: str) -> str:
    """The layout text for a Go layout name (any case), or the text itself."""
    return _NAMED_LOWER.get(layout.lower(), layout)
