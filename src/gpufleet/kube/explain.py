"""``gpufleet explain``: why each pending pod of a cluster state cannot be placed.

Reads a cluster state (``kubectl get nodes,pods,events -A -o json``, or scenario YAML): bound
pods use capacity on their nodes, pending pods are tried against the scheduler they name
(upstream defaults unless a ``KubeSchedulerConfiguration`` says otherwise), without changing
anything. For each it gives what kube-scheduler recorded (its ``PodScheduled`` condition and latest
``FailedScheduling`` Event, verbatim), gpufleet's own evaluation beside it and whether the two agree
(``explain_recorded``); the pods one controller places together are judged one after another, a
Coscheduling gang all or nothing (``explain_together``); where DefaultPreemption would act, its
dry run's nominated node and victims. A pod that uses what gpufleet does not model (a field the
reader warned about, a plugin of its profile without an implementation) is ``cannot judge``, never
placed. Then what only a GPU-aware tool adds: free GPUs per node, the largest free block, whether
its gang could be placed, and the nodes closest to fitting with what would have to change; the NotReady
nodes that keep it off, and whether cluster-autoscaler would be halted by them (``explain_readiness``).
A pod whose scheduler gpufleet does not run gets no verdict: with a ``PodScheduled=False`` condition (its
scheduler's), gpufleet says that it cannot tell whether that scheduler would place the pod, and whether
cluster-autoscaler lists it (``scheduling.messages.not_simulated``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rich.console import Console

from gpufleet.cluster.state import ClusterState
from gpufleet.control import kai
from gpufleet.kube.explain_readiness import ReadinessHints
from gpufleet.kube.explain_recorded import events_by_pod, recorded_for, verdict
from gpufleet.kube.explain_together import Judged, judge, placed_with, serving
from gpufleet.model.host_ports import conflicts
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.pod_names import find_pod_key
from gpufleet.model.resources import format_units
from gpufleet.model.scenario import Scenario
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.model.scheduler_records import Recorded, recorded_by
from gpufleet.scheduling import registry
from gpufleet.scheduling.diagnosis import diagnose, reach_by_shape
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import not_simulated
from gpufleet.scheduling.plugins import scheduling_gates as gates
from gpufleet.scheduling.processes import scheduler_processes
from gpufleet.scheduling.scheduler import Decision, Scheduler
from gpufleet.workloads import controller_for
from gpufleet.workloads.job import kueue_held
from gpufleet.workloads.kind import WorkloadController

CLOSEST_NODES = 5


def _changes(state: ClusterState, scheduler: Scheduler, pod: Pod) -> list[dict[str, Any]]:
    """Per node, what would make the pod fit: a taint to tolerate, resources to free (and by whom)."""
    rows = [node_needs(state, scheduler, pod, int(i)) for i in state.active_indices()]
    rows.sort(key=lambda r: (r[0], r[1], r[2]["node"]))
    return [r[2] for r in rows[:CLOSEST_NODES] if r[2]["needs"]]


def node_needs(
    state: ClusterState, scheduler: Scheduler, pod: Pod, i: int
) -> tuple[int, int, dict[str, Any]]:
    """What would make the pod fit on node ``i`` (``needs``: empty where nothing gpufleet checks here
    keeps it off; ``evict``: the pods whose going would free enough), ranked: what takes freeing
    (0, by how many pods), what is ruled out (1: a filter's reason), what the node cannot hold (2)."""
    profile = scheduler.profiles[pod.scheduler_name]
    node = state.nodes[i]
    blockers = [r for f in profile.static_filters if (r := f.reject(pod, node))]
    if blockers:
        return (1, 0, {"node": node.name, "needs": blockers[:1], "evict": []})
    holders = (
        [
            a.pod.key
            for a in state.pods_on[i].values()
            if any(conflicts(port, a.pod.host_ports) for port in pod.host_ports)
        ]
        if pod.host_ports
        else []
    )
    if holders:  # NodePorts
        ports = ", ".join(f"{p.ip}:{p.port}/{p.protocol}" for p in pod.host_ports)
        return (0, len(holders), {"node": node.name, "needs": [f"host port {ports} free"], "evict": holders})
    want = {**pod.requests, "pods": 1}
    short = state.shortfall(pod, i)
    if any(r not in state.res_index or state.alloc[i, state.res_index[r]] < want[r] for r in short):
        needs = [f"node has too little {r} in total" for r in short]
        return (2, 0, {"node": node.name, "needs": needs, "evict": []})
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
    return (0, len(evict), {"node": node.name, "needs": needs, "evict": evict})


def this_node(state: ClusterState, scheduler: Scheduler, pod: Pod, i: int) -> dict[str, Any]:
    """``node_needs``'s answer for node ``i``, and whether a filter rules the node out (``ruled_out``)."""
    rank, _, row = node_needs(state, scheduler, pod, i)
    return {**row, "ruled_out": rank == 1}


def controller_pods(scenario: Scenario, nodes: list[Node], gangs: GangView) -> list[Pod]:
    """The pods the scenario's workloads would create first (a scenario of manifests rather than a
    snapshot of pods): they are explained as pending pods too; the gangs they form join ``gangs``.
    A controller that owns pods of the snapshot, or whose Job status counts ended ones
    (``Scenario.owned``: a dump of ``jobs,pods``), creates none: the snapshot shows what it made."""
    pods: list[Pod] = []
    for workload in scenario.workloads():
        controller = controller_for(kueue_held(workload, scenario.kueue))
        for group in controller.pod_groups():
            gangs.add_group(group)
        if f"{controller.kind}/{controller.key}" not in scenario.owned:
            pods += [kai_grouped(p, controller, scenario, gangs) for p in controller.wanted(nodes)]
    return pods


def kai_grouped(pod: Pod, controller: WorkloadController | None, scenario: Scenario, gangs: GangView) -> Pod:
    """Where KAI Scheduler is installed, its pods in the pod groups its pod grouper makes."""
    return kai.grouped(pod, controller, 0.0, gangs) if scenario.kai_queues else pod


def explain_scenario(
    scenario: Scenario, only: str | None = None, namespace: str | None = None, node: str | None = None
) -> list[dict[str, Any]]:
    """What each pending pod needs, as records; with ``only``, that pending pod (``NS/NAME``, or a name
    found as ``model.pod_names`` finds it, in ``namespace`` when given) and the pods judged with it;
    with ``node``, each record's ``this_node``: what would make it fit there (``this_node``), None where
    the node is not in the cluster or no scheduler serves the pod.
    ``PodNameError`` when ``only`` names no pending pod, or several."""
    state = ClusterState([n for n in scenario.nodes])
    state.namespace_labels = dict(scenario.namespace_labels)
    gangs = GangView(state, scenario.pod_groups)
    configs = kai.scheduler_configs(scenario.schedulers, scenario.kai_queues)
    schedulers = [Scheduler(c, state, gangs) for c in scheduler_processes(configs)]
    pending: list[Pod] = []
    for pod in controller_pods(scenario, [n for n in scenario.nodes], gangs):
        gangs.add_pod(pod)
        pending.append(pod)
    events = events_by_pod(scenario.events)
    records: dict[str, list[Recorded]] = {}
    conditions: dict[str, Recorded] = {}  # the pending pods' PodScheduled=False conditions
    for bare in scenario.pods:
        bare = replace(bare, pod=kai_grouped(bare.pod, None, scenario, gangs))
        gangs.add_pod(bare.pod)
        if bare.phase in ("Succeeded", "Failed"):
            continue
        if bare.bound_node is not None and bare.bound_node in state.index:
            state.assign(bare.pod, bare.bound_node, 0.0)
        elif bare.bound_node is None:
            pending.append(bare.pod)
            records[bare.pod.key] = recorded_for(bare, events)
            if bare.scheduled is not None:
                conditions[bare.pod.key] = bare.scheduled
    if only is not None:
        only = find_pod_key(only, (p.key for p in pending), namespace, what="pending pod")
        target = next(p for p in pending if p.key == only)
        key = placed_with(target)
        pending = [p for p in pending if p is target or (key is not None and placed_with(p) == key)]
    unmodelled = _unmodelled(pending, scenario.schedulers)
    # the closest nodes by what ``_changes`` reads: the pod's scheduler and shape, the cluster as it stands
    closest: dict[tuple[object, ...], list[dict[str, Any]]] = {}

    def closest_nodes(owner: Scheduler, pod: Pod) -> list[dict[str, Any]]:
        key = (pod.scheduler_name, pod.shape(), state.change_pos, state.static_version)
        rows = closest.get(key)
        if rows is None:
            rows = closest[key] = _changes(state, owner, pod)
        return [dict(row) for row in rows]

    def node_filters(pod: Pod) -> list[StaticFilter] | None:
        owner = serving(pod, schedulers)
        return owner.profiles[pod.scheduler_name].static_filters if owner is not None else None

    reach = reach_by_shape(state, node_filters)
    not_ready = ReadinessHints(scenario)

    def observe(pod: Pod, decision: Decision) -> dict[str, Any]:
        owner = serving(pod, schedulers)
        diagnosis = diagnose(state, pod, gangs, reach(pod))
        if not decision.nodes:
            diagnosis["hints"] += not_ready.for_pod(pod)
        here = None if node is None else state.index.get(node)
        return {
            "preemption": _preemption(state, decision),
            "diagnosis": diagnosis,
            "closest_nodes": closest_nodes(owner, pod) if owner is not None and not decision.nodes else [],
            **(
                {}
                if node is None
                else {
                    "this_node": None if owner is None or here is None else this_node(state, owner, pod, here)
                }
            ),
        }

    out = []
    for judged in judge(pending, schedulers, state, gangs, observe):
        pod = judged.pod
        if only is not None and pod.key != only:
            continue
        cannot = unmodelled[pod.key]
        nodes = () if cannot else judged.placed
        simulated = serving(pod, schedulers) is not None
        condition = conditions.get(pod.key)
        message = judged.decision.message
        if not simulated and condition is not None:  # a scheduler gpufleet does not run: no verdict on it
            message = not_simulated(pod.scheduler_name, condition)
        # what kube-scheduler would record: for a gated pod, the API server's condition message
        recordable = gates.CONDITION_MESSAGE if pod.scheduling_gates and not nodes else message
        out.append(
            {
                "pod": pod.key,
                "scheduler": pod.scheduler_name,
                "scheduler_simulated": simulated,
                "schedulable_now": nodes[0] if nodes else None,
                "equally_good_nodes": list(nodes),
                "message": message or None,
                "cannot_judge": cannot,
                "recorded": [
                    {"source": r.source, "message": r.message, "at": r.at.isoformat() if r.at else None}
                    for r in records.get(pod.key, [])
                ],
                "verdict": None
                if cannot or not simulated
                else verdict(records.get(pod.key, []), nodes, recordable),
                "together": _together(judged),
                **judged.observed,
                **({"preemption": None} if cannot else {}),
            }
        )
    return out


def _unmodelled(pending: list[Pod], configs: list[SchedulerConfig]) -> dict[str, list[str]]:
    """Per pending pod, what it uses that gpufleet does not model: the fields the reader warned
    about (its own, and those of the pods judged together with it) and the plugins its profile
    enables that have no implementation here."""
    profiles = {p.scheduler_name: p for c in configs for p in c.profiles}
    implemented = registry.plugins()
    own: dict[str, list[str]] = {}
    for pod in pending:
        profile = profiles.get(pod.scheduler_name)
        enabled = [r.name for s in profile.plugins.values() for r in s.enabled] if profile is not None else []
        missing = sorted({n for n in enabled if n not in implemented})
        own[pod.key] = [*pod.not_modelled, *(f"plugin {n} of profile {pod.scheduler_name}" for n in missing)]
    by_group: dict[str, list[str]] = {}
    for pod in pending:
        key = placed_with(pod)
        if key is not None:
            group = by_group.setdefault(key, [])
            group += [s for s in own[pod.key] if s not in group]
    return {p.key: by_group.get(placed_with(p) or "", own[p.key]) for p in pending}


def _together(judged: Judged) -> dict[str, Any] | None:
    if judged.together is None or judged.members == 1:
        return None
    gang = judged.gang
    return {
        "by": judged.together,
        "pending_members": judged.members,
        "placed_before": [list(p) for p in judged.earlier],
        "placed": judged.fitted,
        "bound": judged.bound,
        "gang": None if gang is None else {"name": gang.key, "min_member": gang.min_member},
        "gang_placed": judged.gang_placed,
        # a gang that is not placed: where this member would wait at Permit until rejected
        "waits_on": judged.waits_on,
    }


def _preemption(state: ClusterState, decision: Decision) -> dict[str, Any] | None:
    """DefaultPreemption's dry run: the node it would nominate and the pods it would evict (and
    where each runs), with every equally ranked choice."""
    nominations = decision.nominations
    if not nominations:
        return None

    def victims(keys: tuple[str, ...]) -> list[dict[str, str]]:
        return [{"pod": k, "node": state.nodes[state.assignments[k].node].name} for k in keys]

    (node, chosen), *others = nominations
    return {
        "nominated_node": node,
        "victims": victims(chosen),
        "equally_ranked": [{"nominated_node": n, "victims": victims(v)} for n, v in others],
    }


def render_explanations(explanations: list[dict[str, Any]], console: Console) -> None:
    if not explanations:
        console.print("no pending pods", highlight=False)

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    for e in explanations:
        console.rule(f"{e['pod']} (scheduler {e['scheduler']})")
        writer = recorded_by(e["scheduler"], e["scheduler_simulated"])
        for r in e["recorded"]:
            say(f"{writer}, {r['source']}: {r['message']}")
        for subject in e["cannot_judge"]:
            say(f"cannot judge: {subject} is not modelled")
        _render_together(e, say)
        if e["schedulable_now"]:
            say(f"gpufleet: would be placed on {' or '.join(e['equally_good_nodes'])} now")
        elif e["message"]:
            prefix = "gpufleet, without what it does not model" if e["cannot_judge"] else "gpufleet"
            say(f"{prefix}: {e['message']}")
        if e["preemption"]:
            _render_preemption(e["preemption"], say)
        if e["verdict"]:
            say(e["verdict"])
        if not e["message"]:  # it would be placed (or cannot be judged and nothing rules it out)
            continue
        d = e["diagnosis"]
        free = ", ".join(f"{n}: {g}" for n, g in d["free_gpus"].items()) or "none"
        say(
            f"GPUs requested: {d['gpus_requested']}; largest free block: {d['largest_free_gpus']}; "
            f"free GPUs: {free}"
        )
        if d["gang"]:
            g = d["gang"]
            say(
                f"gang {g['name']}: minMember {g['min_member']}, {g['members']} members, "
                f"{g['members_bound']} bound, "
                f"{g['members_that_fit']} of the rest fit now, {g['gpus_needed']} GPUs still needed"
            )
        for hint in d["hints"]:
            say(f"- {hint}")
        for c in e["closest_nodes"]:
            evict = f" (e.g. if {', '.join(c['evict'])} were gone)" if c["evict"] else ""
            say(f"  {c['node']}: needs {'; '.join(c['needs'])}{evict}")


def _render_together(e: dict[str, Any], say: Callable[[str], None]) -> None:
    together = e["together"]
    if together is None:
        return
    before = ", ".join(f"{pod} on {node}" for pod, node in together["placed_before"]) or "none"
    say(
        f"judged with the {together['pending_members']} pending pods of {together['by']}, one after "
        f"another in queue order; placed before it: {before}"
    )
    gang = together["gang"]
    if gang is not None and not together["gang_placed"]:
        say(
            f"gang {gang['name']} is all or nothing (Coscheduling): minMember {gang['min_member']}, but only "
            f"{together['placed']} of its {together['pending_members']} pending pods fit together "
            f"and {together['bound']} are bound, so none is placed"
        )
        if together["waits_on"]:
            say(f"it would wait at Permit on {together['waits_on']} until its gang is rejected")


def _render_preemption(preemption: dict[str, Any], say: Callable[[str], None]) -> None:
    def evicted(choice: dict[str, Any]) -> str:
        victims = ", ".join(f"{v['pod']} (on {v['node']})" for v in choice["victims"])
        return f"nominated to {choice['nominated_node']}, evicting {victims}"

    say(f"preemption: {evicted(preemption)}")
    for other in preemption["equally_ranked"]:
        say(f"  or, ranked equally: {evicted(other)}")
