"""gpufleet's side of a fidelity case, two ways.

- ``decisions``: each pod decided by gpufleet's scheduler on the cluster exactly as the real pod found
  it (the pods bound before it, on their nodes, with their start times; each PodDisruptionBudget's
  ``disruptionsAllowed``), with every tie kept: the equally best nodes, or the message and each
  equally ranked preemption candidate. This isolates the scheduler's decision from everything
  around it.
- ``simulate``: the flat scenario run by gpufleet's simulator, its pods created one at a time
  (``SPACING_S`` apart), each tie broken the way the real kube-scheduler broke it (where its choice
  is among gpufleet's tied nodes), so that the two runs stay comparable pod after pod. Its end state
  is compared with the real cluster's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from e2e.fidelity.case import Flat
from e2e.fidelity.real import Bound, RealRun
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod
from gpufleet.model.scenario import Scenario
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import no_scheduler
from gpufleet.scheduling.processes import scheduler_processes
from gpufleet.scheduling.scheduler import Decision, Scheduler
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: virtual seconds between two pods of a simulated case: more than a preemptor's 1 s backoff, and
#: the whole case well inside the 5 minutes after which unschedulable pods are retried anyway
SPACING_S = 5.0


@dataclass
class RecordedBudgets:
    """The real cluster's PodDisruptionBudget status at one step (a ``DisruptionView``)."""

    budgets: list[DisruptionBudget]
    allowed: dict[str, int] = field(default_factory=dict)

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return [(b, self.allowed.get(f"{b.namespace}/{b.name}", 0)) for b in self.budgets]


def _sync(state: ClusterState, pods: dict[str, Pod], bound: dict[str, Bound]) -> None:
    """Make gpufleet's cluster the real one: its bound pods, where they are, started when they
    started. A pod's ResourceClaims are allocated on its node by gpufleet's allocator (the same
    node's devices; which of them may differ from the real allocation)."""
    for key in [
        k
        for k in state.assignments
        if k not in bound or state.nodes[state.assignments[k].node].name != bound[k].node
    ]:
        if state.dra is not None:
            state.dra.release(state.assignments[key].pod)
        state.unassign(key)
    for key, b in bound.items():
        if key not in state.assignments and key in pods:
            state.assign(pods[key], b.node, b.start_s)
            if state.dra is not None and pods[key].resource_claims:
                state.dra.place(pods[key], b.node)


def pods_of(scenario: Scenario) -> dict[str, Pod]:
    return {b.pod.key: b.pod for b in scenario.pods}


def decisions(flat: Flat, real: RealRun) -> dict[str, Decision | str]:
    """Per pod, gpufleet's decision on the state the real pod found (a string where no scheduler of
    gpufleet's serves the pod, or where the pod was written with ``spec.nodeName``)."""
    scenario = flat.scenario()
    pods = pods_of(scenario)
    state = ClusterState(list(scenario.nodes))
    dra = scenario.dra
    if dra.slices or dra.classes or dra.claims or dra.templates:
        state.dra = DraState(replace(dra, slices=list(dra.slices)))
    budgets = RecordedBudgets(list(scenario.budgets))
    state.disruptions = budgets
    gangs = GangView(state, scenario.pod_groups)
    for pod in pods.values():
        gangs.add_pod(pod)
    schedulers = [Scheduler(c, state, gangs) for c in scheduler_processes(scenario.schedulers)]
    out: dict[str, Decision | str] = {}
    for step in real.steps:
        _sync(state, pods, step.before)
        budgets.allowed = step.budgets
        pod = pods[step.pod]
        if pod.node_name is not None:
            out[step.pod] = Decision(nodes=(pod.node_name,))
            continue
        owner = next((s for s in schedulers if s.serves(pod.scheduler_name)), None)
        out[step.pod] = owner.decide(pod) if owner is not None else no_scheduler(pod.scheduler_name)
    return out


@dataclass(frozen=True)
class SimulatedPod:
    node: str | None
    message: str | None


def simulate(flat: Flat, real: RealRun) -> tuple[dict[str, SimulatedPod], dict[str, tuple[str, ...]]]:
    """The simulator's end state per pod, and the ties it met (pod -> the equally good nodes)."""
    upstream = {s.pod: s.node or s.nominated for s in real.steps}
    ties: dict[str, tuple[str, ...]] = {}

    def follow_upstream(pod: Pod, names: list[str]) -> int:
        ties.setdefault(pod.key, tuple(names))
        want = upstream.get(pod.key)
        return names.index(want) if want in names else 0

    documents = flat.documents(SPACING_S)
    duration = SPACING_S * (len(flat.pods) + 2)
    documents.append(
        {
            "apiVersion": "gpufleet.io/v1alpha1",
            "kind": "Simulation",
            "metadata": {"name": "fidelity"},
            "spec": {"duration": f"{duration:g}s"},
        }
    )
    from e2e.fidelity.case import load_documents

    sim = Simulation(load_documents(documents), tie_break=follow_upstream)
    sim.run()
    out = {}
    for record in build_summary(sim)["pods"]:
        if record.get("deleted_s") is not None:
            continue
        node = record.get("node")
        out[record["name"]] = SimulatedPod(node, None if node else record.get("message"))
    return out, ties
