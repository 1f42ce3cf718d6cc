"""The ReplicaSet controller's fidelity cases (``e2e.fidelity.replicaset_cases``) run on both sides, as
``e2e.fidelity.stepped_run`` runs a stepped case.

- The real side: every case at once on the test control plane, each in its namespace on its own kwok nodes.
  Before each step, and at the end, the case waits until its pods are where they go (``_settled``: as many
  as the workload wants, each Ready on a node or left unschedulable by kube-scheduler). What the case reads
  comes from watches (``e2e.fidelity.watches``): a pod's step is the number of steps made before the
  watches first told of it.
- gpufleet's side: a scale through ``Simulation.scale`` (what an autoscaler calls), an annotation written on
  the pod's record (the pod the ReplicaSet controller reads when it next ranks pods), a deletion through
  ``Simulation.evict`` (the pod deleted, its controller told).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from e2e.controlplane import ControlPlane
from e2e.fidelity.replicaset_cases import NAME, POD_DELETION_COST, Outcome, ReplicaSetCase, Step
from e2e.fidelity.stepped_run import SteppedResult, make_steps, run_stepped_cases, simulation, steps_at
from e2e.fidelity.watches import RunError, Watches, placed
from gpufleet.sim.simulation import Simulation


class ReplicaSetResult(SteppedResult[Outcome]):
    """A case on both sides: the pods each side left and made."""


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


def run_real(cp: ControlPlane, case: ReplicaSetCase, watches: Watches) -> tuple[Outcome, tuple[float, ...]]:
    """The case's workload created on the control plane, its steps made, until its pods are settled: its
    outcome, and when each step was made (s after the workload's creation)."""
    created, made = make_steps(cp, watches, case, _settled, partial(_make_real, cp, watches, case))
    with watches.changed:
        left = tuple(
            sorted(
                _left(case, p["spec"].get("nodeName"), watches.first_seen[p["metadata"]["uid"]], made)
                for p in watches.standing_pods(case.namespace)
            )
        )
        outcome = Outcome(left, len(watches.uids["pods"][case.namespace]))
    return outcome, tuple(at - created for at in made)


def _make_simulated(case: ReplicaSetCase, sim: Simulation, step: Step) -> None:
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
    at = steps_at(case.steps, stepped_s)
    sim = simulation(case, at, partial(_make_simulated, case))
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
    """Every case on the real side at once, then simulated by gpufleet (``stepped_run.run_stepped_cases``)."""
    return run_stepped_cases(cp, NAME, cases, run_real, run_gpufleet, ReplicaSetResult)
