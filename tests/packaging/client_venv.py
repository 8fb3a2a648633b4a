"""A fresh virtual environment holding the client alone (`pip install ./client`), for tests and bench/cli_start.py.

The wheel of client/ is built offline from a copy of it and installed by pip with `--no-deps`; the distributions
it requires (and theirs, as their metadata says) are copied in from this environment, file by file as their RECORD
lists them, so that the versions are the ones tested and nothing is fetched. `pip check` then proves the set
complete: a dependency the client's pyproject forgets would be missing there, not hidden by the server's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def run_checked(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command (five minutes at most); its output in the failure when it fails."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(work: Path) -> Path:
    """The client's wheel, built from a copy of client/ (building writes build/ and *.egg-info beside it)."""
    source = work / "client"
    shutil.copytree(ROOT / "client", source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    run_checked(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", work / "dist", source)  # fmt: skip
    (wheel,) = (work / "dist").glob("beacon_client-*.whl")
    return wheel


def requirements_of(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(zf.read(name).decode())
    return [Requirement(text) for text in meta.get_all("Requires-Dist") or []]


def closure(requirements: list[Requirement]) -> list[metadata.Distribution]:
    """The installed distributions that satisfy `requirements`, with what they require in turn (no extras)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        dist = metadata.distribution(req.name)
        assert req.specifier.contains(dist.version, prereleases=True), f"{req} but {dist.version} is installed"
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key not in found:
            found[key] = dist
            todo += [Requirement(text) for text in dist.requires or []]
    return list(found.values())


def _copy(dist: metadata.Distribution, site: Path) -> None:
    for file in dist.files or []:
        if file.parts[0] == "..":  # its scripts in bin/: the client's own are what is run
            continue
        source = Path(str(file.locate()))
        if source.is_file():
            (site / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, site / file)


def client_venv(work: Path) -> Path:
    """A new venv in `work` with the client alone; returns its bin/ folder (`beacon`, `python`)."""
    wheel = build_wheel(work)
    venv = work / "venv"
    run_checked(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run_checked(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)
    site = Path(run_checked(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip())
    for dist in closure(requirements_of(wheel)):
        _copy(dist, site)
    run_checked(sys.executable, "-m", "pip", "--python", python, "check")
    return venv / "bin"
