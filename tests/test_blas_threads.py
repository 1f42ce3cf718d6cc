"""The command line runs NumPy with one OpenBLAS thread (``gpufleet.blas_threads``): no spinning
thread per core at start-up; a value the user set is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CODE = (
    "import os, gpufleet.cli, numpy; "
    "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])"
)


def started(env: dict[str, str]) -> list[str]:
    run = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, env=env)
    return run.stdout.split()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_cli_loads_numpy_with_one_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert started(env) == ["1", "1"]


def test_a_thread_count_the_user_set_is_kept() -> None:
    assert started({**os.environ, "OPENBLAS_NUM_THREADS": "2"})[1] == "2"
