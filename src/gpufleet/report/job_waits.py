"""How long jobs waited for their GPUs, per job size class.

`job_wait_figures` computes the summary's optional ``jobs`` field from its ``pods``, as
`latency.latency_figures` does for ``latency``: a pure function of the summary.

A job is a gang (the pods of one PodGroup, ``pod_group`` in their records) or a pod without
one; its GPUs are its pods' GPUs summed (a 2 x 8-GPU gang is one 16-GPU job). It is submitted
when its first pod is created and starts when its last pod is bound, so its wait is what a
batch scheduler reports as start minus submit time (Slurm's ``Start - Submit``). A job still
waiting at the end of the run counts its wait so far (a lower bound) and is counted as
``waiting``; a pod deleted before it was bound belongs to no job, and jobs without GPUs are left
out. A dump's pod is created at its ``creationTimestamp`` (``created_s``, negative before the run), so
a job pending in the snapshot counts the wait before it; a job with a pod already running when the run
began (``running_at_start``) started before the run, when the dump does not say, and is left out. Size
classes: ``<1`` (a fraction), ``1``, ``2-4``, ``5-8``, ``9-16``, ``>16`` GPUs; each with the count, the
mean, nearest-rank p50 and p95, and the maximum wait. (The share of the provisioned GPU-hours allocated is
``totals.gpu_allocated_pct``.)

Only jobs count: the pods of a Job, a training operator's kind (PyTorchJob, JobSet, ...) or a pod of
its own. The replicas of a Deployment, ReplicaSet, StatefulSet, DaemonSet or LeaderWorkerSet
(`REPLICA_KINDS`, by the pod record's ``workload``) are not jobs: their pending-to-working times are
in ``latency.by_workload``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from gpufleet.report.latency import DIGITS, nearest_rank, workload_of

#: Kinds whose pods are replicas of a service, not jobs: their waits are in ``latency.by_workload``.
REPLICA_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "LeaderWorkerSet")

#: (label, upper bound in GPUs, inclusive), smallest first; ``<1`` holds what is below 1.
SIZE_CLASSES: tuple[tuple[str, float], ...] = (
    ("<1", 1.0),
    ("1", 1.0),
    ("2-4", 4.0),
    ("5-8", 8.0),
    ("9-16", 16.0),
    (">16", float("inf")),
)


def size_class(gpus: float) -> str:
    """The label of the size class a job of ``gpus`` GPUs belongs to."""
    return "<1" if gpus < 1 else next(label for label, top in SIZE_CLASSES[1:] if gpus <= top)


def _jobs(summary: Mapping[str, Any]) -> list[tuple[float, float, bool]]:
    """(GPUs, wait in seconds, still waiting) of every job, grouped by name."""
    members: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for pod in summary["pods"]:
        if pod.get("bound_s") is None and pod.get("deleted_s") is not None:
            continue  # deleted before it was bound: never a job
        if is_replica(pod):
            continue
        group = pod.get("pod_group")
        members[f"group {group}" if group else f"pod {pod['name']}"].append(pod)
    end = float(summary["end_time_s"])
    jobs = []
    for _, pods in sorted(members.items()):
        gpus = sum(float(p.get("gpus") or 0.0) for p in pods)
        if gpus <= 0 or any(p.get("running_at_start") for p in pods):
            continue
        submitted = min(float(p["created_s"]) for p in pods)
        bound = [p.get("bound_s") for p in pods]
        waiting = any(b is None for b in bound)
        started = end if waiting else max(float(b) for b in bound if b is not None)
        jobs.append((gpus, round(started - submitted, DIGITS), waiting))
    return jobs


def is_replica(pod: Mapping[str, Any]) -> bool:
    """Whether the pod is a replica of a Deployment, StatefulSet, DaemonSet, ... (`REPLICA_KINDS`)."""
    return workload_of(pod).split("/", 1)[0] in REPLICA_KINDS


def job_wait_figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The ``jobs`` field of ``summary``::

    {"by_gpus": [{"gpus": "1", "count", "waiting", "mean_wait_s", "p50_wait_s", "p95_wait_s",
                  "max_wait_s"}, ...]}  # only the classes that have jobs, smallest first
    """
    waits: dict[str, list[float]] = defaultdict(list)
    still: dict[str, int] = defaultdict(int)
    for gpus, wait, waiting in _jobs(summary):
        label = size_class(gpus)
        waits[label].append(wait)
        still[label] += waiting
    classes = []
    for label, _ in SIZE_CLASSES:
        values = waits.get(label)
        if not values:
            continue
        classes.append(
            {
                "gpus": label,
                "count": len(values),
                "waiting": still[label],
                "mean_wait_s": round(sum(values) / len(values), DIGITS),
                "p50_wait_s": nearest_rank(values, 50),
                "p95_wait_s": nearest_rank(values, 95),
                "max_wait_s": max(values),
            }
        )
    return {"by_gpus": classes}
