"""What one preemption attempt would change, kept apart from the cluster state it never touches.

kube-scheduler runs its victim search on copies (``preemption.go`` ``DryRunPreemption`` clones
each ``NodeInfo``; ``SelectVictimsOnNode`` removes and re-adds pods on the clone). gpufleet
keeps, per node, the request rows the dry run has taken away (victims) or put (members of a
gang placed in the dry run), so the search reads ``ClusterState`` plus this overlay, and
victims chosen for one gang member stay gone for the next (Volcano's and KAI's gang
preemption simulate the whole job on one session snapshot). It also carries the
PodDisruptionBudgets' ``disruptionsAllowed`` as the dry run uses them up.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.framework import NodeRow


class WhatIf:
    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.gone: set[str] = set()  # pods the dry run evicted
        self.delta: dict[int, tuple[list[int], list[int]]] = {}  # node -> (requested, non-zero) change
        self._budgets: list[tuple[DisruptionBudget, int]] | None = None

    def budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """The PodDisruptionBudgets with what they still allow in this dry run (asked once, lazily:
        the driver counts healthy pods to answer)."""
        if self._budgets is None:
            view = self.state.disruptions
            self._budgets = view.pod_disruption_budgets() if view is not None else []
        return self._budgets

    def row(self, i: int, without: Sequence[Assignment] = ()) -> NodeRow:
        """Node ``i``'s (allocatable, requested, non-zero requested) as the dry run leaves it, and
        with the pods ``without`` gone from it too. A shared GPU whose holders are all gone counts
        as unshared again (``gpus_freed``)."""
        state = self.state
        requested, nonzero = state.requested[i].tolist(), state.nonzero[i].tolist()
        change = self.delta.get(i)
        if change is not None:
            requested, nonzero = _add(requested, change[0]), _add(nonzero, change[1])
        for a in without:
            requested = _add(state.pod_vectors(a.pod)[0].tolist(), requested, -1)
        freed = self.gpus_freed(i, [a.pod.key for a in without], with_gone=True)
        if freed:
            requested[state.resource_column(GPU)] -= freed
        return state.alloc[i].tolist(), requested, nonzero

    def gpus_freed(self, i: int, keys: Sequence[str], with_gone: bool = False) -> int:
        """Shared GPUs of node ``i`` left without holders when the pods ``keys`` go too (counting
        those the dry run's evictions already emptied, ``with_gone``): ``GpuShares.gpus_freed``."""
        shares = self.state.shares
        if shares is None:
            return 0
        on_node = self.state.pods_on[i]
        gone = [key for key in self.gone if key in on_node]
        return shares.gpus_freed(i, [*gone, *keys]) - (0 if with_gone else shares.gpus_freed(i, gone))

    def _shift(self, pod: Pod, i: int, sign: int) -> None:
        req, nonzero = (v.tolist() for v in self.state.pod_vectors(pod))
        old_req, old_nonzero = self.delta.get(i, ([], []))
        self.delta[i] = (_add(req, old_req, sign), _add(nonzero, old_nonzero, sign))

    def put(self, pod: Pod, i: int) -> None:
        """The pod is placed on node ``i`` in the dry run."""
        self._shift(pod, i, +1)

    def evict(self, victims: tuple[Assignment, ...]) -> None:
        """The victims leave their nodes, and each PodDisruptionBudget covering one allows one
        disruption less."""
        for a in victims:
            if a.pod.key not in self.gone:
                self.gone.add(a.pod.key)
                self._shift(a.pod, a.node, -1)
        budgets = self.budgets()
        if budgets:
            self._budgets = [
                (b, allowed - sum(1 for a in victims if covers_for_preemption(b, a.pod)))
                for b, allowed in budgets
            ]


def _add(base: list[int], change: list[int], sign: int = 1) -> list[int]:
    """``sign * base + change`` element by element; ``change`` may be shorter (a resource column
    added since it was taken)."""
    return [sign * b + (change[k] if k < len(change) else 0) for k, b in enumerate(base)]


def covers_for_preemption(budget: DisruptionBudget, pod: Pod) -> bool:
    """``filterPodsWithPDBViolation``'s match: a pod without labels, or a budget with an empty
    selector, matches nothing."""
    return bool(pod.labels) and bool(budget.selector) and budget.covers(pod)
