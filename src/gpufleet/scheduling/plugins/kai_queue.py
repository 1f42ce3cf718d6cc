"""KaiQueueLimit (gpufleet's, after KAI Scheduler): a job runs only within its queue's limits.

Mirrors ``NVIDIA/KAI-Scheduler: pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go``
(``resultsOverLimit``, ``isOverLimit``) and ``actions/utils/input_jobs.go``:

* a pod's queue is its ``kai.scheduler/queue`` label (``default-queue`` without one); a queue
  that does not exist, that is not a leaf, or whose parents do not reach a root, takes no jobs
  (KAI skips them without a message; gpufleet says why);
* for the queue and each of its ancestors, per resource (GPUs -- a ``gpu-fraction`` pod counts its
  fraction --, CPU in millicores, memory in MB of 10^6 bytes) whose ``limit`` is not ``-1``: the
  job is refused when ``limit < allocated + requested``, where ``allocated`` is what the pods of
  that queue's subtree hold on nodes (bound or assumed) and ``requested`` what the job's pods not
  yet placed ask (the whole pod group, as KAI allocates a job's tasks together), with KAI's message
  ``<queue> quota has reached the allowable limit of GPUs. Limit is 2 GPUs, currently 2 GPUs
  allocated and workload requested 1 GPUs``.

The queues come as the plugin's args (``{"queues": {name: KaiQueue}}``), set by the simulator's
KAI scheduler profile (``control.kai``).

Queueing hint (gpufleet's): a pod deleted (what frees a queue's allocation) moves the pods it rejected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpufleet.model.kai import DEFAULT_QUEUE, QUEUE_LABEL, UNLIMITED, KaiQueue
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.scheduling.events import POD_DELETED, EventWithHint
from gpufleet.scheduling.framework import Code, PodContext, PreFilter, Status
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.registry import register

#: (Queue resource, how KAI names it in messages, the unit of messages, Queue units per message unit)
_RESOURCES = (
    ("gpu", "GPUs", "GPUs", 1.0),
    ("cpu", "CPU cores", "cores", 1000.0),  # millicores
    ("memory", "memory", "GB", 1000.0),  # MB
)


def queue_of(pod: Pod) -> str:
    return pod.labels.get(QUEUE_LABEL) or DEFAULT_QUEUE


def _share(pods: Iterable[Pod]) -> dict[str, float]:
    """GPUs (fractions counted), millicores and MB (10^6 bytes) the pods ask."""
    out = {"gpu": 0.0, "cpu": 0.0, "memory": 0.0}
    for pod in pods:
        share = pod.gpu_share
        out["gpu"] += pod.requests.get(GPU, 0) + (share.gpu_equivalent if share is not None else 0.0)
        out["cpu"] += pod.requests.get(CPU, 0)
        out["memory"] += pod.requests.get(MEMORY, 0) / 1e6
    return out


def _number(value: float) -> str:
    return f"{value:g}"


@register
class KaiQueueLimit(PreFilter):
    name = "KaiQueueLimit"

    def __init__(self, queues: Mapping[str, KaiQueue] | None = None):
        self.queues = dict(queues or {})
        self.leaves = {n for n in self.queues if not any(q.parent == n for q in self.queues.values())}
        self.subtrees = {n: self._subtree(n) for n in self.queues}

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> KaiQueueLimit:
        return cls(args.get("queues"))

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (POD_DELETED,)

    def _chain(self, name: str) -> list[KaiQueue] | str:
        """The queue and its ancestors, or why KAI skips its jobs."""
        if name not in self.queues:
            return f'queue "{name}" does not exist: KAI Scheduler skips the job'
        if name not in self.leaves:
            return f'queue "{name}" is not a leaf queue: KAI Scheduler skips the job'
        chain = [self.queues[name]]
        while (parent := chain[-1].parent) is not None:
            if parent not in self.queues or any(q.name == parent for q in chain):
                return f'queue "{name}" has no root (parent "{parent}"): KAI Scheduler skips the job'
            chain.append(self.queues[parent])
        return chain

    def _subtree(self, queue: str) -> set[str]:
        names = {queue}
        grew = True
        while grew:
            more = {n for n, q in self.queues.items() if q.parent in names} - names
            names |= more
            grew = bool(more)
        return names

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        pod = ctx.pod
        chain = self._chain(queue_of(pod))
        if isinstance(chain, str):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (chain,), self.name)
        assigned = ctx.state.assignments
        group = gangs.group_of(pod)
        job = [pod]
        if group is not None:
            job += [
                gangs.pods[k]
                for k in sorted(gangs.members.get(group.key, ()))
                if k != pod.key and k not in assigned
            ]
        requested = _share(job)
        placed = [a.pod for a in assigned.values() if a.pod.scheduler_name == pod.scheduler_name]
        for queue in chain:
            limited = [r for r in _RESOURCES if queue.quota(r[0]).limit != UNLIMITED and requested[r[0]] > 0]
            if not limited:
                continue
            names = self.subtrees[queue.name]
            allocated = _share(p for p in placed if queue_of(p) in names)
            for resource, what, unit, per in limited:
                limit = queue.quota(resource).limit
                if limit < allocated[resource] + requested[resource]:
                    message = (
                        f"{queue.name} quota has reached the allowable limit of {what}. "
                        f"Limit is {_number(limit / per)} {unit}, currently "
                        f"{_number(allocated[resource] / per)} {unit} allocated and workload requested "
                        f"{_number(requested[resource] / per)} {unit}"
                    )
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), self.name)
        return Status()
