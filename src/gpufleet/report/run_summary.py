"""The complete ``summary.json`` of a finished run, as ``gpufleet simulate`` writes it.

The driver's summary (``sim.summary.build_summary``) gives every recorded figure; the ``latency`` field
(pending-to-working percentiles, ``report.latency``) and the ``jobs`` field (wait per job size
class, ``report.job_waits``) are added from its pod records, and the
whole is checked against the schema. ``gpufleet compare`` and ``gpufleet sweep`` read their
scenario figures from this same dict, so they show what ``simulate`` would write.
"""

from __future__ import annotations

from typing import Any

from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import latency_figures
from gpufleet.report.schema import validate_summary


def finished_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary.json``'s content from a run's recorded summary, checked against the schema."""
    summary["latency"] = latency_figures(summary)
    summary["jobs"] = job_wait_figures(summary)
    validate_summary(summary)
    return summary
