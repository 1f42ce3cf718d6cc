"""A start-up measurement as a ``summary.json`` (schema ``gpufleet.summary/v1``), as a simulation writes it.

So a real cluster and a simulation are read the same way (DESIGN.md, the live side): times are
seconds from the measurement's origin (``--since``, or the earliest pod creation), pods carry their
``stages``, nodes their ``created_s``/``ready_s``/``gpu_ready_s``, and the timeline steps at every
recorded moment. A node launched for pods has ``created_s`` at its launch request (the summary
contract's meaning) and ``registered_s`` when its Node object appeared; such a pod has its node's
``node_stages``. The ``startup`` field adds what only a measurement has: per-stage nearest-rank
percentiles (p50, p90, p95, p99, max), the node start chain per node group (`node_stages`, in the
stage names of ``NodePool.spec.provisioning``), and the notes saying what the input does not record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gpufleet.live.startup_records import STAGES, NodeStartup, PodStartup, StartupMeasurement
from gpufleet.model.final_states import count_final_states, final_state
from gpufleet.model.percentiles import nearest_rank

DIGITS = 6
SPREAD = (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("max", 100))


def summary(measurement: StartupMeasurement) -> dict[str, Any]:
    """The ``gpufleet.summary/v1`` dict of ``measurement`` (without ``latency`` and ``jobs``, which
    ``report.finished_summary`` adds and checks, as for a simulation)."""
    origin = measurement.origin
    rel = _Relative(origin)
    end = measurement.end
    by_name = {node.name: node for node in measurement.nodes}
    pods = [_pod(pod, rel, end) for pod in measurement.pods]
    for record, pod in zip(pods, measurement.pods, strict=True):
        if pod.node_launched is not None and pod.node in by_name:
            record["node_stages"] = node_stages(by_name[pod.node])
    allocated: dict[str, float] = defaultdict(float)
    for pod in measurement.pods:
        if pod.node is not None and _holds(pod, end):
            allocated[pod.node] += pod.gpus
    nodes = [_node(node, allocated[node.name], rel) for node in measurement.nodes]
    working = [pod for pod in measurement.pods if pod.working is not None]
    return {
        "schema": "gpufleet.summary/v1",
        "scenario": "measured start-up" + (" (watch)" if measurement.watched else " (dump)"),
        "end_time_s": rel.at(end),
        "totals": _totals(measurement.pods, measurement.nodes, end),
        "timeline": _timeline(measurement, rel),
        "pods": pods,
        "nodes": nodes,
        "warnings": list(measurement.notes),
        "startup": {
            "source": "watch" if measurement.watched else "dump",
            "origin": _rfc3339(origin),
            "stages": {
                name: spread([pod.stages.get(name, 0.0) for pod in working])
                for name in STAGES
                if any(name in pod.stages for pod in working)
            },
            "pending_to_working_s": spread([pod.working - pod.created for pod in working if pod.working]),
            "node_chain": _node_chain(measurement.nodes, origin),
            "notes": list(measurement.notes),
        },
    }


class _Relative:
    """Seconds since the epoch as seconds from the origin, rounded; None stays None."""

    def __init__(self, origin: float) -> None:
        self.origin = origin

    def __call__(self, t: float | None) -> float | None:
        return None if t is None else self.at(t)

    def at(self, t: float) -> float:
        return round(t - self.origin, DIGITS)


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """``{p50, p90, p95, p99, max, count}`` of ``values`` by nearest rank (None when there are none)."""
    figures: dict[str, float | int | None] = {
        key: (round(nearest_rank(values, p), DIGITS) if values else None) for key, p in SPREAD
    }
    figures["count"] = len(values)
    return figures


def _rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _phase(pod: PodStartup) -> str:
    return pod.phase if pod.phase in ("Pending", "Running", "Succeeded", "Failed") else "Pending"


def _final_state(pod: PodStartup, end: float) -> str:
    return final_state(_phase(pod), pod.reason, pod.deleted is not None and pod.deleted <= end)


def _pod(pod: PodStartup, rel: _Relative, end: float) -> dict[str, Any]:
    ended = pod.finished is not None or (pod.deleted is not None and pod.deleted <= end)
    return {
        "name": pod.name,
        "phase": _phase(pod),
        "reason": pod.reason,
        "final_state": _final_state(pod, end),
        "node": pod.node,
        "gpus": pod.gpus,
        "working": pod.working is not None and not ended,
        "created_s": rel(pod.created),
        "bound_s": rel(pod.bound),
        "running_s": rel(pod.running),
        "working_s": rel(pod.working),
        "finished_s": rel(pod.finished),
        "deleted_s": rel(pod.deleted),
        "message": pod.message,
        "diagnosis": None,
        "disruptions": [],
        "stages": dict(pod.stages),
        "owner": pod.owner,
        "scale_up": None
        if pod.scale_up is None
        else {"t_s": rel(pod.scale_up.at), "groups": list(pod.scale_up.groups)},
        "image_pulls": [
            {
                "image": pull.image,
                "t_s": rel(pull.at),
                "pull_s": pull.pull_s,
                "including_waiting_s": pull.waiting_s,
                "size_bytes": pull.size_bytes,
                "already_present": pull.present,
            }
            for pull in pod.pulls
        ],
        "notes": list(pod.notes),
    }


def _holds(pod: PodStartup, end: float) -> bool:
    """Bound and neither finished nor deleted by ``end``."""
    gone = pod.finished is not None or (pod.deleted is not None and pod.deleted <= end)
    return pod.bound is not None and not gone


def _node(node: NodeStartup, allocated: float, rel: _Relative) -> dict[str, Any]:
    return {
        "name": node.name,
        "pool": node.group,
        "gpus": node.gpus,
        "gpus_allocated": allocated,
        "created_s": rel(node.launched if node.launched is not None else node.created),
        "registered_s": rel(node.created),
        "ready_s": rel(node.ready),
        "gpu_ready_s": rel(node.gpu_ready),
        "deleted_s": rel(node.deleted),
        "notes": list(node.notes),
    }


def _totals(pods: Sequence[PodStartup], nodes: Sequence[NodeStartup], end: float) -> dict[str, Any]:
    present = [pod for pod in pods if pod.deleted is None or pod.deleted > end]
    states = count_final_states(_final_state(pod, end) for pod in pods)
    return {
        "gpus_total": sum(node.gpus for node in nodes if node.deleted is None),
        "gpus_allocated": sum(pod.gpus for pod in pods if _holds(pod, end)),
        "gpus_working": sum(pod.gpus for pod in pods if _holds(pod, end) and pod.working is not None),
        "pods_pending": sum(1 for pod in present if pod.phase == "Pending"),
        "pods_running": sum(1 for pod in present if pod.phase == "Running"),
        "pods_succeeded": states.get("Succeeded", 0),
        "pods_failed": states.get("Failed", 0),
        "final_states": states,
    }


def _timeline(measurement: StartupMeasurement, rel: _Relative) -> dict[str, list[float]]:
    """Step series at every recorded moment: each series is a list of (time, change) summed in order.

    A node's GPUs count from their allocatable time (a watch) or, from a dump, its Ready time.
    """
    changes: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def step(series: str, start: float | None, stop: float | None, amount: float) -> None:
        if start is None or amount == 0:
            return
        changes[series].append((start, amount))
        if stop is not None:
            changes[series].append((stop, -amount))

    for pod in measurement.pods:
        gone = min((t for t in (pod.finished, pod.deleted) if t is not None), default=None)
        waiting_ends = min((t for t in (pod.bound, pod.deleted) if t is not None), default=None)
        step("pods_pending", pod.created, waiting_ends, 1.0)
        step("gpus_allocated", pod.bound, gone, pod.gpus)
        step("gpus_working", pod.working, gone, pod.gpus)
    for node in measurement.nodes:
        step("nodes", node.launched if node.launched is not None else node.created, node.deleted, 1.0)
        step(
            "gpus_total",
            node.gpu_ready if node.gpu_ready is not None else node.ready,
            node.deleted,
            node.gpus,
        )
    end = measurement.end
    times = sorted(
        {
            0.0,
            rel.at(end),
            *(max(rel.at(t), 0.0) for series in changes.values() for t, _ in series if t <= end),
        }
    )
    timeline: dict[str, list[float]] = {"t_s": times}
    for name in ("gpus_total", "gpus_allocated", "gpus_working", "pods_pending", "nodes"):
        ordered = sorted((max(rel.at(t), 0.0), change) for t, change in changes[name] if t <= end)
        values, total, i = [], 0.0, 0
        for t in times:
            while i < len(ordered) and ordered[i][0] <= t:
                total += ordered[i][1]
                i += 1
            values.append(round(total, DIGITS))
        timeline[name] = values
    return timeline


@dataclass(frozen=True)
class GroupChain:
    """The start chains of one node group's nodes that started in the measured window."""

    nodes: tuple[NodeStartup, ...]
    boot: tuple[float, ...]  # launch request -> Node created, per node launched for a pod
    join: tuple[float, ...]  # Node created -> Ready, per node that turned Ready
    device_plugin: tuple[float, ...]  # Ready -> GPUs allocatable, per node a watch saw both


def node_stages(node: NodeStartup) -> dict[str, float]:
    """The node's start chain in ``NodePool.spec.provisioning``'s names, each only when measured:
    ``boot`` (launch request -> the Node object: the cloud's capacity, the instance's boot and, in seed
    000's order, the driver, until the kubelet registers), ``join`` (Node created -> Ready) and
    ``devicePlugin`` (Ready -> GPUs allocatable)."""
    stages = {}
    if node.launched is not None:
        stages["boot"] = node.created - node.launched
    if node.ready is not None:
        stages["join"] = node.ready - node.created
        if node.gpu_ready is not None:
            stages["devicePlugin"] = node.gpu_ready - node.ready
    return {name: round(max(value, 0.0), DIGITS) for name, value in stages.items()}


def chain_samples(nodes: Sequence[NodeStartup], origin: float) -> dict[str, GroupChain]:
    """Per node group (``(no group)`` for nodes without one), in name order, the `node_stages` of the
    nodes launched or created at or after ``origin``, or seen starting by a watch."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    members: dict[str, list[NodeStartup]] = defaultdict(list)
    for node in nodes:
        if node.observed_start or min(node.created, node.launched or node.created) >= origin:
            groups[node.group or "(no group)"].append(node_stages(node))
            members[node.group or "(no group)"].append(node)
    return {
        group: GroupChain(
            nodes=tuple(members[group]),
            boot=tuple(stage["boot"] for stage in chains if "boot" in stage),
            join=tuple(stage["join"] for stage in chains if "join" in stage),
            device_plugin=tuple(stage["devicePlugin"] for stage in chains if "devicePlugin" in stage),
        )
        for group, chains in sorted(groups.items())
    }


def _node_chain(nodes: Sequence[NodeStartup], origin: float) -> dict[str, Any]:
    return {
        group: {
            "nodes": [node.name for node in chain.nodes],
            "boot": spread(chain.boot),
            "join": spread(chain.join),
            "devicePlugin": spread(chain.device_plugin),
        }
        for group, chain in chain_samples(nodes, origin).items()
    }
