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
  (``_listen``), in the order they came, as the real side's pod watch tells of them.

Times are compared with ``TOLERANCE_S``: the real side is late by kube-scheduler's binding, kwok's Ready and
the controller's sync after the pod update (each a few tens of milliseconds on an idle machine, up to about
a second on a loaded one), and a grace period ends up to a second early (``deletionTimestamp`` is whole
seconds, and kwok's ``pod-delete-after-grace`` waits until it). Over 8 runs of the cases on two cores
shared with other work (load average 6 to 7), a creation or an end was at most 0.65 s late and a grace
period at most 1.0 s short, the two sides' gaps at most 1.0 s apart. 2 s covers both, and is under half
the 5 s of ``minReadySeconds`` and the 6 s of the grace period the cases use, so that a wait that upstream
makes and gpufleet does not (or the reverse) disagrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from e2e.controlplane import ControlPlane
from e2e.fidelity.statefulset_cases import NAME, PARALLEL, Outcome, StatefulSetCase, Step
from e2e.fidelity.stepped_run import SteppedResult, make_steps, run_stepped_cases, simulation, steps_at
from e2e.fidelity.watches import Watches, placed
from gpufleet.model.pod import Pod
from gpufleet.sim.records import PodRecord
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.status_watch import StatusWatch

#: how far the two sides' gaps may be apart (see the module's docstring)
TOLERANCE_S = 2.0
#: how close a ``Parallel`` set's pod entries are to be one burst (``timeline``): the real side's take a
#: few tens of milliseconds each (up to a few hundred on a loaded machine), and pods deleted together with a
#: grace period end up to a second apart more (``deletionTimestamp`` is whole seconds: 1.03 s seen); the
#: cases keep what is to be ordered at least 5 s apart
BURST_S = 2.0

#: (when, what): a step (``step <n>``), a pod created (``+<pod>``) or gone (``-<pod>``)
Entry = tuple[float, str]


@dataclass(frozen=True)
class Timeline:
    """A side's outcome, and for each pod's creation or end the time since the entry before it."""

    outcome: Outcome
    gaps_s: tuple[float, ...]


class StatefulSetResult(SteppedResult[Timeline]):
    """A case on both sides: each side's order, the gaps in it, the pods left and made."""

    @property
    def order_agrees(self) -> bool:
        return self.real is not None and self.real.outcome == self.gpufleet.outcome

    @property
    def gaps_agree(self) -> bool:
        return self.real is not None and gaps_agree(self.real.gaps_s, self.gpufleet.gaps_s)

    @property
    def agrees(self) -> bool:
        return not self.error and self.order_agrees and self.gaps_agree


def gaps_agree(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= TOLERANCE_S for x, y in zip(a, b, strict=True))


def _canonical(burst: list[str]) -> list[str]:
    """A burst's entries in an order of no side's timing: each pod's first entry in the burst (sorted), then
    each pod's second (a pod gone, then made again under its name), and so on."""
    seen: dict[str, int] = {}
    keyed = []
    for what in burst:
        nth = seen[what[1:]] = seen.get(what[1:], -1) + 1
        keyed.append((nth, what))
    return [what for _, what in sorted(keyed)]


def timeline(case: StatefulSetCase, entries: list[Entry], left: list[str]) -> Timeline:
    """A side's ``Timeline`` from its entries (times since the StatefulSet's creation; those at one time in
    the order they came) and the pods it left: under ``Parallel`` a burst (pod entries each at most
    ``BURST_S`` after the one before) put in ``_canonical`` order (see ``e2e.fidelity.statefulset_cases``)."""
    entries = sorted(entries, key=lambda entry: entry[0])
    gaps, before = [], 0.0
    for at, what in entries:
        if not what.startswith("step"):
            gaps.append(at - before)
        before = at
    bursts: list[list[Entry]] = []
    for at, what in entries:
        burst = bursts[-1] if bursts else None
        if (
            burst
            and case.policy == PARALLEL
            and "step" not in (what[:4], burst[-1][1][:4])
            and at - burst[-1][0] <= BURST_S
        ):
            burst.append((at, what))
        else:
            bursts.append([(at, what)])
    order = tuple(what for burst in bursts for what in _canonical([w for _, w in burst]))
    made = sum(what.startswith("+") for what in order)
    return Timeline(Outcome(tuple(sorted(left)), order, made), tuple(gaps))


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


def _listen(sim: Simulation, namespace: str, entries: list[Entry]) -> None:
    """Have ``entries`` note each pod of ``namespace`` created (``PodLifecycle.record``) and each gone
    (``Simulation.owner_finished`` with the pod deleted: bound or not), at the simulator's time, in the
    order they come."""
    record, owner_finished = sim.lifecycle.record, sim.owner_finished

    def recorded(pod: Pod, scheduler: str, watch: StatusWatch | None = None) -> PodRecord:
        if pod.namespace == namespace:
            entries.append((sim.loop.now, f"+{pod.name}"))
        return record(pod, scheduler, watch)

    def finished(pod: Pod, succeeded: bool) -> None:
        if pod.namespace == namespace and sim.records[pod.key].deleted_s is not None:
            entries.append((sim.loop.now, f"-{pod.name}"))
        owner_finished(pod, succeeded)

    setattr(sim.lifecycle, "record", recorded)  # noqa: B010 (replaced on this instance alone)
    setattr(sim, "owner_finished", finished)  # noqa: B010


def run_gpufleet(
    case: StatefulSetCase, stepped_s: Sequence[float] | None = None
) -> tuple[Timeline, list[str]]:
    """The case simulated by gpufleet, its steps made at ``stepped_s`` (the real side's times; None: the
    case's ``at_s``): its timeline, and gpufleet's warnings on the scenario."""
    at = steps_at(case.steps, stepped_s)
    sim = simulation(case, at, partial(_make_simulated, case))
    entries: list[Entry] = [(at_s, f"step {n}") for n, at_s in enumerate(at, 1)]
    _listen(sim, case.namespace, entries)
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
