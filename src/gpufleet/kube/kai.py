"""KAI Scheduler's ``Queue`` (``scheduling.run.ai/v2``, cluster-scoped), read strictly.

Fields follow ``NVIDIA/KAI-Scheduler: pkg/apis/scheduling/v2/{queue_types,resources}.go``:
``displayName``, ``parentQueue``, ``priority``, ``resources.{gpu,cpu,memory}.{quota,limit,
overQuotaWeight}`` (numbers), ``preemptMinRuntime``, ``reclaimMinRuntime``. gpufleet enforces
``limit`` (the proportion plugin's ``isOverLimit``, on the queue and each ancestor); the division of
resources beyond ``quota`` by ``priority`` and ``overQuotaWeight`` and the reclaim of a queue's
deserved quota are not modelled: warnings where they would matter (a positive ``quota``; a
``priority`` or an ``overQuotaWeight`` of a queue that has siblings), as are the min-runtimes. A queue
whose ``parentQueue`` does not exist, or that is part of a parent cycle, takes no jobs (KAI skips
them, ``actions/utils/input_jobs.go``): a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, invalid, join
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.kai import (
    DEFAULT_PRIORITY,
    DEFAULT_QUEUE,
    KAI_SCHEDULER,
    OLD_QUEUE_LABEL,
    QUEUE_LABEL,
    UNLIMITED,
    KaiQueue,
    KaiQuota,
)
from gpufleet.model.pod import Pod


class _Resource(SpecModel):
    quota: float = 0.0
    over_quota_weight: float = 0.0
    limit: float = 0.0


class _Resources(SpecModel):
    gpu: _Resource = Field(default_factory=_Resource)
    cpu: _Resource = Field(default_factory=_Resource)
    memory: _Resource = Field(default_factory=_Resource)


class _QueueSpec(SpecModel):
    display_name: str | None = None
    parent_queue: str | None = None
    resources: _Resources | None = None
    priority: int | None = None
    preempt_min_runtime: str | None = None
    reclaim_min_runtime: str | None = None


def queue(meta: Meta, body: Mapping[str, Any], report: Reporter) -> KaiQueue:
    spec = validate(_QueueSpec, body.get("spec") or {}, report, "spec") or _QueueSpec()
    report.unmodelled_fields(spec.given(), ("preemptMinRuntime", "reclaimMinRuntime"), "spec")
    resources: dict[str, KaiQuota] = {}
    if spec.resources is not None:
        for name in ("gpu", "cpu", "memory"):
            r: _Resource = getattr(spec.resources, name)
            path = f"spec.resources.{name}"
            for field, value in (("quota", r.quota), ("limit", r.limit)):
                if value < UNLIMITED:
                    report.error(f"{path}.{field}", invalid(value, "must be -1 (unlimited) or at least 0"))
            if r.quota > 0:
                report.not_modelled(
                    f"{path}.quota",
                    note="a deserved quota is not reclaimed from other queues; only limit is enforced",
                )
            resources[name] = KaiQuota(r.quota, r.limit, r.over_quota_weight)
    return KaiQueue(
        meta.name,
        spec.parent_queue or None,
        spec.priority if spec.priority is not None else DEFAULT_PRIORITY,
        resources,
    )


def check_references(queues: Mapping[str, KaiQueue], reports: Mapping[str, Reporter]) -> None:
    """A parent that does not exist, or a cycle of parents: KAI skips that queue's jobs."""
    for name in sorted(queues):
        seen = [name]
        parent = queues[name].parent
        while parent is not None and parent in queues and parent not in seen:
            seen.append(parent)
            parent = queues[parent].parent
        report = reports[name]
        mine = queues[name]
        if any(q.parent == mine.parent for other, q in queues.items() if other != name):
            if mine.priority != DEFAULT_PRIORITY:
                report.not_modelled("spec.priority", note="over-quota resources are not divided among queues")
            for resource, quota in sorted(mine.resources.items()):
                if quota.over_quota_weight:
                    report.not_modelled(
                        f"spec.resources.{resource}.overQuotaWeight",
                        note="over-quota resources are not divided among queues",
                    )
        if parent is not None and parent not in queues:
            report.warn(
                "spec.parentQueue", f'no Queue "{parent}": KAI Scheduler skips the jobs of this queue'
            )
        elif parent is not None:
            report.warn(
                "spec.parentQueue", "the queues' parents form a cycle: " + " -> ".join([*seen, parent])
            )


def check_pod(pod: Pod, report: Reporter, prefix: str) -> None:
    """A ``kai-scheduler`` pod with the older label ``runai/queue`` but not ``kai.scheduler/queue``:
    today's pod grouper reads only the latter (``constants.DefaultQueueLabel``)."""
    if (
        pod.scheduler_name == KAI_SCHEDULER
        and OLD_QUEUE_LABEL in pod.labels
        and QUEUE_LABEL not in pod.labels
    ):
        report.warn(
            join(prefix, f"metadata.labels.{OLD_QUEUE_LABEL}"),
            f'KAI Scheduler reads the label {QUEUE_LABEL}: this pod goes to queue "{DEFAULT_QUEUE}"',
        )
