"""Coscheduling (kubernetes-sigs/scheduler-plugins ``pkg/coscheduling``): all-or-nothing gangs.

- QueueSort (``Less``): priority, then the PodGroup's creation time (``GetCreationTimestamp``: a dump's
  PodGroup's ``creationTimestamp`` on the run's clock, ``sim.simulation``; a pod without a group, or
  whose group does not exist, uses its own first queue time), then the pod's ``namespace/name``
  (``GetNamespacedName``: a group's members, of one creation time, queue together in name order).
  A group that failed (PostFilter let it go, or Unreserve rejected its waiting pods) sorts by the
  time it last failed instead, until Permit lets it go on (``GetCreationTimestamp`` with
  ``lastFailedSchedulePG``: no head-of-line blocking by a gang that cannot be placed); a pod's
  place is worked out when it enters the active queue.
- PreFilter (``PodGroupManager.PreFilter``), each refusal UnschedulableAndUnresolvable: a group
  backed off (``podGroup ns/g failed recently``: with ``podGroupBackoffSeconds``, 0 by default, a
  group PostFilter let go, all its ``minMember`` pods existing, for that long); a group with
  fewer existing members than ``minMember`` (``pre-filter pod P cannot find enough sibling pods,
  current pods number: N, minMember of group: M``); one whose members without scheduling gates are
  fewer than ``minMember`` (``pre-filter pod P cannot proceed due to gated pods in the same
  PodGroup``); one with ``minResources`` the cluster cannot hold (``CheckClusterResource``: those
  resources and ``pods: minMember``, taken node by node from what each has free, the group's own
  assigned pods counted as free: ``resource gap: map[cpu:2]``, the quantities left uncovered, where
  upstream prints Go's struct of each Quantity). (The check is made for every member: upstream
  skips it for a group that passed within ``permitWaitingTimeSeconds``, ``permittedPG``, not
  modelled.)
- Permit: a pod whose group does not exist is rejected (``PodGroup not found``: kube-scheduler's
  FitError of one node, ``0/1 nodes are available: 1 PodGroup not found.``). A member waits until
  the assigned members (bound or waiting, not counting itself) plus itself reach ``minMember``;
  then every waiting member is allowed. The wait lasts ``scheduleTimeoutSeconds`` or
  ``permitWaitingTimeSeconds`` (default 60 s).
- PostFilter: when a member cannot be placed and the group is not already satisfied (nor
  within ``podGroupRejectPercentage`` of it, 10 % by default), every waiting member is rejected,
  so the gang holds nothing:
  ``PodGroup G gets rejected due to Pod P is unschedulable even after PostFilter``.
- Unreserve (a waiting member timed out or was rejected): the other waiting members are
  rejected too.
- Queueing hint (``EventsToRegister``): a pod added moves the pods it rejected, always (the
  PodGroup events it also registers are not modelled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS, format_units
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, Resource
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    Permit,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    PreFilter,
    QueueSort,
    Status,
)
from gpufleet.scheduling.gangs import GangView, group_key
from gpufleet.scheduling.registry import register

if TYPE_CHECKING:
    from gpufleet.scheduling.queue import QueuedPod

DEFAULT_PERMIT_WAITING_TIME_S = 60.0
WAIT = Status(Code.WAIT)
#: ``defaultPodGroupRejectPercentage``
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10


@register
class Coscheduling(QueueSort, PreFilter, PostFilter, Permit):
    name = "Coscheduling"
    origin = "scheduler-plugins"

    def __init__(
        self,
        permit_waiting_time_s: float = DEFAULT_PERMIT_WAITING_TIME_S,
        reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE,
        backoff_s: float = 0.0,
    ):
        self.permit_waiting_time_s = permit_waiting_time_s
        #: ``pgBackoff`` (``podGroupBackoffSeconds``; 0: none)
        self.backoff_s = backoff_s
        #: ``backedOffPG``: until when each group backed off is refused at PreFilter
        self.backed_off: dict[str, float] = {}
        #: ``lastFailedSchedulePG``: when each group last failed (PostFilter, Unreserve), until Permit lets
        #: it go on
        self.last_failed: dict[str, float] = {}
        #: ``pgRejectThreshold``: ``podGroupRejectPercentage`` / 100
        self.reject_threshold = reject_percentage / 100.0

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (EventWithHint(ClusterEvent(Resource.POD, ActionType.ADD)),)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Coscheduling:
        return cls(
            float(args.get("permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_S)),
            int(args.get("podGroupRejectPercentage", DEFAULT_POD_GROUP_REJECT_PERCENTAGE)),
            float(args.get("podGroupBackoffSeconds", 0)),
        )

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        group = gangs.group_of(qp.pod)
        if group is None:
            return (-qp.pod.priority, qp.initial_timestamp, qp.pod.key, qp.seq)
        return (-qp.pod.priority, *self.group_rank(group, qp.pod), qp.seq)

    def group_rank(self, group: PodGroup, pod: Pod) -> tuple[float, str]:
        """Where a member of ``group`` sorts after its priority: the group's creation time (or the time it
        last failed, ``lastFailedSchedulePG``), then the pod's ``namespace/name``."""
        return self.last_failed.get(group.key, group.created.submit_at_s), pod.key

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        group = gangs.group_of(ctx.pod)
        if group is None:
            return Status()
        until = self.backed_off.get(group.key)
        if until is not None and ctx.now <= until:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"podGroup {group.key} failed recently",), self.name
            )
        count = gangs.member_count(group)
        if count < group.min_member:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (
                    f"pre-filter pod {ctx.pod.name} cannot find enough sibling pods, "
                    f"current pods number: {count}, minMember of group: {group.min_member}",
                ),
                self.name,
            )
        if count - gangs.gated_count(group) < group.min_member:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"pre-filter pod {ctx.pod.name} cannot proceed due to gated pods in the same PodGroup",),
                self.name,
            )
        if group.min_resources is None:
            return Status()
        gap = cluster_resource_gap(ctx.state, gangs, {**group.min_resources, PODS: group.min_member}, group)
        if gap:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"resource gap: {resource_map(gap)}",), self.name
            )
        return Status()

    def back_off(self, group: PodGroup, now: float) -> None:
        """``BackoffPodGroup``: the group is refused at PreFilter for ``podGroupBackoffSeconds`` (go-cache's
        ``Add``: not while an earlier backoff lasts)."""
        until = self.backed_off.get(group.key)
        if until is None or now > until:
            self.backed_off[group.key] = now + self.backoff_s

    def wait_time(self, group: PodGroup) -> float:
        return (
            group.schedule_timeout_s if group.schedule_timeout_s is not None else self.permit_waiting_time_s
        )

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        """``Permit``: SUCCESS for a pod of no group, or when the gang is complete with this pod (release
        the waiting), else WAIT; a pod whose group does not exist is rejected (``PodGroupNotFound``)."""
        group = gangs.group_of(ctx.pod)
        if group is None:
            if group_key(ctx.pod) is None:
                return SUCCESS, None
            return Status(Code.UNSCHEDULABLE, ("PodGroup not found",), self.name), None
        if gangs.assigned(group, exclude=ctx.pod.key) + 1 >= group.min_member:
            self.last_failed.pop(group.key, None)  # ClearPodGroupScheduleFailure
            return SUCCESS, group
        return WAIT, group

    def unreserve(self, group: PodGroup, now: float) -> None:
        """``Unreserve`` (its waiting siblings the scheduler rejects): ``MarkPodGroupScheduleFailure``."""
        self.last_failed[group.key] = now

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        """The status to report and, if the gang must let go, the group whose waiting pods to reject."""
        ctx, gangs = request.ctx, request.gangs
        group = gangs.group_of(ctx.pod)
        if group is None:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, ("can not find pod group",), self.name))
        assigned = gangs.assigned(group, exclude=ctx.pod.key)
        gap = (group.min_member - assigned) / group.min_member
        if assigned >= group.min_member or gap <= self.reject_threshold:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))
        if self.backoff_s > 0 and gangs.member_count(group) >= group.min_member:
            self.back_off(group, ctx.now)
        self.last_failed[group.key] = ctx.now  # MarkPodGroupScheduleFailure
        message = (
            f"PodGroup {group.key} gets rejected due to Pod {ctx.pod.name} "
            "is unschedulable even after PostFilter"
        )
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (message,), self.name), release_group=group)


def cluster_resource_gap(
    state: ClusterState, gangs: GangView, request: Mapping[str, int], group: PodGroup
) -> dict[str, int]:
    """``CheckClusterResource``: what of ``request`` the nodes cannot cover, each node's free room
    (``getNodeResource``: allocatable less what its pods other than ``group``'s request, the pods
    counted as one each) taken from it in turn; empty when covered. A node short of something (more
    requested than allocatable) adds to the gap."""
    left = dict(request)
    if not left:
        return left
    active = state.active_indices()
    requested = state.requested[active].copy()
    position = {int(i): k for k, i in enumerate(active.tolist())}
    for key in sorted(gangs.members.get(group.key, ())):
        a = state.assignments.get(key)
        if a is not None and a.node in position:
            requested[position[a.node]] -= state.pod_vectors(a.pod)[0][: requested.shape[1]]
    free = state.alloc[active] - requested
    for row in free:
        for name in list(left):
            col = state.res_index.get(name)
            rest = left[name] - (int(row[col]) if col is not None else 0)
            if rest <= 0:
                del left[name]
            else:
                left[name] = rest
        if not left:
            break
    return left


def resource_map(resources: Mapping[str, int]) -> str:
    """A resource list as Go's ``%v`` prints a map, its keys sorted, each quantity as it is written."""
    return (
        "map[" + " ".join(f"{name}:{format_units(name, resources[name])}" for name in sorted(resources)) + "]"
    )
