"""Volcano's scheduler (volcano-sh/volcano ``pkg/scheduler``) as gpufleet runs it: a scheduler process
named ``volcano`` whose one profile is kube-scheduler's filters and scores with two plugins of Volcano's
on top, built by ``volcano_scheduler`` when a scenario holds any Volcano object (``kube.load``).

- ``VolcanoGang``, the ``gang`` plugin (``pkg/scheduler/plugins/gang/gang.go``) on gpufleet's gang
  machinery (it is Coscheduling's QueueSort, PreFilter and Permit): the pods of a Volcano PodGroup (pods
  annotated ``scheduling.k8s.io/group-name``) are bound only when at least ``minMember`` of them can be
  allocated, else none is, as ``allocate`` discards a session's statement for a job that is not ready.
  Unlike Coscheduling there is no 10 % slack: a gang short of one member lets go of all. Its members
  then say what the PodGroup's ``Unschedulable`` condition says (``OnSessionClose``)::

      1/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; Pending:
      1 Unschedulable, 2 Schedulable. Origin reason is job-worker-2: 0/2 nodes are unavailable: 2
      Insufficient nvidia.com/gpu.

  (``JobInfo.FitError``; gpufleet counts every member of such a gang as Pending in the task histogram.)
  A gang with fewer members than ``minMember`` is not tried: ``Not enough valid tasks for
  gang-scheduling, valid: N, min: M`` (``validJobFn``). A pod no node takes says Volcano's
  ``FitErrors.Error``: ``0/N nodes are unavailable: <histogram>.`` (kube-scheduler's reasons, as
  Volcano's ``predicates`` plugin calls kube-scheduler's filters).
- ``VolcanoQueue``, a Queue's ``capability`` (the ``proportion`` plugin's ``JobEnqueueableFn`` and
  ``AllocatableFn``): a pod is placed only while the requests of the pods placed in its queue, with
  its own, stay within the capability for every resource both name; otherwise ``queue resource
  quota insufficient: insufficient cpu``. A pod's queue is its Volcano PodGroup's ``spec.queue``, else
  its ``scheduling.volcano.sh/queue-name`` annotation (how the PodGroup controller fills it for a
  Deployment's pods), else ``default``, the queue Volcano always creates. A queue that does not exist
  holds its pods Pending (``allocate`` skips a job whose queue is not found).
  Upstream checks a job's ``minResources`` before its pods exist (``enqueue``); gpufleet checks pod by
  pod, which the gang makes all or nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.model.pod import Pod
from gpufleet.model.resources import Resources
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.events import POD_DELETED, EventWithHint
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    PodContext,
    PostFilterRequest,
    PostFilterResult,
    PreFilter,
    Status,
    Wording,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.coscheduling import Coscheduling
from gpufleet.scheduling.registry import register

VOLCANO_SCHEDULER = "volcano"
#: ``QueueNameAnnotationKey``: a pod's queue when no Volcano PodGroup names one
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
DEFAULT_QUEUE = "default"  # created by the scheduler's cache at start (``createIfNotExists``)
NO_NODE_AVAILABLE = "0/{n} nodes are unavailable"


@register
class VolcanoGang(Coscheduling, Wording):
    name = "VolcanoGang"
    origin = "volcano"

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> VolcanoGang:
        return cls()

    def group_rank(self, group: PodGroup, pod: Pod) -> tuple[float, str]:
        """A job's tasks together: the PodGroup's creation time and its ``namespace/name``, then arrival;
        not Coscheduling's order by pod name, nor its ``lastFailedSchedulePG``."""
        return group.created.submit_at_s, group.key

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        """Coscheduling's Permit, but a pod whose PodGroup is not found is let go (not Coscheduling's
        PodGroupNotFound)."""
        if gangs.group_of(ctx.pod) is None:
            return SUCCESS, None
        return super().permit(ctx, gangs)

    def unreserve(self, group: PodGroup, now: float) -> None:
        """Nothing (Coscheduling's ``MarkPodGroupScheduleFailure`` is not Volcano's)."""

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        group = gangs.group_of(ctx.pod)
        if group is None or (valid := gangs.member_count(group)) >= group.min_member:
            return Status()
        message = f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {group.min_member}"
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), self.name)

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        """A gang not ready lets go of every member allocated in this session (``allocate``'s
        ``stmt.Discard``), whatever it lacks."""
        ctx, gangs = request.ctx, request.gangs
        group = gangs.group_of(ctx.pod)
        if group is None:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))
        schedulable, members = gangs.assigned(group, exclude=ctx.pod.key), gangs.member_count(group)
        if schedulable >= group.min_member or members < group.min_member:  # ready, or not valid: not tried
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))
        pending = Counter({"Unschedulable": members - schedulable, "Schedulable": schedulable})
        reasons = ", ".join(sorted(f"{n} {reason}" for reason, n in pending.items() if n))
        message = (
            f"{group.min_member - schedulable}/{members} tasks in gang unschedulable: pod group is not "
            f"ready, {members} Pending, {group.min_member} minAvailable; Pending: {reasons}. "
            f"Origin reason is {ctx.pod.name}"
        )
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (message,), self.name), release_group=group)

    def fit_error(
        self, num_nodes: int, histogram: Counter[str], pre_filter_msg: str, post_filter_msg: str
    ) -> str:
        """A job-level refusal (the queue's, the gang's validity: a PreFilter's) as upstream's PodGroup
        says it; else ``FitErrors.Error``, after the gang's message when there is one."""
        if pre_filter_msg:
            return pre_filter_msg
        entries = sorted(f"{count} {reason}" for reason, count in histogram.items() if count)
        fit = NO_NODE_AVAILABLE.format(n=num_nodes) + (f": {', '.join(entries)}." if entries else "")
        return f"{post_filter_msg}: {fit}" if post_filter_msg else fit

    def gang_rejected(self, message: str) -> str:
        return message


def queue_of(pod_annotations: Mapping[str, str], group_queue: str | None) -> str:
    return group_queue or pod_annotations.get(QUEUE_ANNOTATION) or DEFAULT_QUEUE


@register
class VolcanoQueue(PreFilter):
    name = "VolcanoQueue"
    origin = "volcano"

    def __init__(self, capabilities: Mapping[str, Resources | None] | None = None):
        #: every queue that exists, with its capability (None: no limit)
        self.capabilities: dict[str, Resources | None] = {DEFAULT_QUEUE: None, **(capabilities or {})}

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> VolcanoQueue:
        return cls(args.get("queues"))

    def events_to_register(self) -> Sequence[EventWithHint]:
        """Queueing hint (gpufleet's): a pod deleted (what frees a queue's allocation)."""
        return (POD_DELETED,)

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        pod = ctx.pod
        group = gangs.group_of(pod)
        queue = queue_of(pod.annotations, group.queue if group is not None else None)
        if queue not in self.capabilities:
            message = f'queue "{queue}" not found: the volcano scheduler skips its pods'
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), self.name)
        capability = self.capabilities[queue]
        if not capability:
            return Status()
        wanted = [pod]
        if group is not None and gangs.assigned(group) == 0:  # enqueue: the gang's minimum at once
            others = sorted(k for k in gangs.members.get(group.key, ()) if k != pod.key)
            wanted += [gangs.pods[k] for k in others[: group.min_member - 1]]
        demand: Counter[str] = Counter()
        for member in wanted:
            demand.update({r: member.requests.get(r, 0) for r in capability})
        if not +demand:
            return Status()
        used: Counter[str] = Counter()
        for key, assignment in ctx.state.assignments.items():
            other = assignment.pod
            if key == pod.key or assignment.terminating:
                continue
            other_group = gangs.group_of(other)
            if queue_of(other.annotations, other_group.queue if other_group is not None else None) == queue:
                used.update({r: other.requests.get(r, 0) for r in capability})
        short = [r for r in sorted(capability) if demand[r] > 0 and used[r] + demand[r] > capability[r]]
        if not short:
            return Status()
        message = "queue resource quota insufficient: " + ", ".join(f"insufficient {r}" for r in short)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), self.name)


def volcano_scheduler(capabilities: Mapping[str, Resources | None]) -> SchedulerConfig:
    """The ``volcano`` scheduler process: kube-scheduler's default plugins (Volcano's ``predicates``
    and ``nodeorder`` call them) with Volcano's gang for queue order, PreFilter, PostFilter and Permit,
    and its queues' capabilities."""
    plugins = {
        "multiPoint": PluginSet((PluginRef(VolcanoGang.name), PluginRef(VolcanoQueue.name))),
        "queueSort": PluginSet((PluginRef(VolcanoGang.name),), ("*",)),
        "postFilter": PluginSet((PluginRef(VolcanoGang.name),), ("*",)),
    }
    args: dict[str, dict[str, object]] = {VolcanoQueue.name: {"queues": dict(capabilities)}}
    profile = ProfileConfig(VOLCANO_SCHEDULER, plugins, args)
    return SchedulerConfig(VOLCANO_SCHEDULER, [profile])
