"""Checking ``summary.json`` against its schema, on the summary of ``bench.day``'s simulated day
(issue 18): jsonschema's walk of the document, as every write paid for it before, against the schema
compiled once into a predicate (``gpufleet.report.summary_conformance``), back to back, CPU seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from bench.day import scenario
from gpufleet.report.run_summary import finished_summary
from gpufleet.report.schema import load_summary_schema, schema_errors, validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: times each way is measured; the least counts (the cores are shared)
REPEATS = 3


@dataclass(frozen=True)
class SummaryWrite:
    pods: int
    jsonschema_cpu_s: float  # check the schema, then walk the summary with jsonschema (as before)
    compiled_cpu_s: float  # validate_summary: the compiled predicate (compiled before the timing)

    @property
    def ratio(self) -> float:
        return self.jsonschema_cpu_s / self.compiled_cpu_s


def _cpu(action: Any) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def day_summary(
    nodes_static: int = 150, pool_max: int = 350, jobs: int = 5000, hours: float = 24.0
) -> dict[str, Any]:
    """``summary.json``'s content for ``bench.day``'s day, as ``gpufleet simulate`` writes it."""
    sim = Simulation(scenario(nodes_static, pool_max, jobs, hours))
    sim.run()
    return finished_summary(build_summary(sim))


def measure(summary: dict[str, Any]) -> SummaryWrite:
    schema = load_summary_schema()

    def walk() -> None:  # what each process paid before: check the schema once, walk every summary
        Draft202012Validator.check_schema(schema)
        assert not schema_errors(summary)

    validate_summary(summary)  # compiles the schema once for the process, as the first write does
    return SummaryWrite(len(summary["pods"]), _cpu(walk), _cpu(lambda: validate_summary(summary)))


def describe_summary_write(r: SummaryWrite) -> str:
    return (
        f"check summary.json against its schema ({r.pods:,} pods): jsonschema "
        f"{r.jsonschema_cpu_s:.3f} s CPU, compiled once {r.compiled_cpu_s:.3f} s CPU = {r.ratio:.1f}x less"
    )
