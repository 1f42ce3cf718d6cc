"""cluster-autoscaler's soft taints, as its loop puts them on the cluster's nodes (upstream
``core/scaledown/actuation/softtaint.go``; the rule itself is ``autoscaling.soft_taints``).

After each scan's scale-down the unneeded nodes get the soft taint
``DeletionCandidateOfClusterAutoscaler=<unix time>:PreferNoSchedule`` and the nodes needed again lose it, at
most ``maxBulkSoftTaintCount`` (10) a scan (``soft-taint`` and ``soft-taint-removed`` events): the
scheduler's TaintToleration scores those nodes lower. This keeps which nodes carry the taint.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from gpufleet.autoscaling.soft_taints import (
    DELETION_CANDIDATE_TAINT_KEY,
    deletion_candidate_taint,
    has_deletion_candidate_taint,
    update_soft_deletion_taints,
    with_deletion_candidate,
    without_deletion_candidate,
)
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.control.port import NodeGroupPort


class SoftTaints:
    """The DeletionCandidate taints it keeps on ``port``'s nodes, at most ``budget``
    (``--max-bulk-soft-taint-count``) changed a scan; ``start_time_s``: the Unix time of the clock's 0
    (what the taints' values read); its changes logged to ``events``."""

    def __init__(
        self, port: NodeGroupPort, budget: int, start_time_s: float, events: list[ScaleEvent]
    ) -> None:
        self.port = port
        self.budget = budget
        self.start_time_s = start_time_s
        self.events = events
        #: the nodes with the soft DeletionCandidate taint (None: not read from the cluster yet)
        self._tainted: set[str] | None = None
        #: ``ClusterState.membership`` when the nodes gone were last dropped from ``_tainted``
        self._membership: tuple[int, int] | None = None
        #: ``ClusterState.static_version`` when every node of ``_tainted`` was last seen to carry the taint
        self._carried_at: int | None = None

    def update(self, now: float, unneeded_since: Mapping[str, float], deleting: AbstractSet[str]) -> bool:
        """``updateSoftDeletionTaints``, after each scan's scale-down: the unneeded nodes of its groups get
        the DeletionCandidate taint, its groups' other nodes lose it, nodes being deleted left alone, within
        ``--max-bulk-soft-taint-count``; each scan that changes some logs a ``soft-taint`` and/or
        ``soft-taint-removed`` event. True when some were left for the next scan."""
        budget = self.budget
        if budget == 0:
            return False
        state = self.port.state
        tainted = self._tainted
        if tainted is None:  # (the cluster's own: a snapshot's nodes may carry it)
            tainted = {
                n for n in state.node_names() if has_deletion_candidate_taint(state.nodes[state.index[n]])
            }
            self._tainted = tainted
        index = state.index
        if state.membership != self._membership:  # a deleted node took its taint
            tainted.difference_update([n for n in tainted if n not in index])
            self._membership = state.membership
        if not tainted and not unneeded_since:
            return False
        # every unneeded node marked and no other: nothing to clean or mark (most scans); a node's taints move
        # only with the nodes' static facts (``static_version``)
        if tainted == unneeded_since.keys() and (
            self._carried_at == state.static_version
            or all(has_deletion_candidate_taint(state.nodes[index[n]]) for n in tainted)
        ):
            self._carried_at = state.static_version
            return False
        groups = [g.nodes for g in self.port.node_groups.values() if g.pool.autoscaled]

        def selected(name: str) -> bool:
            return any(name in nodes for nodes in groups)

        unneeded = [state.nodes[index[n]] for n in sorted(unneeded_since) if selected(n)]
        needed = [state.nodes[index[n]] for n in sorted(tainted - unneeded_since.keys()) if selected(n)]
        update = update_soft_deletion_taints(unneeded, needed, deleting, budget)
        for name in update.clean:
            self.port.set_node_taints(name, without_deletion_candidate(state.nodes[state.index[name]]))
            tainted.discard(name)
        unix = self.start_time_s + now
        for name in update.mark:
            self.port.set_node_taints(name, with_deletion_candidate(state.nodes[state.index[name]], unix))
            tainted.add(name)
        if update.clean:
            self.events.append(ScaleEvent(now, "soft-taint-removed", None, update.clean))
        if update.mark:
            taint = deletion_candidate_taint(unix)
            reason = f"{DELETION_CANDIDATE_TAINT_KEY}={taint.value}:{taint.effect}"
            self.events.append(ScaleEvent(now, "soft-taint", None, update.mark, reason=reason))
        return update.skipped > 0
