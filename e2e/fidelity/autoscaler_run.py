"""Run the cluster-autoscaler cases on both sides and compare their decisions.

One decision is compared per case: the sequence of scale-ups, each pod's ``NotTriggerScaleUp``
message, or the set of nodes scale-down removed (``autoscaler_cases``). Without a
cluster-autoscaler binary (``e2e.components.cluster_autoscaler``) nothing runs, and the report says
why.
"""

from __future__ import annotations

import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from e2e.controlplane import ControlPlane
from e2e.fidelity.autoscaler_cases import AutoscalerCase
from e2e.fidelity.autoscaler_decisions import agree, gpufleet_decisions
from e2e.fidelity.autoscaler_real import clean, real_decisions


@dataclass
class AutoscalerResult:
    name: str
    origin: str
    kind: str
    note: str
    real: object = None
    gpufleet: object = None
    why: str = ""  # what differs; empty when both decided alike
    error: str = ""
    real_s: float = 0.0

    @property
    def agrees(self) -> bool:
        return not self.error and not self.why


def run_autoscaler_cases(
    cp: ControlPlane,
    binary: Path,
    cases: list[AutoscalerCase],
    progress: Callable[[int, AutoscalerResult], None] = lambda n, r: None,
) -> tuple[list[AutoscalerResult], float]:
    started = time.monotonic()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(cases, 1):
            result = AutoscalerResult(case.name, case.origin, case.kind, case.note)
            began = time.monotonic()
            try:
                real = real_decisions(cp, binary, case, Path(tmp))
                ours = gpufleet_decisions(case)
                result.real, result.gpufleet = real.of(case.kind), ours.of(case.kind)
                result.why = agree(case, real, ours)
            except Exception:  # a case that cannot run is reported, the others go on
                result.error = traceback.format_exc(limit=3)
            result.real_s = time.monotonic() - began
            out.append(result)
            progress(n, result)
    cp.stop_cluster_autoscaler()
    clean(cp)
    return out, time.monotonic() - started
