"""DaemonSet (``pkg/controller/daemon``): one pod on each node whose labels and taints admit it
(``NodeShouldRunDaemonPod``), named ``<daemonset>-<node>``, pinned to its node with required node
affinity on ``metadata.name`` and given the tolerations the DaemonSet controller adds
(``pkg/controller/daemon/util``).

Of a cluster snapshot, it adopts its pods there (``getNodesToDaemonPods``): a node with an active one
has its daemon pod; one whose pod Succeeded or Failed gets a new one, as ``podsShouldBeOnNode``
deletes such a pod and creates another."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Toleration, tolerated
from gpufleet.model.owned import Owned
from gpufleet.model.pod import OwnerRef, Pod, Requirement, SelectorTerm
from gpufleet.model.workloads import DaemonSet, PodGroup
from gpufleet.workloads import register_kind

DAEMONSET_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", effect=NO_EXECUTE),
    Toleration("node.kubernetes.io/unreachable", "Exists", effect=NO_EXECUTE),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/unschedulable", "Exists", effect=NO_SCHEDULE),
)


def daemon_should_run(template: Pod, node: Node) -> bool:
    """``NodeShouldRunDaemonPod``: node selector/affinity match and no untolerated taint."""
    tolerations = template.tolerations + DAEMONSET_TOLERATIONS
    if not template.matches_node_selector(node):
        return False
    return all(t.effect not in (NO_SCHEDULE, NO_EXECUTE) or tolerated(t, tolerations) for t in node.taints)


@register_kind(DaemonSet)
class DaemonSetController:
    kind: ClassVar[str] = "DaemonSet"
    per_node: ClassVar[bool] = True

    def __init__(self, daemonset: DaemonSet):
        self.daemonset = daemonset
        self.covered: set[str] = set()

    @property
    def key(self) -> str:
        return self.daemonset.key

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """A pod for each node that should run one and has none yet."""
        return [pod for node in nodes if (pod := self.pod_for(node)) is not None]

    def pod_for(self, node: Node) -> Pod | None:
        ds = self.daemonset
        if node.name in self.covered or not daemon_should_run(ds.template, node):
            return None
        self.covered.add(node.name)
        pin = SelectorTerm(fields=(Requirement("metadata.name", "In", (node.name,)),))
        pod = ds.template.stamped(f"{ds.name}-{node.name}", OwnerRef("DaemonSet", ds.name))
        return replace(
            pod,
            namespace=ds.namespace,
            required_terms=(pin,),
            tolerations=ds.template.tolerations + DAEMONSET_TOLERATIONS,
        )

    def adopt(self, owned: Owned) -> None:
        """The nodes its active pods of the snapshot are on or pinned to are covered."""
        self.covered |= {node for p in owned.pods if p.active and (node := p.node) is not None}

    def node_added(self, node: Node) -> list[Pod]:
        pod = self.pod_for(node)
        return [] if pod is None else [pod]

    def pod_groups(self) -> list[PodGroup]:
        return []

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """A DaemonSet pod that ended is not replaced (its node stays covered)."""
        return False

    def suspended(self, pod: Pod) -> None:
        """Nothing suspends a DaemonSet."""
