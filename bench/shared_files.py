"""Where the benchmarks and the tests find the shared files (public cluster traces and upstream projects'
manifests), which the repository does not copy: ``GPUFLEET_SHARED`` if set, else ``shared`` beside this
checkout, else ``shared`` beside the repository it was cloned from (a fresh clone in a temporary folder
still finds them)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _origin() -> Path | None:
    """The local repository this checkout was cloned from, if it was cloned from one."""
    try:
        url = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    path = Path(url.removeprefix("file://"))
    return path.resolve() if url and path.is_absolute() and path.is_dir() else None


def shared_dir() -> Path:
    if env := os.environ.get("GPUFLEET_SHARED"):
        return Path(env)
    beside = ROOT.parent / "shared"
    origin = _origin()
    if beside.is_dir() or origin is None:
        return beside
    return origin.parent / "shared"


SHARED = shared_dir()
TRACES = SHARED / "traces" / "alibaba-gpu-v2023"
UPSTREAM = SHARED / "upstream-manifests"
