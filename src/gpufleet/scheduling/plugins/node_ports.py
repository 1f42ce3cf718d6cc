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
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.host_ports import HostPort, conflicts
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
        added: tuple[Placed, ...] = (),
        gone: frozenset[str] = frozenset(),
    ) -> None:
        self.state = state
        self.wanted = wanted
        self.added = added  # pods a what-if put (cluster-autoscaler's trial placements)
        self.gone = gone  # pods a what-if took away (preemption's victims, a drained node's pods)

    def changed(self, added: Sequence[Placed], removed: Sequence[Assignment]) -> WantedPorts:
        return WantedPorts(
            self.state, self.wanted, (*self.added, *added), self.gone | {a.pod.key for a in removed}
        )

    def judge(self, node: int) -> Rejection | None:
        placed = (a.pod for key, a in self.state.pods_on[node].items() if key not in self.gone)
        used = [p for pod in placed for p in pod.host_ports]
        used += [p for pod, i in self.added if i == node for p in pod.host_ports]
        return None if fits_ports(self.wanted, used) else _TAKEN


@register
class NodePorts(PodAwareFilter):
    name = "NodePorts"
    origin = "kube-scheduler"

    def pre_filter_pods(self, ctx: PodContext) -> PodFilterState | None:
        return WantedPorts(ctx.state, ctx.pod.host_ports) if ctx.pod.host_ports else None
