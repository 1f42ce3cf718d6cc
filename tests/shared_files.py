"""The tests' markers for the shared files (public cluster traces and upstream projects' manifests), which
the repository does not copy; ``bench.shared_files`` says where they are looked for. Tests that read them
skip, saying so, where they are not there."""

from __future__ import annotations

import pytest
from bench.shared_files import TRACES, UPSTREAM

__all__ = ["TRACES", "UPSTREAM", "needs_traces", "needs_upstream"]

needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason=f"no traces at {TRACES}")
needs_upstream = pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"no upstream manifests at {UPSTREAM}")
