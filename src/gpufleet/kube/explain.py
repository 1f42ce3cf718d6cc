"""``gpufleet explain``: why each pending pod of a cluster state cannot be placed.

Reads a cluster state (``kubectl get nodes,pods -A -o json``, or scenario YAML): bound
pods use capacity on their nodes, pending pods are tried against the scheduler they name
(upstream defaults unless a ``KubeSchedulerConfiguration`` says otherwise), without
changing anything. For each it gives kube-scheduler's message, verbatim, and what only a
GPU-aware tool adds: free GPUs per node, the largest free block, whether its gang could
be placed, and the nodes closest to fitting with what would have to change.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import format_units
from gpufleet.model.scenario import Scenario
from gpufleet.scheduling.diagnosis import diagnose
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import no_scheduler
from gpufleet.scheduling.processes import scheduler_processes
from gpufleet.scheduling.scheduler import Scheduler
from gpufleet.workloads import controller_for

CLOSEST_NODES = 5


def _changes(state: ClusterState, scheduler: Scheduler, pod: Pod) -> list[dict[str, Any]]:
    """Per node, what would make the pod fit: a taint to tolerate, resources to free (and by whom)."""
    profile = scheduler.profiles[pod.scheduler_name]
    rows = []
    for i in state.active_indices():
        node = state.nodes[i]
        blockers = [r for f in profile.static_filters if (r := f.reject(pod, node))]
        if blockers:
            rows.append((1, 0, {"node": node.name, "needs": blockers[:1], "evict": []}))
            continue
        want = {**pod.requests, "pods": 1}
        short = state.shortfall(pod, i)
        if any(r not in state.res_index or state.alloc[i, state.res_index[r]] < want[r] for r in short):
            rows.append(
                (
                    2,
                    0,
                    {
                        "node": node.name,
                        "needs": [f"node has too little {r} in total" for r in short],
                        "evict": [],
                    },
                )
            )
            continue
        evict: list[str] = []
        remaining = dict(short)
        for a in sorted(state.pods_on[i].values(), key=lambda a: (a.pod.priority, -a.pod.gpus, a.pod.key)):
            if all(v <= 0 for v in remaining.values()):
                break
            if any(a.pod.requests.get(r, 1 if r == "pods" else 0) > 0 for r, v in remaining.items() if v > 0):
                evict.append(a.pod.key)
                for r in remaining:
                    remaining[r] -= a.pod.requests.get(r, 1 if r == "pods" else 0)
        needs = [f"{format_units(r, v)} more {r}" for r, v in short.items()]
        rows.append((0, len(evict), {"node": node.name, "needs": needs, "evict": evict}))
    rows.sort(key=lambda r: (r[0], r[1], r[2]["node"]))
    return [r[2] for r in rows[:CLOSEST_NODES] if r[2]["needs"]]


def controller_pods(scenario: Scenario, nodes: list[Node], gangs: GangView) -> list[Pod]:
    """The pods the scenario's workloads would create first (a scenario of manifests rather than a
    snapshot of pods): they are explained as pending pods too; the gangs they form join ``gangs``."""
    pods: list[Pod] = []
    for workload in scenario.workloads():
        controller = controller_for(workload)
        for group in controller.pod_groups():
            gangs.add_group(group)
        pods += controller.wanted(nodes)
    return pods


def explain_scenario(scenario: Scenario, only: str | None = None) -> list[dict[str, Any]]:
    state = ClusterState([n for n in scenario.nodes])
    gangs = GangView(state, scenario.pod_groups)
    schedulers = [Scheduler(c, state, gangs) for c in scheduler_processes(scenario.schedulers)]
    pending: list[Pod] = []
    for pod in controller_pods(scenario, [n for n in scenario.nodes], gangs):
        gangs.add_pod(pod)
        pending.append(pod)
    for bare in scenario.pods:
        gangs.add_pod(bare.pod)
        if bare.phase in ("Succeeded", "Failed"):
            continue
        if bare.bound_node is not None and bare.bound_node in state.index:
            state.assign(bare.pod, bare.bound_node, 0.0)
        elif bare.bound_node is None:
            pending.append(bare.pod)
    if only is not None:
        pending = [p for p in pending if p.key == only]
        if not pending:
            raise KeyError(f"no pending pod {only} in the cluster state")
    out = []
    for pod in pending:
        owner = next((s for s in schedulers if s.serves(pod.scheduler_name)), None)
        if owner is None:
            node, message = None, no_scheduler(pod.scheduler_name)
        else:
            node, message = owner.try_schedule(pod)
        out.append(
            {
                "pod": pod.key,
                "scheduler": pod.scheduler_name,
                "schedulable_now": node,
                "message": message or None,
                "diagnosis": diagnose(state, pod, gangs),
                "closest_nodes": _changes(state, owner, pod) if owner is not None and node is None else [],
            }
        )
    return out


def render_explanations(explanations: list[dict[str, Any]], console: Console) -> None:
    if not explanations:
        console.print("no pending pods", highlight=False)
    for e in explanations:
        console.rule(f"{e['pod']} (scheduler {e['scheduler']})")
        if e["schedulable_now"]:
            console.print(f"would be placed on {e['schedulable_now']} now", highlight=False)
            continue
        console.print(e["message"], markup=False, highlight=False)
        d = e["diagnosis"]
        free = ", ".join(f"{n}: {g}" for n, g in d["free_gpus"].items()) or "none"
        console.print(
            f"GPUs requested: {d['gpus_requested']}; largest free block: {d['largest_free_gpus']}; "
            f"free GPUs: {free}",
            highlight=False,
        )
        if d["gang"]:
            g = d["gang"]
            console.print(
                f"gang {g['name']}: minMember {g['min_member']}, {g['members']} members, "
                f"{g['members_bound']} bound, "
                f"{g['members_that_fit']} of the rest fit now, {g['gpus_needed']} GPUs still needed",
                highlight=False,
            )
        for hint in d["hints"]:
            console.print(f"- {hint}", markup=False, highlight=False)
        for c in e["closest_nodes"]:
            evict = f" (e.g. if {', '.join(c['evict'])} were gone)" if c["evict"] else ""
            console.print(
                f"  {c['node']}: needs {'; '.join(c['needs'])}{evict}", markup=False, highlight=False
            )
