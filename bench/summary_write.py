"""Writing ``summary.json``, on the summary of ``bench.day``'s simulated day (issue 18), back to back, CPU
seconds: checking it against its schema, jsonschema's walk of the document as every write paid for it
before against the schema compiled once into a predicate (``gpufleet.report.summary_conformance``); and
its text, ``json.dumps`` with an indent as before against ``report.json_text`` (the same bytes).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from bench.day import scenario
from gpufleet.report.json_text import json_text
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
    dumps_cpu_s: float  # its text by json.dumps(indent=1, sort_keys=True), as before
    text_cpu_s: float  # the same text by json_text

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
    assert json_text(summary, 1, sort_keys=True) == json.dumps(summary, indent=1, sort_keys=True)
    return SummaryWrite(
        len(summary["pods"]),
        _cpu(walk),
        _cpu(lambda: validate_summary(summary)),
        _cpu(lambda: json.dumps(summary, indent=1, sort_keys=True)),
        _cpu(lambda: json_text(summary, 1, sort_keys=True)),
    )


def describe_summary_write(r: SummaryWrite) -> str:
    return (
        f"check summary.json against its schema ({r.pods:,} pods): jsonschema "
        f"{r.jsonschema_cpu_s:.3f} s CPU, compiled once {r.compiled_cpu_s:.3f} s CPU = {r.ratio:.1f}x less; "
        f"its text: json.dumps {r.dumps_cpu_s:.3f} s CPU, json_text {r.text_cpu_s:.3f} s CPU "
        f"= {r.text_cpu_s / r.dumps_cpu_s:.2f}x"
    )
