"""Chromium for the browser tests: Debian's ``chromium`` package, installed with APT where it is missing.

The browser is the ``chromium`` on ``PATH``; without one, a root user with ``apt-get`` installs the
candidate of the machine's APT sources (``apt-get install -y chromium``, after ``apt-get update``
if the package lists do not have it yet), once: the test processes that want it at the same time
(pytest-xdist's workers) take turns on a lock file, and the ones after the first find it installed; APT
itself waits for another user of dpkg's lock (``DPkg::Lock::Timeout``) instead of failing at once.
Playwright drives it (``executable_path``): its own ``playwright install`` downloads browsers from a CDN,
which the test machines cannot reach.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

INSTALL_TIMEOUT_S = 900
#: the lock file the processes installing chromium take turns on
INSTALL_LOCK = Path(tempfile.gettempdir()) / "gpufleet-chromium-install.lock"


class ChromiumUnavailable(RuntimeError):
    """No chromium on PATH, and it could not be installed (not root, no apt-get, or APT failed)."""


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", "-o", f"DPkg::Lock::Timeout={INSTALL_TIMEOUT_S}", *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        env=env,
        check=False,
    )


@contextmanager
def _taking_turns() -> Iterator[None]:
    """An exclusive lock on ``INSTALL_LOCK`` while the block runs (one installing process at a time)."""
    with INSTALL_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def chromium() -> Path:
    """The chromium binary: on PATH, or Debian's package installed now."""
    if (found := shutil.which("chromium")) is not None:
        return Path(found)
    if shutil.which("apt-get") is None:
        raise ChromiumUnavailable("no chromium on PATH, and no apt-get to install Debian's package")
    if os.geteuid() != 0:
        raise ChromiumUnavailable(
            "no chromium on PATH; installing it (apt-get install -y chromium) needs root"
        )
    with _taking_turns():
        if (found := shutil.which("chromium")) is not None:  # (installed by the process before)
            return Path(found)
        installed = _apt_get("install", "-y", "chromium")
        if installed.returncode != 0:
            _apt_get("update")
            installed = _apt_get("install", "-y", "chromium")
    found = shutil.which("chromium")
    if installed.returncode != 0 or found is None:
        raise ChromiumUnavailable(
            f"apt-get install -y chromium: {(installed.stderr or installed.stdout)[-500:]}"
        )
    return Path(found)
