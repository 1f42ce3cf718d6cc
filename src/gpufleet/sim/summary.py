"""``summary.json`` (schema ``gpufleet.summary/v1``) from a finished simulation.

Every figure comes from the simulation's records (each pod's event log, each node's
record), the meter's log (``sim.metering``) and the sampled timeline; nothing is counted separately.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, cast

from gpufleet.model.final_states import CRASH_LOOP_BACK_OFF, count_final_states, final_state
from gpufleet.model.kubelet_events import pull_policy
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import ContainerExit
from gpufleet.model.pod_selection import PodSelection
from gpufleet.scheduling.diagnosis import diagnose, reach_by_shape
from gpufleet.scheduling.fragmentation import fragmentation
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.gangs import group_key
from gpufleet.sim.records import PodRecord
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.traffic import TrafficState, mean_gpu_util_pct
from gpufleet.workloads.kind import ReportsStatus, implements

SCHEMA = "gpufleet.summary/v1"


def _pod_record(
    sim: Simulation,
    rec: PodRecord,
    reach: Callable[[Pod], list[int]],
    autoscaler_hints: Callable[[str], list[str]],
) -> dict[str, Any]:
    pending = rec.phase == "Pending" and rec.deleted_s is None
    diagnosis = diagnose(sim.state, rec.pod, sim.gangs, reach(rec.pod)) if pending else None
    if diagnosis is not None:
        diagnosis["hints"] += autoscaler_hints(rec.pod.key)
    return {
        "name": rec.pod.key,
        "workload": workload_of(sim, rec),
        "phase": rec.phase,
        "reason": rec.reason,
        "final_state": _final_state(rec),
        "terminated": _terminated(rec.terminated),
        "last_terminated": _terminated(rec.last_terminated),
        "restarts": rec.restarts,
        "back_offs": [[ended_s, wait_s] for ended_s, wait_s in rec.back_offs],
        "container_starts": list(rec.container_starts),
        "image": rec.pod.behavior.image,
        "image_pull_policy": pull_policy(rec.pod.behavior.image, rec.pod.behavior.image_pull_policy),
        "image_pull": _image_pull(rec),
        "node": rec.node,
        "gpus": round(rec.gpu_share, 6),
        "devices": [u.id for u in rec.devices],
        "claims": [
            {
                "name": key,
                "results": [
                    {"request": r.request, "device": str(r.device_id), "admin_access": r.admin_access}
                    for r in allocation.results
                ],
            }
            for key, allocation in rec.claims
        ],
        "ring": None
        if rec.ring is None
        else {
            "ranks_per_node": list(rec.ring.ranks_per_node),
            "cross_node_edges": rec.ring.cross_node_edges,
            "stretch": round(rec.ring.stretch, 6),
        },
        "working": rec.working,
        "created_s": rec.creation_timestamp_s,
        "bound_s": rec.bound_s,
        "running_s": rec.running_s,
        "working_s": rec.working_s,
        "finished_s": rec.finished_s,
        "deleted_s": rec.deleted_s,
        "message": rec.message
        if pending or rec.phase == "Failed" or rec.reason == CRASH_LOOP_BACK_OFF
        else None,
        "scheduler": rec.pod.scheduler_name,  # (its profile: a scheduler's events come from that name)
        "pod_group": group_key(rec.pod),
        "diagnosis": diagnosis,
        "disruptions": list(rec.disruptions),
        "stages": rec.stages(),
        "node_stages": dict(rec.node_stages),
        **({"running_at_start": True} if rec.running_at_start else {}),
    }


def _autoscaler_hints(sim: Simulation) -> Callable[[str], list[str]]:
    """What cluster-autoscaler's last scan says about each pod it looks at (an unschedulable pod), as
    ``ClusterAutoscalerLoop.pod_hints`` words it: that it is halted, the cluster unhealthy, that node
    groups are not ready for scale-up, or that it waits for very new pods. Nothing when it found the cluster
    healthy and every group ready, and did not wait."""
    autoscaler = sim.autoscaler
    if autoscaler.unhealthy is None and not autoscaler.unready_groups and not autoscaler.waits_for_new_pods:
        return lambda key: []
    looked_at = {pod.key for pod in sim.unschedulable_pods()}
    return lambda key: autoscaler.pod_hints(key) if key in looked_at else []


def _terminated(state: ContainerExit | None) -> dict[str, Any] | None:
    """A container's terminated state (``state.terminated``, ``lastState.terminated``): its container's name,
    exit code and reason; None where the kubelet would report none (``model.pod_failure_policy``)."""
    if state is None or state.exit_code is None:
        return None
    return {"container": state.name, "exit_code": state.exit_code, "reason": state.reason}


def _image_pull(rec: PodRecord) -> dict[str, Any] | None:
    """The kubelet's pull of the pod's image (``PodRecord.image_pull``) with the image's size."""
    pull = rec.image_pull
    if pull is None:
        return None
    return {
        "requested_s": pull.requested_s,
        "pull_s": pull.pull_s,
        "landed_s": pull.landed_s,
        "size_bytes": int(rec.pod.behavior.image_size_bytes or 0),
    }


def _final_state(rec: PodRecord) -> str:
    return final_state(rec.phase, rec.reason, rec.deleted_s is not None)


def _percent(part: float, whole: float) -> float | None:
    """``part`` over ``whole`` in percent, null when ``whole`` is 0."""
    return round(100 * part / whole, 4) if whole > 0 else None


def _node_filters(sim: Simulation, pod: Pod) -> list[StaticFilter] | None:
    """The node-only filters of the pod's scheduler profile (None: no scheduler serves it)."""
    scheduler = next((s for s in sim.schedulers if s.serves(pod.scheduler_name)), None)
    return None if scheduler is None else scheduler.profiles[pod.scheduler_name].static_filters


def _may_use(sim: Simulation) -> Callable[[Pod, Node], bool]:
    """Whether a pod's scheduler would consider a node at all: its node-only filters (nodeSelector and
    affinity, taints, cordons, nodeName, GPU memory) pass; a pod whose scheduler is absent uses none."""

    def may_use(pod: Pod, node: Node) -> bool:
        filters = _node_filters(sim, pod)
        return filters is not None and all(f.reject(pod, node) is None for f in filters)

    return may_use


def _fragmentation(sim: Simulation, records: list[PodRecord]) -> dict[str, Any]:
    """Free GPUs the pending pods cannot use, at the end of the run: the FGD paper's measure over the
    nodes they may use (free GPUs on the others are out of their reach, not fragmented)."""
    pending = [r.pod for r in records if r.phase == "Pending" and r.deleted_s is None and r.node is None]
    frag = fragmentation(sim.state, pending, _may_use(sim))
    top = sorted(frag.per_node.items(), key=lambda kv: (-kv[1], kv[0]))[:16]
    return {
        "free_gpus": frag.free_gpus,
        "fragmented_gpus": round(frag.fragmented_gpus, 6),
        "ratio": round(frag.ratio, 6),
        "out_of_reach_gpus": round(frag.out_of_reach_gpus, 6),
        "nodes": dict(top),
    }


def workload_of(sim: Simulation, rec: PodRecord) -> str:
    """``Kind/namespace/name`` of the workload whose controller made the pod (a JobSet, not its child
    Job; a LeaderWorkerSet, not its StatefulSets); ``Pod/namespace/name`` for a pod of its own."""
    controller = sim.created_by.get(rec.pod.key)
    return f"{controller.kind}/{controller.key}" if controller is not None else f"Pod/{rec.pod.key}"


def _traffic(sim: Simulation, workloads: set[str] | None) -> list[TrafficState]:
    """The Traffic objects, by target; with a selection, those aimed at a workload of a selected pod."""
    return [t for key, t in sorted(sim.traffic.items()) if workloads is None or key in workloads]


def _workload_status(sim: Simulation, workloads: set[str] | None) -> dict[str, Any]:
    """The status of each workload whose controller reports one (a Job: ``sim.workload_status``) by
    ``<Kind>/<ns>/<name>`` (as ``pods[].workload`` names it); with a selection, those of selected pods."""
    out: dict[str, Any] = {}
    for key, status in sorted(sim.workload_status.items()):
        controller = sim.controllers[key]
        if workloads is not None and key not in workloads:
            continue
        if implements(controller, ReportsStatus):
            out[key] = status.as_dict(cast(ReportsStatus, controller))
    return out


def _faults(sim: Simulation, totals: dict[str, float]) -> dict[str, Any]:
    """Each fault and its cost (``sim.faults``), and the totals: MTTR (mean time to recovery of the faults
    recovered), and goodput: the working GPU-hours not lost (since the checkpoints, faults or not) nor
    spent writing checkpoints, over the GPU-hours allocated."""
    assert sim.faults is not None
    faults = [r.as_dict(sim.end_time) for r in sim.faults.records]
    happened = [f for f in faults if f["note"] is None]
    recoveries = [f["time_to_recovery_s"] for f in happened if f["time_to_recovery_s"] is not None]
    by_kind: dict[str, int] = {}
    for f in happened:
        by_kind[f["kind"]] = by_kind.get(f["kind"], 0) + 1
    allocated = totals["gpu_hours_allocated"]
    saving = sim.checkpoint_save_gpu_s / 3600
    good = totals["gpu_hours_working"] - sim.work_lost_gpu_s / 3600 - saving
    return {
        "totals": {
            "faults": len(happened),
            "by_kind": dict(sorted(by_kind.items())),
            "pods_hit": sum(len(f["pods_hit"]) for f in happened),
            "gpu_hours_lost": round(sum(f["gpu_hours_lost"] for f in happened), 6),
            "work_lost_gpu_hours": round(sum(f["work_lost_gpu_hours"] for f in happened), 6),
            "checkpoint_save_gpu_hours": round(saving, 6),
            "recovered": len(recoveries),
            "mttr_s": round(sum(recoveries) / len(recoveries), 6) if recoveries else None,
            "goodput": round(good / allocated, 6) if allocated > 0 else None,
        },
        "faults": faults,
    }


def build_summary(sim: Simulation, selection: PodSelection | None = None) -> dict[str, Any]:
    """The summary; with ``selection``, its pods, pod counts and request figures cover the selected
    pods only (GPUs, nodes, cost and the timeline stay the cluster's)."""
    # a name created again appears once per pod, in the order they were created
    records = sorted(sim.all_records, key=lambda r: (r.pod.key, r.created_s))
    if selection is not None:
        records = [r for r in records if selection.selects(r.pod)]
    selected = None if selection is None else {workload_of(sim, r) for r in records}
    traffic = _traffic(sim, selected)
    workload_status = _workload_status(sim, selected)
    working = round(sim.meter.working_gpus, 6)
    metered = sim.meter.totals()
    provisioned = metered.gpu_seconds["provisioned"]
    states = count_final_states(_final_state(r) for r in records)
    reach = reach_by_shape(sim.state, partial(_node_filters, sim))
    hints = _autoscaler_hints(sim)
    cluster = sim.cluster
    nodes = []
    allocated_per_node = cluster.gpus_allocated_per_node()
    dra_gpus = cluster.dra_gpus_per_node()
    for name, node in sorted(sim.nodes.items()):
        i = sim.state.index.get(name)
        gpus = allocated = 0.0
        if i is not None:
            gpus = float(cluster.devices_of(name).gpus + dra_gpus[i])
            allocated = float(allocated_per_node[i])
        nodes.append(
            {
                "name": name,
                "pool": node.pool,
                "gpus": gpus,
                "gpus_allocated": round(allocated, 6),
                "created_s": node.created_s,
                "ready_s": node.ready_s,
                "gpu_ready_s": node.gpu_ready_s,
                "deleted_s": node.deleted_s,
            }
        )
    summary: dict[str, Any] = {
        "schema": SCHEMA,
        "seed": sim.seed,
        "end_time_s": sim.end_time,
        "schedulers": [s.name for s in sim.schedulers],
        "totals": {
            "gpus_total": cluster.gpus_total(),
            "gpus_allocated": round(cluster.gpus_allocated(), 6),
            "gpus_working": working,
            "pods_pending": sum(1 for r in records if r.phase == "Pending" and r.deleted_s is None),
            "pods_running": sum(1 for r in records if r.phase == "Running" and r.deleted_s is None),
            "pods_succeeded": states.get("Succeeded", 0),
            "pods_failed": states.get("Failed", 0),
            "final_states": states,
            "pods_disrupted": sum(1 for r in records if r.disruptions),
            "work_lost_s": round(sim.work_lost_gpu_s, 6),
            "cost": round(metered.cost, 6),
            "gpu_hours_provisioned": round(metered.gpu_seconds["provisioned"] / 3600, 6),
            "gpu_hours_allocated": round(metered.gpu_seconds["allocated"] / 3600, 6),
            "gpu_hours_working": round(metered.gpu_seconds["working"] / 3600, 6),
            "dcgm_gpu_util_pct": mean_gpu_util_pct(traffic),
            "gpu_allocated_pct": _percent(metered.gpu_seconds["allocated"], provisioned),
            "gpu_working_pct": _percent(metered.gpu_seconds["working"], provisioned),
        },
        "timeline": {
            **sim.samples,
            "nodes_by_pool": dict(sim.pools_timeline),
            "nodes_by_state": dict(sim.nodes_by_state),
            "replicas": dict(sim.replicas_timeline),
        },
        "traffic": {f"{t.spec.namespace}/{t.spec.target}": t.figures() for t in traffic},
        "fragmentation": _fragmentation(sim, records),
        "work_items": {name: wl.counts() for name, wl in sorted(sim.lifecycle.work_lists.items())},
        "autoscaler_events": [e.as_dict() for e in sim.autoscaler.events],
        "mig_reconfigurations": [r.as_dict() for r in sim.mig_managers.records],
        **({"kueue": sim.kueue.summary()} if sim.kueue.installed else {}),
        **(
            {"scaled_objects": scaled} if (scaled := sim.workload_autoscalers.scaled_object_figures()) else {}
        ),
        **({"hpas": hpas} if (hpas := sim.workload_autoscalers.hpa_figures()) else {}),
        **({"workload_status": workload_status} if workload_status else {}),
        **({"rollouts": rollouts} if (rollouts := sim.rollouts.as_list()) else {}),
        "pods": [_pod_record(sim, r, reach, hints) for r in records],
        "nodes": nodes,
        "warnings": list(sim.scenario.warnings),
        **({"selection": selection.text} if selection is not None else {}),
    }
    if sim.faults is not None:
        summary["faults"] = _faults(sim, summary["totals"])
    return summary
