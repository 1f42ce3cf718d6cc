"""The pods assigned to nodes, grouped by (namespace, labels), for the plugins that look at other pods.

InterPodAffinity and PodTopologySpread ask "which pods of these namespaces match this selector, and
on which nodes"; upstream walks every pod of every ``NodeInfo``. gpufleet keeps the assigned pods
grouped by their namespace and label set (pods of one workload share one), so a selector is matched
once per group, and apart the pods that carry inter-pod (anti-)affinity terms (upstream's
``NodeInfo.PodsWithAffinity``), those grouped by their terms too. Each group keeps, per node index,
how many of its pods are there, and how many of them are not terminating (what the plugins count for
every node at once, as upstream's PreFilter states keep it with ``AddPod`` / ``RemovePod``).
``ClusterState`` makes it from its assignments when a plugin first asks (``ClusterState.placed``) and
keeps it current on every assign and unassign after; an assignment tells it when it starts terminating.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpufleet.model.pod_affinity import PodAffinity, Selector, selects

if TYPE_CHECKING:
    from gpufleet.cluster.state import Assignment

GroupKey = tuple[str, tuple[tuple[str, str], ...]]


def _no_counts() -> npt.NDArray[np.int64]:
    return np.zeros(0, dtype=np.int64)


def _bumped(counts: npt.NDArray[np.int64], node: int, delta: int) -> npt.NDArray[np.int64]:
    if node >= len(counts):
        grown = np.zeros(max(node + 1, 2 * len(counts)), dtype=np.int64)
        grown[: len(counts)] = counts
        counts = grown
    counts[node] += delta
    return counts


def padded(counts: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.int64]:
    """``counts`` as ``size`` nodes (those past its end: none)."""
    out = np.zeros(size, dtype=np.int64)
    kept = counts[:size]
    out[: len(kept)] = kept
    return out


@dataclass
class LabelGroup:
    """The assigned pods of one namespace and label set (and, in ``PodIndex.affinity_groups``, one set of
    inter-pod terms): who they are and how many are on each node."""

    namespace: str
    labels: dict[str, str]
    #: the pods' own ``podAffinity`` / ``podAntiAffinity`` (in ``PodIndex.affinity_groups`` only)
    affinity: PodAffinity | None = None
    pods: dict[str, Assignment] = field(default_factory=dict)
    #: per node index, the group's pods there (nodes past its end: none) ...
    held: npt.NDArray[np.int64] = field(default_factory=_no_counts)
    #: ... and those of them not terminating
    live: npt.NDArray[np.int64] = field(default_factory=_no_counts)

    def put(self, a: Assignment, delta: int) -> None:
        node = a.node
        if node < len(self.held) and node < len(self.live):  # the arrays reach the node: in place
            self.held[node] += delta
            if not a.terminating:
                self.live[node] += delta
            return
        self.held = _bumped(self.held, node, delta)
        if not a.terminating:
            self.live = _bumped(self.live, node, delta)

    def add(self, a: Assignment, key: str) -> None:
        self.pods[key] = a
        self.put(a, 1)

    def remove(self, a: Assignment) -> bool:
        """Takes ``a`` out; True when the group is left empty."""
        if self.pods.pop(a.pod.key, None) is not None:
            self.put(a, -1)
        return not self.pods


class PodIndex:
    def __init__(self) -> None:
        self.groups: dict[GroupKey, LabelGroup] = {}
        #: pods with ``spec.affinity.podAffinity`` or ``podAntiAffinity`` ...
        self.with_affinity: dict[str, Assignment] = {}
        #: ... grouped by their namespace, labels and those terms
        self.affinity_groups: dict[tuple[GroupKey, PodAffinity], LabelGroup] = {}

    @staticmethod
    def _key(a: Assignment) -> GroupKey:
        return a.pod.namespace, tuple(sorted(a.pod.labels.items()))

    def add(self, a: Assignment, pod_key: str) -> None:
        """Counts ``a``, the assignment of the pod whose key is ``pod_key``."""
        pod = a.pod
        key = self._key(a)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = LabelGroup(pod.namespace, dict(pod.labels))
        group.add(a, pod_key)
        if pod.pod_affinity is not None:
            self.with_affinity[pod_key] = a
            with_terms = self.affinity_groups.get((key, pod.pod_affinity))
            if with_terms is None:
                with_terms = LabelGroup(pod.namespace, dict(pod.labels), pod.pod_affinity)
                self.affinity_groups[key, pod.pod_affinity] = with_terms
            with_terms.add(a, pod_key)

    def remove(self, a: Assignment) -> None:
        pod = a.pod
        key = self._key(a)
        group = self.groups.get(key)
        if group is not None and group.remove(a):
            del self.groups[key]
        if pod.pod_affinity is not None:
            with_terms = self.affinity_groups.get((key, pod.pod_affinity))
            if with_terms is not None and with_terms.remove(a):
                del self.affinity_groups[key, pod.pod_affinity]
        self.with_affinity.pop(pod.key, None)

    def terminating_changed(self, a: Assignment) -> None:
        """``a.terminating`` flipped: it leaves (or rejoins) the counts of live pods."""
        key, terms = self._key(a), a.pod.pod_affinity
        with_terms = None if terms is None else self.affinity_groups.get((key, terms))
        for group in (self.groups.get(key), with_terms):
            if group is not None and a.pod.key in group.pods:
                group.live = _bumped(group.live, a.node, -1 if a.terminating else 1)

    def matching(self, selector: Selector, namespaces: frozenset[str] | None = None) -> Iterator[Assignment]:
        """The assigned pods whose labels ``selector`` selects, of ``namespaces`` (None: any)."""
        for group in self.groups.values():
            if (namespaces is None or group.namespace in namespaces) and selects(selector, group.labels):
                yield from group.pods.values()

    def live_counts(self, selector: Selector, namespace: str, size: int) -> npt.NDArray[np.int64]:
        """Per node index (``size`` of them), the pods of ``namespace`` that ``selector`` selects and
        that are not terminating (``countPodsMatchSelector``: an empty selector selects none)."""
        counts = np.zeros(size, dtype=np.int64)
        if selector:
            for group in self.groups.values():
                if group.namespace == namespace and selects(selector, group.labels):
                    counts += padded(group.live, size)
        return counts
