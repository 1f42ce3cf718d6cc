"""The node groups as cluster-autoscaler's scale-up sees them, for the pending pods' scale-up and a
ProvisioningRequest's alike (upstream ``core/scaleup/orchestrator/orchestrator.go``'s inputs): each autoscaled
group's option, its template with the DaemonSet pods it would run (``daemonset.GetDaemonSetPodsForNode``) and
the nodes it may add; the groups backed off; the nodes no pod goes to; the room ``--max-nodes-total`` leaves;
the cluster-wide resource limits left (``core/scaleup/resource/manager.go``, ``Manager.ResourcesLeft``); and
``--balance-similar-node-groups``' settings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from operator import is_not

from gpufleet.autoscaling.expanders import pool_priority
from gpufleet.autoscaling.node_group_balancing import Balancing
from gpufleet.autoscaling.resource_limits import cluster_maxima, cluster_totals, resources_left
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.control.cluster_autoscaler_health import upcoming_nodes
from gpufleet.control.port import NodeGroup, NodeGroupPort
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.simulation import AutoscalerSettings
from gpufleet.workloads.daemonset import daemon_should_run


class ScaleUpOptions:
    """``port``'s node groups as options under ``settings``; ``expander_priorities``: the priority expander's
    ConfigMap (priority, pool-name regex)."""

    def __init__(
        self,
        port: NodeGroupPort,
        settings: AutoscalerSettings,
        expander_priorities: Sequence[tuple[int, str]],
    ) -> None:
        self.port = port
        self.settings = settings
        self.expander_priorities = expander_priorities
        #: the nodes of no group (``resources_left``) as of the cluster's (``static_version``,
        #: ``allocatable_version``), each followed by the allocatable, capacity and labels it had (replaced,
        #: never changed in place), and what they have in all
        self._groupless: tuple[tuple[int, int], list[object], Counter[str]] = ((-1, -1), [], Counter())
        #: the nodes of no group as of ``ClusterState.membership`` (``_groupless_nodes``)
        self._members: tuple[tuple[int, int], list[Node]] = ((-1, -1), [])
        #: the last ``resources_left`` and what it was worked out from: each group's template and size, and
        #: what the nodes of no group have
        self._left: tuple[list[tuple[Node, int]], Counter[str], dict[str, int]] | None = None

    def groups(
        self, room: int, now: float, going: AbstractSet[str], long_unready: AbstractSet[str]
    ) -> tuple[list[PoolOption], frozenset[str], frozenset[int]]:
        """The autoscaled groups as scale-up sees them, those backed off, and the nodes no pod goes to: those
        ``going``, and the upcoming ones already registered (GPUs not yet), whose template copy stands for
        them (``RunOnce`` takes ``registeredUpcoming`` out of the snapshot); a launch registered without its
        GPUs 15 minutes before is ``Unready``, neither upcoming nor taken out (``long_unready``:
        ``UnreadyNodes.long_unready``)."""
        groups, state = self.port.node_groups, self.port.state
        options = [self._option(g, room, long_unready) for g in groups.values() if g.pool.autoscaled]
        backed_off = frozenset(o.name for o in options if groups[o.name].backed_off(now))
        registered = {
            n for g in groups.values() if g.pool.autoscaled for n in g.launching if n not in long_unready
        }
        exclude = frozenset(state.index[n] for n in going | registered if n in state.index)
        return options, backed_off, exclude

    def _daemons(self, template: Node) -> tuple[Pod, ...]:
        """The DaemonSet pods that would run on a node of this template (``daemon_should_run``)."""
        return tuple(pod for pod in self.port.daemonset_templates() if daemon_should_run(pod, template))

    def room(self) -> int:
        """The nodes ``--max-nodes-total`` leaves room for (every group's size, and the nodes of none)."""
        limit = self.settings.max_nodes_total
        if limit is None:
            return 1 << 30
        alive = sum(len(g.nodes) for g in self.port.node_groups.values()) + len(self._groupless_nodes())
        return max(limit - alive, 0)

    def _groupless_nodes(self) -> list[Node]:
        """The cluster's nodes of no group, in row order, found again when a node joined or left
        (``ClusterState.membership``: a node's group never changes)."""
        state = self.port.state
        if self._members[0] != state.membership:
            nodes = state.nodes
            active = state.active_indices().tolist()
            self._members = state.membership, [nodes[i] for i in active if nodes[i].pool is None]
        return self._members[1]

    def resources_left(self) -> dict[str, int]:
        """``Manager.ResourcesLeft``: each cluster-wide limit less what the cluster has, each group counted
        as its size (launched, not deleted) times its template, each node of no group as itself. The nodes
        of no group are counted again when one of them joined, left, or has new labels or resources (a node's
        are replaced, not changed, so it has the same object); the answer is kept while the groups' templates
        and sizes and what those nodes have are as they were."""
        state = self.port.state
        groups = [(g.pool.template, len(g.nodes)) for g in self.port.node_groups.values()]
        version, seen, others = self._groupless
        if version != (state.static_version, state.allocatable_version):  # (a node joined, left or changed)
            groupless = self._groupless_nodes()
            now: list[object] = [x for n in groupless for x in (n, n.allocatable, n.capacity, n.labels)]
            if len(now) != len(seen) or any(map(is_not, now, seen)):
                others = cluster_totals((node, 1) for node in groupless)  # one joined, left or changed
            self._groupless = (state.static_version, state.allocatable_version), now, others
        kept = self._left
        if kept is None or kept[1] is not others or kept[0] != groups:  # (a template: the same object)
            kept = self._left = groups, others, resources_left(cluster_maxima(self.settings), groups, others)
        return dict(kept[2])

    def balancing(self, room: int) -> Balancing | None:
        """``--balance-similar-node-groups``: the labels ignored, and the nodes one scale-up may add in
        all."""
        settings = self.settings
        if not settings.balance_similar_node_groups:
            return None
        return Balancing(settings.balancing_ignore_labels, min(room, settings.max_nodes_per_scale_up or room))

    def _option(self, group: NodeGroup, room: int, long_unready: AbstractSet[str]) -> PoolOption:
        max_nodes = group.pool.max if group.pool.max is not None else len(group.nodes)
        return PoolOption(
            group.name,
            group.pool.template,
            self._daemons(group.pool.template),
            min(max_nodes - len(group.nodes), room, self.settings.max_nodes_per_scale_up or room),
            upcoming_nodes(group, long_unready),
            group.pool.price_per_hour,
            pool_priority(group.name, self.expander_priorities),
            tuple(group.slices_for(group.pool.template.name)),
            len(group.nodes),
            max_nodes,
            group.pool.zero_or_max_node_scaling,
        )
