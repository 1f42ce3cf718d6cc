"""The ReplicaSet controller's fidelity cases (``e2e.fidelity.replicaset_cases``) run on both sides.

- The real side: every case at once on the test control plane, each in its namespace on its own kwok nodes.
  Before each step, and at the end, the case waits until its pods are where they go (``_settled``: as many
  as the workload wants, each Ready on a node or left unschedulable by kube-scheduler); a step is made
  ``at_s`` after the workload's creation or then, whichever is later. What the case reads comes from
  watches (``e2e.fidelity.watches``): a pod's step is the number of steps made before the watches first told
  of it.
- gpufleet's side: the case's nodes and workload simulated for a while past the last step, each step made on
  the simulator's clock when the real side made it (``at_s`` where there is no real side): a scale through
  ``Simulation.scale`` (what an autoscaler calls), an annotation written on the pod's record (the pod the
  ReplicaSet controller reads when it next ranks pods), a deletion through ``Simulation.evict`` (the pod
  deleted, its controller told).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from e2e.controlplane import ControlPlane
from e2e.fidelity.case import load_documents
from e2e.fidelity.replicaset_cases import NAME, POD_DELETION_COST, Outcome, ReplicaSetCase, Step
from e2e.fidelity.watches import CASE_TIMEOUT_S, RunError, Watches, placed, side_by_side
from gpufleet.control.clock import Priority
from gpufleet.sim.simulation import Simulation

COLLECTIONS = {"pods": "/api/v1/pods?labelSelector=app%3D" + NAME, "nodes": "/api/v1/nodes"}
#: how long gpufleet's run goes on after the last step
AFTER_S = 30.0
#: how long the real side waits, once settled after its last step, for anything more the controllers do
QUIET_S = 1.5


@dataclass
class ReplicaSetResult:
    name: str
    gpufleet: Outcome
    warnings: list[str]
    real: Outcome | None = None
    stepped_s: tuple[float, ...] = ()  # when the real side made each step, s after the workload's creation
    error: str = ""
    real_s: float = 0.0

    @property
    def agrees(self) -> bool:
        return not self.error and self.real == self.gpufleet


def _settled(watches: Watches, namespace: str, replicas: int) -> bool:
    pods = watches.standing_pods(namespace)
    return len(pods) == replicas and all(placed(p) for p in pods)


def _pod_on(watches: Watches, case: ReplicaSetCase, letter: str) -> str:
    node = case.node_name(letter)
    pods = watches.standing_pods(case.namespace)
    names = [str(p["metadata"]["name"]) for p in pods if p["spec"].get("nodeName") == node]
    if len(names) != 1:
        raise RunError(f"{case.namespace}: {len(names)} pods on {node}, where the case means one")
    return names[0]


def _make_real(cp: ControlPlane, watches: Watches, case: ReplicaSetCase, step: Step) -> None:
    from lightkube.resources.apps_v1 import Deployment, ReplicaSet
    from lightkube.resources.core_v1 import Pod
    from lightkube.types import PatchType

    client, ns = cp.client(), case.namespace
    if step.replicas is not None:
        kind = Deployment if case.kind == "Deployment" else ReplicaSet
        body = {"spec": {"replicas": step.replicas}}
        client.patch(kind, NAME, body, namespace=ns, patch_type=PatchType.MERGE)
    elif step.annotate:
        annotated = {"metadata": {"annotations": {POD_DELETION_COST: str(step.cost)}}}
        pod = _pod_on(watches, case, step.annotate)
        client.patch(Pod, pod, annotated, namespace=ns, patch_type=PatchType.MERGE)
    else:
        client.delete(Pod, _pod_on(watches, case, step.delete), namespace=ns, grace_period=0)


def _left(case: ReplicaSetCase, node: str | None, created: float, steps: Sequence[float]) -> tuple[str, int]:
    """A pod left as the outcome writes it: its node's letter (empty: pending) and the steps made before
    its creation (``created`` and ``steps`` on one clock)."""
    letter = next((x for x in case.letters() if case.node_name(x) == node), "")
    return letter, sum(1 for at in steps if at <= created)


def run_real(
    cp: ControlPlane, watches: Watches, *, case: ReplicaSetCase
) -> tuple[Outcome, tuple[float, ...]]:
    """The case's workload created on the control plane, its steps made, until its pods are settled: its
    outcome, and when each step was made (s after the workload's creation)."""
    from lightkube import ApiError, codecs

    deadline = time.monotonic() + CASE_TIMEOUT_S
    ns, replicas = case.namespace, case.replicas
    made: list[float] = []  # time.monotonic() of each step
    try:
        cp.client().create(codecs.from_dict(case.workload()))
        created = time.monotonic()
        for step in case.steps:
            watches.wait(f"{ns}: settled before {step}", partial(_settled, watches, ns, replicas), deadline)
            time.sleep(max(0.0, created + step.at_s - time.monotonic()))
            with watches.changed:
                made.append(time.monotonic())
                _make_real(cp, watches, case, step)
            replicas = replicas if step.replicas is None else step.replicas
    except ApiError as exc:
        raise RunError(f"{ns}: {exc}") from None
    watches.wait(f"{ns}: settled at the end", partial(_settled, watches, ns, replicas), deadline)
    time.sleep(QUIET_S)
    watches.wait(f"{ns}: settled at the end", partial(_settled, watches, ns, replicas), deadline)
    with watches.changed:
        left = tuple(
            sorted(
                _left(case, p["spec"].get("nodeName"), watches.first_seen[p["metadata"]["uid"]], made)
                for p in watches.standing_pods(ns)
            )
        )
        outcome = Outcome(left, len(watches.uids["pods"][ns]))
    return outcome, tuple(at - created for at in made)


def _make_simulated(sim: Simulation, case: ReplicaSetCase, step: Step) -> None:
    """A step reaching gpufleet (see the module's docstring)."""
    if step.replicas is not None:
        sim.scale(case.key, step.replicas)
        return
    node = case.node_name(step.annotate or step.delete)
    keys = [
        key
        for key, rec in sim.records.items()
        if rec.pod.namespace == case.namespace and rec.node == node and rec.deleted_s is None
    ]
    assert len(keys) == 1, f"{case.namespace}: pods {keys} on {node}, where the case means one"
    rec = sim.records[keys[0]]
    if step.annotate:
        rec.pod = replace(rec.pod, annotations={**rec.pod.annotations, POD_DELETION_COST: str(step.cost)})
    else:
        sim.evict(keys[0], "Deleted")


def run_gpufleet(case: ReplicaSetCase, stepped_s: Sequence[float] | None = None) -> tuple[Outcome, list[str]]:
    """The case simulated by gpufleet, its steps made at ``stepped_s`` (the real side's times; None: the
    case's ``at_s``): its outcome, and gpufleet's warnings on the scenario."""
    at = [s.at_s for s in case.steps] if stepped_s is None else list(stepped_s)
    horizon = (max(at) if at else 0.0) + AFTER_S
    run = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": case.namespace},
        "spec": {"duration": f"{horizon:.0f}s"},
    }
    sim = Simulation(load_documents([run, *case.nodes(), case.workload()]))
    for step, at_s in zip(case.steps, at, strict=True):
        sim.loop.at(at_s, Priority.ARRIVAL, partial(_make_simulated, sim, case, step))
    sim.run()
    records = [rec for rec in sim.records.values() if rec.pod.namespace == case.namespace]
    left = tuple(
        sorted(
            _left(case, rec.node, rec.created_s, at)
            for rec in records
            if rec.deleted_s is None and rec.phase in ("Pending", "Running")
        )
    )
    return Outcome(left, len(records)), list(sim.scenario.warnings)


def run_replicaset_cases(cp: ControlPlane, cases: tuple[ReplicaSetCase, ...]) -> list[ReplicaSetResult]:
    """Every case on the real side at once (``watches.side_by_side``), then simulated by gpufleet."""
    nodes = [n for c in cases for n in c.nodes()]
    runs = [partial(run_real, cp, case=c) for c in cases]
    real = side_by_side(cp, COLLECTIONS, [c.namespace for c in cases], nodes, runs)
    results = []
    for case, side in zip(cases, real, strict=True):
        if side.value is None:
            results.append(ReplicaSetResult(case.name, *run_gpufleet(case), error=side.error))
            continue
        outcome, stepped = side.value
        ours = run_gpufleet(case, stepped)
        results.append(ReplicaSetResult(case.name, *ours, outcome, stepped, "", side.seconds))
    return results
