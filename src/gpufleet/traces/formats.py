"""The trace formats gpufleet reads, by name."""

from __future__ import annotations

from gpufleet.traces import openb
from gpufleet.traces.base import TraceFormat

FORMATS: dict[str, TraceFormat] = {f.name: f for f in (openb.FORMAT,)}
