"""`closest`, the "did you mean" of query warnings: right for ordinary names, and bounded for hostile ones."""

from __future__ import annotations

from app.query.fieldcheck import MAX_COMPARED, closest


def test_case_then_the_closest_name():
    known = ["method", "path", "status", "duration_ms"]
    assert closest("Status", known) == "status"
    assert closest("statuss", known) == "status"
    assert closest("durationms", known) == "duration_ms"
    assert closest("zzz", known) is None


def test_among_many_names_the_closest_is_still_found():
    # Many more candidates than difflib compares: the one meant is among those nearest in length.
    known = [f"resource.attributes.service.instance.{i:05d}.extra.{'x' * (i % 40)}" for i in range(10_000)]
    known.append("service.name")
    assert len(known) > MAX_COMPARED
    assert closest("service.nmae", known) == "service.name"


def test_a_very_long_name_gets_no_suggestion_but_an_exact_case_match():
    long = "a" * 300
    assert closest(long, ["a" * 299]) is None
    assert closest(long.upper(), [long]) == long
