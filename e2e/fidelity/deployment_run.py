"""The Deployment controller's rollout fidelity cases (``e2e.fidelity.deployment_cases``) run on both sides,
as ``e2e.fidelity.stepped_run`` runs a stepped case.

- The real side: every case at once on the test control plane (``watches.side_by_side``), each in its
  namespace on its own kwok nodes. Before each step, and at the end, the case waits until its pods are where
  they go (``_settled``: none being deleted, each Ready on a node or left unschedulable, and of the versions
  wanted: before a step, every pod of the version the step before left; at the end, the case's expected pods),
  but before a step made mid-rollout only until a pod of the step before is Ready (the controllers have taken
  that step: under load they took up to 2.5 s); a step patches the Deployment's pod template
  (``deployment_cases.template_patch``, a strategic merge patch). A pod's creation is when the pod watch first
  told of it, its end its ``DELETED`` event; its version its ``version`` label.
- gpufleet's side: each step a gpufleet ``Rollout`` of the same patch, at the time the real side made it. A
  pod's creation and end as ``e2e.fidelity.timeline.listen`` notes them.

Times are compared within ``e2e.fidelity.timeline.TOLERANCE_S``, as the StatefulSet set's are (its module's
docstring says what the real side's latency is): 2 s, under half the 5 s of ``minReadySeconds`` and the 6 s of
the grace period the cases use, so that a wait one side makes and the other does not disagrees. Under a
load average of 11 on two cores, the real side's watches told of a pod up to 1.4 s after the step that
made it: with ``minReadySeconds`` 3 a wave's entries came within ``BURST_S`` of the next's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from e2e.controlplane import ControlPlane
from e2e.fidelity import timeline as timelines
from e2e.fidelity.deployment_cases import FIRST, RECREATE, VERSION, DeploymentCase, Step, template_patch
from e2e.fidelity.stepped_run import make_steps, run_stepped_cases, simulation, steps_at
from e2e.fidelity.timeline import BURST_S, BY_ENTRY, NAME, Entry, Timeline, TimelineResult, listen
from e2e.fidelity.watches import Watches, placed
from gpufleet.sim.simulation import Simulation


class DeploymentResult(TimelineResult):
    """A case on both sides: each side's order, the gaps in it, the pods left and made."""


def timeline(case: DeploymentCase, entries: list[Entry], left: list[str]) -> Timeline:
    """A side's ``Timeline`` of the rollout: its entries from the first step on (the pods made before it
    are the case's start, ``replicas`` of v1, which the real side waits for: their creation times the
    control plane's latency alone); a rolling update's bursts as multisets (``BY_ENTRY``), all its entries
    between two steps one burst where no ``minReadySeconds`` spaces them (nothing but the controllers'
    latency does); a ``Recreate``'s entries in their order (``rolloutRecreate`` makes no new pod while an old
    one is not gone)."""
    start = min(at for at, what in entries if what == "step 1")
    rollout = [(at, what) for at, what in entries if at >= start]
    if case.strategy == RECREATE:
        return timelines.timeline(rollout, left, None)
    return timelines.timeline(rollout, left, BY_ENTRY, BURST_S if case.min_ready_s else math.inf)


def left_label(version: str, node: str | None) -> str:
    """A pod left as the outcome writes it: its version, ``pending`` after it where it is on no node."""
    return version if node else f"{version} pending"


def _version(pod: dict[str, Any]) -> str:
    return str(pod["metadata"].get("labels", {}).get(VERSION, "?"))


def _left(watches: Watches, namespace: str) -> list[str]:
    return [left_label(_version(p), p["spec"].get("nodeName")) for p in watches.standing_pods(namespace)]


def _settled(case: DeploymentCase, made: list[Step], watches: Watches, namespace: str, replicas: int) -> bool:
    """Before a step made mid-rollout (``settled`` False), a pod of the version the last step ``made`` left
    Ready (the rollout under way); else none of the case's pods being deleted, each placed, and of the
    versions wanted: every one of the version the last step left, ``replicas`` of them, before a step; the
    case's expected pods at the end."""
    if len(made) < len(case.steps) and not case.steps[len(made)].settled:
        version = made[-1].version if made else FIRST
        return any(
            _version(p) == version and p["spec"].get("nodeName") and placed(p)
            for p in watches.standing_pods(namespace)
        )
    pods = watches.live_pods(namespace)
    if len(pods) != len(watches.standing_pods(namespace)) or not all(placed(p) for p in pods):
        return False
    if len(made) == len(case.steps):
        return tuple(sorted(_left(watches, namespace))) == case.expected.left
    version = made[-1].version if made else FIRST
    return sorted(_left(watches, namespace)) == [version] * replicas


def _make_real(cp: ControlPlane, case: DeploymentCase, made: list[Step], step: Step) -> None:
    from lightkube.resources.apps_v1 import Deployment
    from lightkube.types import PatchType

    body = {"spec": {"template": template_patch(step.version)}}
    cp.client().patch(Deployment, NAME, body, namespace=case.namespace, patch_type=PatchType.STRATEGIC)
    made.append(step)


def run_real(cp: ControlPlane, case: DeploymentCase, watches: Watches) -> tuple[Timeline, tuple[float, ...]]:
    """The case's Deployment created on the control plane, its steps made, until its pods are settled: its
    timeline, and when each step was made (s after the Deployment's creation)."""
    steps: list[Step] = []
    settled = partial(_settled, case, steps)
    make = partial(_make_real, cp, case, steps)
    created, made = make_steps(cp, watches, case, settled, make)
    with watches.changed:
        entries: list[Entry] = [(at - created, f"step {n}") for n, at in enumerate(made, 1)]
        for uid in watches.uids["pods"][case.namespace]:
            pod = watches.get("pods", case.namespace, watches.names[uid]) or {"metadata": {}}
            entries.append((watches.first_seen[uid] - created, f"+{_version(pod)}"))
            if uid in watches.gone_at:
                entries.append((watches.gone_at[uid] - created, f"-{_version(pod)}"))
        left = _left(watches, case.namespace)
    return timeline(case, entries, left), tuple(at - created for at in made)


def _no_step(sim: Simulation, step: Step) -> None:
    """A step reaches gpufleet as a ``Rollout`` of its scenario (``DeploymentCase.rollouts``), not a call."""


def simulated(
    case: DeploymentCase, stepped_s: Sequence[float] | None = None
) -> tuple[Simulation, list[Entry]]:
    """The case's simulation, run, its steps made at ``stepped_s`` (the real side's times; None: the case's
    ``at_s``), and the entries it noted."""
    at = steps_at(case.steps, stepped_s)
    sim = simulation(case, at, _no_step, case.rollouts(at))
    entries: list[Entry] = [(at_s, f"step {n}") for n, at_s in enumerate(at, 1)]
    listen(sim, case.namespace, entries, lambda pod: pod.labels.get(VERSION, "?"))
    sim.run()
    return sim, entries


def run_gpufleet(
    case: DeploymentCase, stepped_s: Sequence[float] | None = None
) -> tuple[Timeline, list[str]]:
    """The case simulated by gpufleet (``simulated``): its timeline, and gpufleet's warnings on the
    scenario."""
    sim, entries = simulated(case, stepped_s)
    left = [
        left_label(rec.pod.labels.get(VERSION, "?"), rec.node)
        for rec in sim.records.values()
        if rec.pod.namespace == case.namespace
        and rec.deleted_s is None
        and rec.phase in ("Pending", "Running")
    ]
    return timeline(case, entries, left), list(sim.scenario.warnings)


def run_deployment_cases(cp: ControlPlane, cases: tuple[DeploymentCase, ...]) -> list[DeploymentResult]:
    """Every case on the real side at once, then simulated by gpufleet (``stepped_run.run_stepped_cases``)."""
    return run_stepped_cases(cp, NAME, cases, run_real, run_gpufleet, DeploymentResult)
