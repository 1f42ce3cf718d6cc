"""The complete ``summary.json`` of a finished simulation, as ``gpufleet simulate`` writes it.

``sim.summary.build_summary`` gives every recorded figure; the ``latency`` field
(pending-to-working percentiles, ``report.latency``) and the ``jobs`` field (wait per job size
class and GPU utilisation, ``report.job_waits``) are added from its pod records, and the
whole is checked against the schema. ``gpufleet compare`` and ``gpufleet sweep`` read their
scenario figures from this same dict, so they show what ``simulate`` would write.
"""

from __future__ import annotations

from typing import Any

from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import latency_figures
from gpufleet.report.schema import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary


def simulation_summary(sim: Simulation) -> dict[str, Any]:
    """``summary.json``'s content for a simulation that has run, checked against the schema."""
    summary = build_summary(sim)
    summary["latency"] = latency_figures(summary)
    summary["jobs"] = job_wait_figures(summary)
    validate_summary(summary)
    return summary
