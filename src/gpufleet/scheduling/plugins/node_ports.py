"""NodePorts (``pkg/scheduler/framework/plugins/nodeports``), Kubernetes 1.34.10.

PreFilter: a pod without host ports (``util.GetHostPorts``: app containers and sidecar init
containers, ``kube.host_ports``) is Skip, and the Filter does not run for it (the cycle stays on the
cached path). Filter: a node where one of the pod's host ports collides with a port a pod assigned
there already uses (``NodeInfo.UsedPorts``, ``HostPortInfo.CheckConflict``, ``model.host_ports``:
``0.0.0.0`` conflicts with every IP) is rejected, resolvably (``Unschedulable``: preemption may free
the port), with ``node(s) didn't have free ports for the requested pod ports``. The pods on a node
decide, so it is a pod-aware filter (``scheduling.pod_aware``): DefaultPreemption's dry run asks it
with the victims gone, whose ports are then free, and the pods DefaultPreemption nominated to a node
hold their ports there while pods of no higher priority are filtered (``addNominatedPods``).

Queueing hints (``EventsToRegister``): a node added (always); a pod deleted from a node (or nominated
to one) that held one of the pod's ports (``isSchedulableAfterPodDeleted``).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.host_ports import HostPort, conflicts
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import (
    NODE_ADD,
    ActionType,
    ClusterEvent,
    EventPod,
    EventWithHint,
    HintError,
    QueueingHint,
    Resource,
    as_objects,
)
from gpufleet.scheduling.framework import Code, PodContext
from gpufleet.scheduling.pod_aware import Placed, PodAwareFilter, PodFilterState, Rejection
from gpufleet.scheduling.registry import register

REASON = "node(s) didn't have free ports for the requested pod ports"
_TAKEN: Rejection = (REASON, Code.UNSCHEDULABLE)


def fits_ports(wanted: tuple[HostPort, ...], used: list[HostPort]) -> bool:
    """``fitsPorts``: none of the wanted ports conflicts with those in use."""
    return not any(conflicts(port, used) for port in wanted)


class WantedPorts(PodFilterState):
    """PreFilter's state: the pod's host ports, judged against the pods on each node."""

    def __init__(
        self,
        state: ClusterState,
        wanted: tuple[HostPort, ...],
        added: dict[int, list[HostPort]] | None = None,
        gone: frozenset[str] = frozenset(),
    ) -> None:
        self.state = state
        self.wanted = wanted
        #: the host ports of the pods a what-if put, by row (cluster-autoscaler's trial placements, and
        #: the pods its estimate put on template copies, rows past the cluster's)
        self.added = added if added is not None else {}
        self.gone = gone  # pods a what-if took away (preemption's victims, a drained node's pods)

    def changed(self, added: Sequence[Placed], removed: Sequence[Assignment]) -> WantedPorts:
        copy = WantedPorts(
            self.state,
            self.wanted,
            {row: list(ports) for row, ports in self.added.items()},
            self.gone | {a.pod.key for a in removed},
        )
        copy.absorb((), added)
        return copy

    def absorb(
        self, nodes: Sequence[Node], added: Sequence[Placed], removed: Sequence[Assignment] = ()
    ) -> None:
        for pod, row in added:
            if pod.host_ports:
                self.added.setdefault(row, []).extend(pod.host_ports)
        if removed:
            self.gone = self.gone | {a.pod.key for a in removed}

    def judge(self, node: int) -> Rejection | None:
        on_node = self.state.pods_on[node].items() if node < len(self.state.pods_on) else ()
        used = [p for key, a in on_node if key not in self.gone for p in a.pod.host_ports]
        used += self.added.get(node, ())
        return None if fits_ports(self.wanted, used) else _TAKEN


@register
class NodePorts(PodAwareFilter):
    name = "NodePorts"
    origin = "kube-scheduler"

    def pre_filter_pods(self, ctx: PodContext) -> PodFilterState | None:
        return WantedPorts(ctx.state, ctx.pod.host_ports) if ctx.pod.host_ports else None

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (
            EventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE), after_pod_deleted),
            EventWithHint(NODE_ADD),
        )


def after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterPodDeleted``: the deleted pod held a node (or was nominated to one) and one of
    the pod's host ports."""
    deleted, _ = as_objects(EventPod, old, None)
    if deleted is None:
        raise HintError("expected the deleted Pod, got None")
    if not deleted.node_name and not deleted.nominated_node_name:
        return QueueingHint.SKIP
    if fits_ports(pod.host_ports, list(deleted.pod.host_ports)):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE
