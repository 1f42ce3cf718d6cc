"""cluster-autoscaler's expendable pods, and the pending pods waiting for a preemption.

Mirrors 1.34.5 ``core/utils/expendable.go`` and where upstream uses it:

- a pod is *expendable* when its priority is below ``--expendable-pods-priority-cutoff`` (-10 by default;
  ``IsExpendablePod``: priority set and below the cutoff; a gpufleet pod always has one, the Priority
  admission plugin's, 0 without a class);
- ``RunOnce`` builds its ``ClusterSnapshot`` without the expendable scheduled pods
  (``core/static_autoscaler.go``: ``FilterOutExpendablePods(originalScheduledPods)``, and the actuator's
  snapshot alike, ``core/scaledown/actuation/actuator.go`` ``createSnapshot``): scale-up's
  ``filterOutSchedulable`` and estimates see their room as free, scale-down's utilisation and removal
  simulation ignore them (a node running only expendable pods is empty), and a drain does not evict them:
  they end with their node ("They can be killed without any consideration during scale down and they don't
  cause scale up", the FAQ);
- the pending pods go through ``filterOutExpendable`` first
  (``core/podlistprocessor/filter_out_expendable.go``, ``FilterOutExpendableAndSplit``): an expendable pod
  never triggers a scale-up, and a pod with
  ``status.nominatedNodeName`` of a node the cluster has waits for lower-priority pods' preemption there: it
  is no scale-up candidate and is put on that node in the snapshot whether it fits or not
  (``addPreemptingPodsToSnapshot``, ``ForceAddPod``), so it takes room there for ``filterOutSchedulable``,
  the estimates and scale-down; a pod nominated to a node that is gone stays a candidate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.pod import Pod

#: ``--expendable-pods-priority-cutoff``'s default
DEFAULT_CUTOFF = -10

#: the expendable pods on the cluster's nodes, by node row: not in cluster-autoscaler's ``ClusterSnapshot``
Expendable = Mapping[int, Sequence[Assignment]]
NO_EXPENDABLE: Expendable = {}

_MEMO_KEY = "autoscaling.expendable"


def is_expendable(pod: Pod, cutoff: int) -> bool:
    """``IsExpendablePod``: the pod's priority is below the cutoff."""
    return pod.priority < cutoff


@dataclass(frozen=True)
class _Kept:
    """``expendable_on``'s last answer, and where the cluster's change log stood then."""

    cutoff: int
    change_pos: int
    found: Expendable


def expendable_on(state: ClusterState, cutoff: int) -> Expendable:
    """The expendable pods the cluster's nodes run, by node row (the complement of
    ``FilterOutExpendablePods`` over the scheduled pods). Kept in ``ClusterState.memo`` and brought up to date
    row by row: a pod's priority never changes, and a pod comes or goes only with its node's allocation,
    which the change log names (``ClusterState.changes_since``). None at all while no pod the cluster ever
    held had a priority below the cutoff (``ClusterState.lowest_priority``)."""
    if state.lowest_priority >= cutoff:
        return NO_EXPENDABLE
    kept = state.memo.get(_MEMO_KEY)
    if isinstance(kept, _Kept) and kept.cutoff == cutoff:
        if kept.change_pos == state.change_pos:
            return kept.found
        found = dict(kept.found)
        rows: Iterable[int] = state.changes_since(kept.change_pos).tolist()
    else:
        found, rows = {}, range(len(state.nodes))
    for i in rows:
        on_node = [a for a in state.pods_on[i].values() if a.pod.priority < cutoff]
        if on_node:
            found[i] = on_node
        else:
            found.pop(i, None)
    state.memo[_MEMO_KEY] = _Kept(cutoff, state.change_pos, found)
    return found


def split_pending(
    pods: Sequence[Pod], state: ClusterState, cutoff: int, nominated: Mapping[str, str]
) -> tuple[list[Pod], list[tuple[Pod, int]]]:
    """``FilterOutExpendableAndSplit``: of the pending pods, in order, those that may trigger a scale-up,
    and those waiting for a preemption on the node they are nominated to (``nominated``: each pod's
    ``status.nominatedNodeName``), each with that node's row; the expendable ones are in neither."""
    candidates: list[Pod] = []
    waiting: list[tuple[Pod, int]] = []
    for pod in pods:
        if is_expendable(pod, cutoff):
            continue
        row = state.index.get(nominated.get(pod.key, ""))
        if row is None:  # not nominated, or its node is gone
            candidates.append(pod)
        else:
            waiting.append((pod, row))
    return candidates, waiting
