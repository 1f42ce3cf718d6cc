"""Coscheduling (kubernetes-sigs/scheduler-plugins ``pkg/coscheduling``): all-or-nothing gangs.

- QueueSort: priority, then the PodGroup's creation time (a pod without a group uses its
  own first queue time), then the group's (or pod's) ``namespace/name``: members of a
  group queue together.
- PreFilter: a group with fewer existing members than ``minMember`` is rejected:
  ``pre-filter pod P cannot find enough sibling pods, current pods number: N, minMember of group: M``.
- Permit: a member waits until the assigned members (bound or waiting, not counting
  itself) plus itself reach ``minMember``; then every waiting member is allowed. The wait
  lasts ``scheduleTimeoutSeconds`` or ``permitWaitingTimeSeconds`` (default 60 s).
- PostFilter: when a member cannot be placed and the group is not already satisfied (nor
  within 10 % of it), every waiting member is rejected, so the gang holds nothing:
  ``PodGroup G gets rejected due to Pod P is unschedulable even after PostFilter``.
- Unreserve (a waiting member timed out or was rejected): the other waiting members are
  rejected too.
- Queueing hint (``EventsToRegister``): a pod added moves the pods it rejected, always (the
  PodGroup events it also registers are not modelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, Resource
from gpufleet.scheduling.framework import (
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
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.registry import register

if TYPE_CHECKING:
    from gpufleet.scheduling.queue import QueuedPod

DEFAULT_PERMIT_WAITING_TIME_S = 60.0


@register
class Coscheduling(QueueSort, PreFilter, PostFilter, Permit):
    name = "Coscheduling"
    origin = "scheduler-plugins"

    def __init__(self, permit_waiting_time_s: float = DEFAULT_PERMIT_WAITING_TIME_S):
        self.permit_waiting_time_s = permit_waiting_time_s

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (EventWithHint(ClusterEvent(Resource.POD, ActionType.ADD)),)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Coscheduling:
        return cls(float(args.get("permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_S)))

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        group = gangs.group_of(qp.pod)
        if group is None:
            return (-qp.pod.priority, qp.initial_timestamp, qp.pod.key, qp.seq)
        return (-qp.pod.priority, group.created.submit_at_s, group.key, qp.seq)

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        group = gangs.group_of(ctx.pod)
        if group is None:
            return Status()
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
        return Status()

    def wait_time(self, group: PodGroup) -> float:
        return (
            group.schedule_timeout_s if group.schedule_timeout_s is not None else self.permit_waiting_time_s
        )

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Code, PodGroup | None]:
        """SUCCESS when the gang is complete with this pod (release the waiting), else WAIT."""
        group = gangs.group_of(ctx.pod)
        if group is None:
            return Code.SUCCESS, None
        if gangs.assigned(group, exclude=ctx.pod.key) + 1 >= group.min_member:
            return Code.SUCCESS, group
        return Code.WAIT, group

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        """The status to report and, if the gang must let go, the group whose waiting pods to reject."""
        ctx, gangs = request.ctx, request.gangs
        group = gangs.group_of(ctx.pod)
        if group is None:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, ("can not find pod group",), self.name))
        assigned = gangs.assigned(group, exclude=ctx.pod.key)
        if assigned >= group.min_member or (group.min_member - assigned) / group.min_member <= 0.1:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))
        message = (
            f"PodGroup {group.key} gets rejected due to Pod {ctx.pod.name} "
            "is unschedulable even after PostFilter"
        )
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (message,), self.name), release_group=group)
