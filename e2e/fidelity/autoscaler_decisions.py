"""What cluster-autoscaler decided in one case, on either side, and whether the two agree.

``Decisions`` holds the scale-ups in order (group, nodes added), each pod's first
``NotTriggerScaleUp`` message and the existing nodes removed by scale-down. ``gpufleet_decisions``
simulates the case's scenario (the ``cluster_autoscaler`` loop over gpufleet's ``scale_up`` and
``scale_down``) and reads them from the summary's ``autoscaler_events``; the real side
(``autoscaler_real``) reads them from the cluster and cluster-autoscaler's log.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from e2e.fidelity.autoscaler_cases import AutoscalerCase
from gpufleet.kube.load import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: how much of the simulated run is compared: the real side watches cluster-autoscaler about as long
WINDOW_S = 8.0


@dataclass
class Decisions:
    scale_ups: list[tuple[str, int]] = field(default_factory=list)
    not_triggered: dict[str, str] = field(default_factory=dict)  # pod name -> its first message
    removed: list[str] = field(default_factory=list)  # existing nodes scale-down removed

    def compared(self, kind: str) -> object:
        """What ``agree`` compares: the first scale-up, each pod's reasons, the nodes removed."""
        return (
            [[group, nodes] for group, nodes in self.scale_ups[:1]] if kind == "scale-up" else self.of(kind)
        )

    def of(self, kind: str) -> object:
        """The decision as the report shows it (every scale-up, in order)."""
        if kind == "scale-up":
            return [[group, nodes] for group, nodes in self.scale_ups]
        if kind == "no-scale-up":
            return {pod: _reasons(message) for pod, message in sorted(self.not_triggered.items())}
        return sorted(self.removed)


def _reasons(message: str) -> str:
    """A ``NotTriggerScaleUp`` message with its counted reasons in sorted order: cluster-autoscaler
    joins them in Go map order (``ReasonsMessage``), which is random."""
    prefix, _, reasons = message.partition(": ")
    return f"{prefix}: {', '.join(sorted(reasons.split(', ')))}"


def gpufleet_decisions(case: AutoscalerCase) -> Decisions:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_text(yaml.safe_dump_all(case.scenario(), sort_keys=False))
        sim = Simulation(load_scenario([path]))
    sim.run()
    out = Decisions()
    for event in build_summary(sim)["autoscaler_events"]:
        if event["t_s"] > WINDOW_S:
            continue
        if event["kind"] == "scale-up":
            out.scale_ups.append((event["pool"], len(event["nodes"])))
        elif event["kind"] == "no-scale-up":
            for key in event["pods"]:
                out.not_triggered.setdefault(key.split("/", 1)[1], event["reason"])
        elif event["kind"] == "scale-down":
            out.removed += event["nodes"]
    return out


def agree(case: AutoscalerCase, real: Decisions, gpufleet: Decisions) -> str:
    """Empty when both sides decided the same; else what differs.

    Of the scale-ups only the first is compared: it is decided on the state the case sets up, the
    same on both sides. The later ones serve the pods that kube-scheduler could not place on the new
    nodes, which depends on where it put the others and on when each node turned Ready (the
    estimate packs pods First-Fit Decreasing, the scheduler spreads them); they are reported."""
    a, b = real.compared(case.kind), gpufleet.compared(case.kind)
    return "" if a == b else f"{case.kind}: cluster-autoscaler {a}, gpufleet {b}"
