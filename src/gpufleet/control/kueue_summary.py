"""What Kueue did, for ``summary.json``'s ``kueue`` section (gpufleet's report, read from the workloads'
records): per ClusterQueue its admissions, finished and pending workloads, preemptions and evictions by
reason, its admission checks, and its usage over time of each (flavor, resource) of its quota (the steps,
kept as admissions and releases change it); per workload its admissions, evictions and message, and the
parts of upstream's Workload status a user reads (``requeueState``, ``spec.active``, its quota reservations,
``status.admissionChecks`` with their ProvisioningRequests, and the events about them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpufleet.control.kueue_workload import KueueWorkload, gone
from gpufleet.control.port import PodStatus
from gpufleet.model.kueue import ClusterQueue, FlavorResource, KueueObjects


@dataclass
class QueueStats:
    admitted: int = 0
    finished: int = 0
    preempted: dict[str, int] = field(default_factory=dict)  # reason -> workloads of this queue evicted
    evicted: dict[str, int] = field(default_factory=dict)  # reason -> evictions by waitForPodsReady, checks
    preempting: int = 0  # evictions its workloads caused
    steps: dict[str, list[list[float]]] = field(default_factory=dict)  # "flavor/resource" -> [[t, used]]

    def usage_changed(self, cq: ClusterQueue, used: Mapping[FlavorResource, int], now: float) -> None:
        """A step of each (flavor, resource) of the queue's quota whose use changed (``used`` by its
        admitted workloads) at ``now``."""
        frs = {(q.flavor, r) for g in cq.resource_groups for q in g.flavors for r in q.resources}
        for fr in sorted(frs):
            series = self.steps.setdefault(f"{fr[0]}/{fr[1]}", [[0.0, 0.0]])
            value = float(used.get(fr, 0))
            if series[-1][0] == now:
                series[-1][1] = value
            elif series[-1][1] != value:
                series.append([now, value])


def summarize(
    objects: KueueObjects,
    stats: Mapping[str, QueueStats],
    workloads: Iterable[KueueWorkload],
    pods: Mapping[str, PodStatus],
) -> dict[str, Any]:
    """Per ClusterQueue and per workload; where ``waitForPodsReady`` evicted any, also the queue's
    evictions by it (``evicted``, by reason), a workload's ``requeue_state`` (while it has one) and
    ``active: false`` (once deactivated)."""
    by_key = sorted(workloads, key=lambda w: w.key)
    queues: dict[str, Any] = {}
    for name, queue_stats in stats.items():
        cq = objects.cluster_queues[name]
        resources: dict[str, Any] = {}
        for key, steps in sorted(queue_stats.steps.items()):
            flavor, resource = key.split("/", 1)
            quota = cq.quota(flavor, resource)
            nominal = quota.nominal if quota is not None else 0
            peak = max(v for _, v in steps)
            resources[key] = {
                "nominal": float(nominal),
                "peak": peak,
                "borrowed_peak": max(peak - nominal, 0.0),
                "steps": steps,
            }
        mine = [wl for wl in by_key if _queue_of(objects, wl) == name]
        queues[name] = {
            "cohort": cq.cohort,
            "admitted": queue_stats.admitted,
            "finished": queue_stats.finished,
            "pending": sum(1 for wl in mine if _pending(wl, pods)),
            "preempted": dict(sorted(queue_stats.preempted.items())),
            "preempting": queue_stats.preempting,
            "usage": resources,
        }
        if queue_stats.evicted:  # evictions by waitForPodsReady and admission checks, by reason
            queues[name]["evicted"] = dict(sorted(queue_stats.evicted.items()))
        if cq.admission_checks:
            queues[name]["admission_checks"] = [
                {"name": n, "on_flavors": list(on)} for n, on in cq.admission_checks
            ]
    rows = []
    for wl in by_key:
        row: dict[str, Any] = {
            "name": wl.key,
            "cluster_queue": _queue_of(objects, wl),
            "admissions": wl.admissions,
            "admitted_counts": wl.admitted_counts,
            "evictions": wl.evictions,
            "finished_s": wl.finished_s,
            "message": wl.message if _pending(wl, pods) or not wl.active or _reserved_only(wl) else None,
        }
        if wl.deleted_s is not None:
            row["deleted_s"] = wl.deleted_s
        if not wl.active:
            row["active"] = False
        if wl.requeue_count or wl.requeue_at is not None:
            row["requeue_state"] = {"count": wl.requeue_count, "requeue_at_s": wl.requeue_at}
        if wl.check_history:
            row["quota_reservations"] = wl.reservations
            row["admission_checks"] = [
                {
                    "name": c.name,
                    "state": c.state,
                    "message": c.message,
                    "retry_count": c.retry_count,
                    "requeue_after_s": c.requeue_after_s,
                    "provisioning_requests": wl.created_requests.get(c.name, []),
                    "history": wl.check_history.get(c.name, []),
                }
                for c in wl.checks.values()
            ]
            row["events"] = wl.check_events
        rows.append(row)
    return {"cluster_queues": queues, "workloads": rows}


def _pending(wl: KueueWorkload, pods: Mapping[str, PodStatus]) -> bool:
    """Whether the workload waits in its queue: not admitted, not finished, and not one of pods (or a
    PodGroup's) whose pods were all deleted while it waited -- nothing creates those again, and its
    Workload goes with them, leaving the queue (``Manager.DeleteWorkload``, ``pkg/cache/queue/
    manager.go``). A Job's gated pods are created again by its controller; its workload stays."""
    if wl.admitted is not None or wl.finished_s is not None or not wl.active:
        return False
    return wl.controller is not None or not wl.pods or not all(gone(pods, k) for k in wl.pods)


def _reserved_only(wl: KueueWorkload) -> bool:
    """Quota reserved, waiting for its admission checks."""
    return wl.admitted is not None and not wl.admitted.evicting and not wl.started


def _queue_of(objects: KueueObjects, wl: KueueWorkload) -> str | None:
    lq = objects.local_queues.get(f"{wl.namespace}/{wl.queue}")
    return None if lq is None else lq.cluster_queue
