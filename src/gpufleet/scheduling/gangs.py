"""Which pods belong to which PodGroup, and how many of them hold a node.

The view the Coscheduling plugin reads (scheduler-plugins ``pkg/coscheduling/core``): a
group's members are the existing pods labelled ``scheduling.x-k8s.io/pod-group: <name>``
in the group's namespace; *assigned* members are those bound or assumed on a node.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod

if TYPE_CHECKING:
    from gpufleet.model.workloads import PodGroup


def group_key(pod: Pod) -> str | None:
    name = pod.pod_group
    return None if name is None else f"{pod.namespace}/{name}"


class GangView:
    def __init__(self, state: ClusterState, groups: dict[str, PodGroup] | None = None):
        self.state = state
        self.groups: dict[str, PodGroup] = dict(groups or {})
        self.members: dict[str, set[str]] = defaultdict(set)
        self.pods: dict[str, Pod] = {}

    def add_group(self, group: PodGroup) -> None:
        self.groups[group.key] = group

    def add_pod(self, pod: Pod) -> None:
        key = group_key(pod)
        if key is not None:
            self.members[key].add(pod.key)
            self.pods[pod.key] = pod

    def remove_pod(self, pod: Pod) -> None:
        key = group_key(pod)
        if key is not None:
            self.members[key].discard(pod.key)
            self.pods.pop(pod.key, None)

    def group_of(self, pod: Pod) -> PodGroup | None:
        key = group_key(pod)
        return None if key is None else self.groups.get(key)

    def member_count(self, group: PodGroup) -> int:
        return len(self.members.get(group.key, ()))

    def gated_count(self, group: PodGroup) -> int:
        """The group's members that still carry scheduling gates."""
        pods = self.pods
        return sum(1 for m in self.members.get(group.key, ()) if pods[m].scheduling_gates)

    def assigned(self, group: PodGroup, exclude: str | None = None) -> int:
        return sum(1 for m in self.members.get(group.key, ()) if m != exclude and m in self.state.assignments)
