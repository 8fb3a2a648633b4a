"""`beacon serve` without --workers: a process per CPU, as many as PostgreSQL's max_connections allows."""

from __future__ import annotations

from app.cli import default_workers


def test_one_process_per_cpu_when_the_connections_allow(capsys):
    assert default_workers(100, 2) == 2
    assert default_workers(400, 8) == 8
    assert capsys.readouterr().err == ""


def test_fewer_processes_than_cpus_when_connections_run_short_and_it_says_so(capsys):
    assert default_workers(100, 8) == 2  # 90 connections to share, 44 at most each
    said = capsys.readouterr().err
    assert "Serving with 2 worker processes for 8 CPUs" in said and "max_connections (100)" in said
    assert default_workers(20, 4) == 1  # never none
