"""The StatefulSet controller's fidelity cases (``e2e.fidelity.statefulset_cases``) run on both sides, as
``e2e.fidelity.stepped_run`` runs a stepped case.

- The real side: every case at once on the test control plane (``watches.side_by_side``), each in its
  namespace on its own kwok nodes. Before each step, and at the end, the case waits until its pods are where
  they go (``_settled``: as many as the StatefulSet wants, each Ready on a node, none being deleted; but
  before a step made while a pod is being deleted): ``spec.replicas`` patched (what an autoscaler's scale
  amounts to), or a pod deleted with its own grace period. A pod's creation is when the pod watch first
  told of it (``Watches.first_seen``), its end its ``DELETED`` event (``Watches.gone_at``).
- gpufleet's side: a scale through ``Simulation.scale``, a deletion through ``Simulation.evict`` (the pod's
  own grace period). A pod's creation is when the simulator recorded it, its end when it was gone
  (``e2e.fidelity.timeline.listen``), in the order they came, as the real side's pod watch tells of them.

Times are compared with ``e2e.fidelity.timeline.TOLERANCE_S``: the real side is late by kube-scheduler's
binding, kwok's Ready and the controller's sync after the pod update (each a few tens of milliseconds on an
idle machine, up to about a second on a loaded one), and a grace period ends up to a second early
(``deletionTimestamp`` is whole seconds, and kwok's ``pod-delete-after-grace`` waits until it). Over 8 runs of
the cases on two cores shared with other work (load average 6 to 7), a creation or an end was at most 0.65 s
late and a grace period at most 1.0 s short, the two sides' gaps at most 1.0 s apart. 2 s covers both, and is
under half the 5 s of ``minReadySeconds`` and the 6 s of the grace period the cases use, so that a wait that
upstream makes and gpufleet does not (or the reverse) disagrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from e2e.controlplane import ControlPlane
from e2e.fidelity import timeline as timelines
from e2e.fidelity.statefulset_cases import PARALLEL, StatefulSetCase, Step
from e2e.fidelity.stepped_run import make_steps, run_stepped_cases, simulation, steps_at
from e2e.fidelity.timeline import BY_POD, NAME, Entry, Timeline, TimelineResult, listen
from e2e.fidelity.watches import Watches, placed
from gpufleet.sim.simulation import Simulation


class StatefulSetResult(TimelineResult):
    """A case on both sides: each side's order, the gaps in it, the pods left and made."""


def timeline(case: StatefulSetCase, entries: list[Entry], left: list[str]) -> Timeline:
    """A side's ``Timeline`` (``e2e.fidelity.timeline``): under ``Parallel`` a burst put in ``_canonical``
    order by pod (see ``e2e.fidelity.statefulset_cases``)."""
    return timelines.timeline(entries, left, BY_POD if case.policy == PARALLEL else None)


def _settled(watches: Watches, namespace: str, replicas: int) -> bool:
    pods = watches.live_pods(namespace)
    standing = watches.standing_pods(namespace)
    return len(pods) == len(standing) == replicas and all(placed(p) for p in pods)


def _make_real(cp: ControlPlane, case: StatefulSetCase, step: Step) -> None:
    from lightkube.resources.apps_v1 import StatefulSet
    from lightkube.resources.core_v1 import Pod as KubePod
    from lightkube.types import PatchType

    client = cp.client()
    if step.replicas is not None:
        body = {"spec": {"replicas": step.replicas}}
        client.patch(StatefulSet, NAME, body, namespace=case.namespace, patch_type=PatchType.MERGE)
    else:
        client.delete(KubePod, step.delete, namespace=case.namespace)


def run_real(cp: ControlPlane, case: StatefulSetCase, watches: Watches) -> tuple[Timeline, tuple[float, ...]]:
    """The case's StatefulSet created on the control plane, its steps made, until its pods are settled: its
    timeline, and when each step was made (s after the StatefulSet's creation)."""
    make = partial(_make_real, cp, case)
    created, made = make_steps(cp, watches, case, _settled, make, lambda step: step.settled)
    with watches.changed:
        entries: list[Entry] = [(at - created, f"step {n}") for n, at in enumerate(made, 1)]
        for uid in watches.uids["pods"][case.namespace]:
            name = watches.names[uid]
            entries.append((watches.first_seen[uid] - created, f"+{name}"))
            if uid in watches.gone_at:
                entries.append((watches.gone_at[uid] - created, f"-{name}"))
        left = [str(p["metadata"]["name"]) for p in watches.standing_pods(case.namespace)]
    return timeline(case, entries, left), tuple(at - created for at in made)


def _make_simulated(case: StatefulSetCase, sim: Simulation, step: Step) -> None:
    """A step reaching gpufleet (see the module's docstring)."""
    if step.replicas is not None:
        sim.scale(case.key, step.replicas)
    else:
        sim.evict(f"{case.namespace}/{step.delete}", "Deleted")


def run_gpufleet(
    case: StatefulSetCase, stepped_s: Sequence[float] | None = None
) -> tuple[Timeline, list[str]]:
    """The case simulated by gpufleet, its steps made at ``stepped_s`` (the real side's times; None: the
    case's ``at_s``): its timeline, and gpufleet's warnings on the scenario."""
    at = steps_at(case.steps, stepped_s)
    sim = simulation(case, at, partial(_make_simulated, case))
    entries: list[Entry] = [(at_s, f"step {n}") for n, at_s in enumerate(at, 1)]
    listen(sim, case.namespace, entries, lambda pod: pod.name)
    sim.run()
    left = [
        rec.pod.name
        for rec in sim.records.values()
        if rec.pod.namespace == case.namespace
        and rec.deleted_s is None
        and rec.phase in ("Pending", "Running")
    ]
    return timeline(case, entries, left), list(sim.scenario.warnings)


def run_statefulset_cases(cp: ControlPlane, cases: tuple[StatefulSetCase, ...]) -> list[StatefulSetResult]:
    """Every case on the real side at once, then simulated by gpufleet (``stepped_run.run_stepped_cases``)."""
    return run_stepped_cases(cp, NAME, cases, run_real, run_gpufleet, StatefulSetResult)
