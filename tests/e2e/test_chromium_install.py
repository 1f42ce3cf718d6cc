"""``e2e.chromium`` installing Debian's chromium for the browser tests: processes that want it at once
(pytest-xdist's workers on a fresh machine) install it once between them, where each ran ``apt-get install``
and all but one failed on dpkg's lock ("Could not get lock /var/lib/dpkg/lock-frontend").

An ``apt-get`` of the test's own stands in for APT (the machine's chromium, if any, is kept off ``PATH``): it
refuses to run beside itself, as dpkg's lock does, takes a second to install, and writes a ``chromium``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

#: the stand-in: "install" beside another one fails as APT does on dpkg's lock; else it writes chromium
FAKE_APT_GET = """#!{python}
import os, sys, time
from pathlib import Path
here = Path(__file__).parent
with open(here / "calls", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if "install" not in sys.argv:
    sys.exit(0)
try:
    os.close(os.open(here / "dpkg.lock", os.O_CREAT | os.O_EXCL))
except FileExistsError:
    print("E: Could not get lock /var/lib/dpkg/lock-frontend.", file=sys.stderr)
    sys.exit(100)
time.sleep(1.0)
browser = here / "chromium"
browser.write_text("#!/bin/sh\\n")
browser.chmod(0o755)
os.remove(here / "dpkg.lock")
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="chromium() installs only as root")
def test_workers_wanting_chromium_at_once_install_it_once_and_all_get_it(tmp_path: Path) -> None:
    apt_get = tmp_path / "apt-get"
    apt_get.write_text(FAKE_APT_GET.format(python=sys.executable))
    apt_get.chmod(0o755)
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    code = "from e2e.chromium import chromium; print(chromium())"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    answers = [w.communicate(timeout=60) for w in workers]
    assert [(w.returncode, out.strip(), err) for w, (out, err) in zip(workers, answers, strict=True)] == [
        (0, str(tmp_path / "chromium"), "")
    ] * 3
    installs = [line for line in (tmp_path / "calls").read_text().splitlines() if "install" in line]
    assert installs == ["-o DPkg::Lock::Timeout=900 install -y chromium"]
