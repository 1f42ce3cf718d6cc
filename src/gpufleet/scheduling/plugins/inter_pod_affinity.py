"""InterPodAffinity (``pkg/scheduler/framework/plugins/interpodaffinity``), Kubernetes 1.34.10.

PreFilter (``filtering.go``) counts, per topology pair (key, value), the placed pods that match
all the incoming pod's required affinity terms, those matching each of its required anti-affinity
terms, and the placed pods whose required anti-affinity terms match the incoming pod; it returns
Skip when the pod has no required terms and no placed pod's anti-affinity matches it. Filter, in
this order:

- affinity: every term's topology key on the node, with a matching pod in the node's domain; else
  ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable), except the first pod
  of a group: no pod matches any term anywhere and the pod matches all its own terms;
- anti-affinity: a matching pod in the node's domain of a term gives ``node(s) didn't match pod
  anti-affinity rules`` (Unschedulable);
- existing pods' anti-affinity: any of the node's label pairs counted gives ``node(s) didn't
  satisfy existing pods anti-affinity rules`` (Unschedulable).

Score (``scoring.go``): per topology pair, the weights of the incoming pod's preferred terms
matched by placed pods (anti-affinity negative), plus, for each placed pod, ``hardPodAffinityWeight``
for each of its required affinity terms and the weights of its preferred terms that match the
incoming pod (skipped with ``ignorePreferredTermsOfExistingPods`` when the incoming pod has no
preferred terms); a node scores the pairs of its labels; NormalizeScore maps min..max to 0..100.
PreScore skips when no pair was counted. Namespace labels are the API server's
``kubernetes.io/metadata.name`` (gpufleet reads no Namespace objects). Terms are matched once per
label group of placed pods (with their own terms: per group of one namespace, labels and terms), and
the group's pods per node summed per topology pair over node columns (``pod_aware``).

Queueing hints (``EventsToRegister``, ``plugin.go``): a pod on a node added or relabelled to match all
the pod's required affinity terms, or deleted or relabelled away having matched all its anti-affinity
terms (``isSchedulableAfterPodChange``); a node added with an affinity term's topology key (any node,
for a pod with anti-affinity), or relabelled in such a key (``isSchedulableAfterNodeChange``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from gpufleet.cluster.pod_index import padded
from gpufleet.cluster.state import BoolArray, ClusterState, IntArray
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.pod_affinity import (
    NAMESPACE_NAME_LABEL,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from gpufleet.scheduling.events import (
    ActionType,
    ClusterEvent,
    EventPod,
    EventWithHint,
    HintError,
    QueueingHint,
    Resource,
    as_new,
    as_objects,
)
from gpufleet.scheduling.framework import MAX_NODE_SCORE, ArgsError, Code, PodContext
from gpufleet.scheduling.pod_aware import (
    CountingState,
    PodAwareFilter,
    PodAwareScore,
    Rejection,
    domain_column,
    domain_sums,
)
from gpufleet.scheduling.registry import register

AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

Pair = tuple[str, str]


def namespace_labels(state: ClusterState, namespace: str) -> dict[str, str]:
    """``GetNamespaceLabelsSnapshot``: the Namespace's labels (the API server's
    ``kubernetes.io/metadata.name`` always among them)."""
    return {**state.namespace_labels.get(namespace, {}), NAMESPACE_NAME_LABEL: namespace}


@lru_cache(maxsize=4096)
def _resolved(affinity: PodAffinity, namespace: str, labels: tuple[tuple[str, str], ...]) -> PodAffinity:
    return affinity.resolved(namespace, dict(labels))


def affinity_of(pod: Pod) -> PodAffinity | None:
    """The pod's affinity terms as the scheduler sees them (label keys merged, namespaces filled)."""
    if pod.pod_affinity is None:
        return None
    return _resolved(pod.pod_affinity, pod.namespace, tuple(sorted(pod.labels.items())))


def _term_matches(state: ClusterState, term: PodAffinityTerm, pod: Pod) -> bool:
    return term.matches(pod.namespace, pod.labels, namespace_labels(state, pod.namespace))


def matches_all(
    state: ClusterState, terms: Sequence[PodAffinityTerm], namespace: str, labels: dict[str, str]
) -> bool:
    """``podMatchesAllAffinityTerms``: false for no terms."""
    ns_labels = namespace_labels(state, namespace)
    return bool(terms) and all(t.matches(namespace, labels, ns_labels) for t in terms)


def _count_pairs(counts: Counter[Pair], state: ClusterState, key: str, per_node: IntArray) -> None:
    """``_bump`` by 1 for each pod counted in ``per_node`` (pods per node index), all at once."""
    sums = domain_sums(state, key, per_node)
    if sums is not None:
        values = domain_column(state, key).values
        for code in np.flatnonzero(sums).tolist():
            counts[key, values[code]] += int(sums[code])


def _by_code(counts: Counter[Pair], state: ClusterState, key: str) -> IntArray:
    """The counts of ``key``'s pairs per value code of its ``domain_column``."""
    column = domain_column(state, key)
    out = np.zeros(len(column.values), dtype=np.int64)
    for (k, value), n in counts.items():
        code = column.code_of.get(value) if k == key else None
        if code is not None:
            out[code] = n
    return out


def _bump(counts: Counter[Pair], node: Node, key: str, value: int) -> None:
    """``topologyToMatchedTermCount.update``: nothing when the node lacks the key; zeros dropped."""
    if key in node.labels:
        pair = (key, node.labels[key])
        counts[pair] += value
        if counts[pair] == 0:
            del counts[pair]


@dataclass
class AffinityState(CountingState):
    """``preFilterState``: the three counts, for one incoming pod."""

    state: ClusterState
    pod: Pod
    affinity: PodAffinity
    existing_anti: Counter[Pair]
    affinity_counts: Counter[Pair]
    anti_counts: Counter[Pair]

    def update_with_pod(self, placed: Pod, node: Node, multiplier: int) -> None:
        """``preFilterState.updateWithPod`` (AddPod / RemovePod)."""
        theirs = affinity_of(placed)
        if theirs is not None:
            for term in theirs.anti_required:
                if _term_matches(self.state, term, self.pod):
                    _bump(self.existing_anti, node, term.topology_key, multiplier)
        if matches_all(self.state, self.affinity.required, placed.namespace, placed.labels):
            for term in self.affinity.required:
                _bump(self.affinity_counts, node, term.topology_key, multiplier)
        for term in self.affinity.anti_required:
            if _term_matches(self.state, term, placed):
                _bump(self.anti_counts, node, term.topology_key, multiplier)

    def clone(self) -> AffinityState:
        return replace(
            self,
            existing_anti=Counter(self.existing_anti),
            affinity_counts=Counter(self.affinity_counts),
            anti_counts=Counter(self.anti_counts),
        )

    def passes(self, nodes: IntArray) -> BoolArray:
        """``judge`` over node columns: each pair's count looked up by the nodes' value codes."""
        state = self.state
        ok = np.ones(len(nodes), dtype=bool)
        if self.affinity.required:
            found = np.ones(len(nodes), dtype=bool)
            for term in self.affinity.required:
                column = domain_column(state, term.topology_key)
                ok &= column.has[nodes]
                found &= _by_code(self.affinity_counts, state, term.topology_key)[column.codes[nodes]] > 0
            if self.affinity_counts or not matches_all(
                state, self.affinity.required, self.pod.namespace, self.pod.labels
            ):
                ok &= found
        anti = [t.topology_key for t in self.affinity.anti_required] if self.anti_counts else []
        existing = {k for k, _ in self.existing_anti}
        for counts, keyed in ((self.anti_counts, anti), (self.existing_anti, existing)):
            for key in keyed:
                column = domain_column(state, key)
                ok &= ~(column.has[nodes] & (_by_code(counts, state, key)[column.codes[nodes]] > 0))
        return ok

    def judge(self, node: int) -> Rejection | None:
        labels = self.node_at(node).labels
        if not self.satisfies_affinity(labels):
            return AFFINITY_NOT_MATCH, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        if self.anti_counts and any(
            self.anti_counts[(t.topology_key, labels[t.topology_key])] > 0
            for t in self.affinity.anti_required
            if t.topology_key in labels
        ):
            return ANTI_AFFINITY_NOT_MATCH, Code.UNSCHEDULABLE
        if self.existing_anti and any(self.existing_anti[pair] > 0 for pair in labels.items()):
            return EXISTING_ANTI_AFFINITY_NOT_MATCH, Code.UNSCHEDULABLE
        return None

    def satisfies_affinity(self, labels: dict[str, str]) -> bool:
        """``satisfyPodAffinity``, with the first-pod-of-a-group rule."""
        pods_exist = True
        for term in self.affinity.required:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity_counts[(term.topology_key, value)] <= 0:
                pods_exist = False
        if pods_exist:
            return True
        return not self.affinity_counts and matches_all(
            self.state, self.affinity.required, self.pod.namespace, self.pod.labels
        )


def _placed_with_affinity(state: ClusterState) -> Iterable[tuple[IntArray, PodAffinity]]:
    """The placed pods with affinity terms, per group of one namespace, labels and terms: how many per
    node index, and those terms as the scheduler sees them."""
    for ((namespace, labels), affinity), group in state.placed.affinity_groups.items():
        yield padded(group.held, state.size), _resolved(affinity, namespace, labels)


@register
class InterPodAffinity(PodAwareFilter, PodAwareScore):
    name = "InterPodAffinity"
    origin = "kube-scheduler"

    def __init__(
        self,
        hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
        ignore_preferred_terms_of_existing_pods: bool = False,
    ) -> None:
        self.hard_weight = hard_pod_affinity_weight
        self.ignore_existing_preferred = ignore_preferred_terms_of_existing_pods

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> InterPodAffinity:
        """``InterPodAffinityArgs`` as ``ValidateInterPodAffinityArgs`` checks them."""
        for key in args:
            if key not in ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"):
                raise ArgsError(f'unknown field "{key}"')
        weight = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ArgsError(f"hardPodAffinityWeight: Invalid value: {weight!r}: must be an integer")
        if not 0 <= weight <= 100:
            raise ArgsError(f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0, 100]")
        ignore = args.get("ignorePreferredTermsOfExistingPods", False)
        if not isinstance(ignore, bool):
            raise ArgsError(
                f"ignorePreferredTermsOfExistingPods: Invalid value: {ignore!r}: must be a boolean"
            )
        return cls(weight, ignore)

    # -- PreFilter and Filter ----------------------------------------------------------------
    def pre_filter_pods(self, ctx: PodContext) -> AffinityState | None:
        state, pod = ctx.state, ctx.pod
        if pod.pod_affinity is None and not state.placed_with_affinity:
            return None  # no terms of its own, and no placed pod's anti-affinity to respect: Skip
        affinity = affinity_of(pod) or PodAffinity()
        existing_anti: Counter[Pair] = Counter()
        for held, theirs in _placed_with_affinity(state):
            for term in theirs.anti_required:
                if _term_matches(state, term, pod):
                    _count_pairs(existing_anti, state, term.topology_key, held)
        if not existing_anti and not affinity.required and not affinity.anti_required:
            return None
        s = AffinityState(state, pod, affinity, existing_anti, Counter(), Counter())
        if affinity.required or affinity.anti_required:
            for group in state.placed.groups.values():
                ns_labels = namespace_labels(state, group.namespace)
                all_affinity = matches_all(state, affinity.required, group.namespace, group.labels)
                anti = [
                    t for t in affinity.anti_required if t.matches(group.namespace, group.labels, ns_labels)
                ]
                if not all_affinity and not anti:
                    continue
                held = padded(group.held, state.size)
                for term in affinity.required if all_affinity else ():
                    _count_pairs(s.affinity_counts, state, term.topology_key, held)
                for term in anti:
                    _count_pairs(s.anti_counts, state, term.topology_key, held)
        return s

    def pre_filter_what_if(self, ctx: PodContext) -> AffinityState | None:
        """Where the cluster's pods make PreFilter Skip, a state with nothing counted: the pods the
        what-if puts may still carry required anti-affinity that matches the pod (the existing pods'
        anti-affinity check, once ``absorb`` counted them)."""
        found = self.pre_filter_pods(ctx)
        if found is not None:
            return found
        affinity = affinity_of(ctx.pod) or PodAffinity()
        return AffinityState(ctx.state, ctx.pod, affinity, Counter(), Counter(), Counter())

    def events_to_register(self) -> Sequence[EventWithHint]:
        pod_changes = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        return (
            EventWithHint(ClusterEvent(Resource.POD, pod_changes), after_pod_change),
            EventWithHint(
                ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), after_node_change
            ),
        )

    # -- PreScore, Score, NormalizeScore --------------------------------------------------------
    def scores_pod(self, ctx: PodContext) -> bool:
        affinity = ctx.pod.pod_affinity
        own = affinity is not None and bool(affinity.preferred or affinity.anti_preferred)
        return own or (not self.ignore_existing_preferred and ctx.state.placed_with_affinity > 0)

    def topology_score(self, ctx: PodContext) -> dict[str, IntArray]:
        """``preScoreState.topologyScore``: per topology key, the summed weight per value code of its
        ``domain_column`` (a key only where some pod counted is on a node carrying it)."""
        state, pod = ctx.state, ctx.pod
        affinity = affinity_of(pod) or PodAffinity()
        scores: dict[str, IntArray] = {}

        def add(term: PodAffinityTerm, weight: int, held: IntArray) -> None:
            sums = domain_sums(state, term.topology_key, held)
            if sums is not None:
                key = term.topology_key
                scores[key] = scores[key] + weight * sums if key in scores else weight * sums

        own: list[tuple[WeightedPodAffinityTerm, int]] = [(w, 1) for w in affinity.preferred]
        own += [(w, -1) for w in affinity.anti_preferred]
        if own:
            for group in state.placed.groups.values():
                ns_labels = namespace_labels(state, group.namespace)
                hits = [
                    (w, sign) for w, sign in own if w.term.matches(group.namespace, group.labels, ns_labels)
                ]
                if hits:
                    held = padded(group.held, state.size)
                    for w, sign in hits:
                        add(w.term, sign * w.weight, held)
        elif self.ignore_existing_preferred:
            return scores
        for held, theirs in _placed_with_affinity(state):
            if self.hard_weight > 0:
                for term in theirs.required:
                    if _term_matches(state, term, pod):
                        add(term, self.hard_weight, held)
            for w in theirs.preferred:
                if _term_matches(state, w.term, pod):
                    add(w.term, w.weight, held)
            for w in theirs.anti_preferred:
                if _term_matches(state, w.term, pod):
                    add(w.term, -w.weight, held)
        return scores

    def pod_scores(self, ctx: PodContext, nodes: IntArray) -> IntArray | None:
        scores = self.topology_score(ctx)
        if not scores:
            return None
        raw = np.zeros(len(nodes), dtype=np.int64)
        for key, sums in scores.items():
            column = domain_column(ctx.state, key)
            raw += np.where(column.has[nodes], sums[column.codes[nodes]], 0)
        return normalize(raw)


def normalize(raw: IntArray) -> IntArray:
    """``NormalizeScore``: min..max onto 0..MaxNodeScore, truncated (all 0 when they are equal)."""
    if not len(raw):
        return np.zeros(0, dtype=np.int64)
    low, high = int(raw.min()), int(raw.max())
    spread = high - low
    if spread <= 0:
        return np.zeros(len(raw), dtype=np.int64)
    return (float(MAX_NODE_SCORE) * ((raw - low) / spread)).astype(np.int64)


def _matches_all(terms: Sequence[PodAffinityTerm], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms`` (no namespace labels): false for no terms."""
    return bool(terms) and all(t.matches(pod.namespace, pod.labels, {}) for t in terms)


def after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterPodChange``: of pods on nodes, one added (or relabelled) that matches all the
    pod's required affinity terms, or one deleted (or relabelled) that matched all its anti-affinity terms."""
    before, after = as_objects(EventPod, old, new)
    if (after is not None and not after.node_name) or (before is not None and not before.node_name):
        return QueueingHint.SKIP
    affinity = affinity_of(pod) or PodAffinity()
    terms, anti = affinity.required, affinity.anti_required
    if before is not None and after is not None:
        joined = not _matches_all(terms, before.pod) and _matches_all(terms, after.pod)
        left = _matches_all(anti, before.pod) and not _matches_all(anti, after.pod)
        return QueueingHint.QUEUE if joined or left else QueueingHint.SKIP
    if after is not None:
        return QueueingHint.QUEUE if _matches_all(terms, after.pod) else QueueingHint.SKIP
    if before is None:
        raise HintError("expected a Pod, got None")
    return QueueingHint.QUEUE if _matches_all(anti, before.pod) else QueueingHint.SKIP


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterNodeChange``: a node added with an affinity term's topology key, or any node
    added when the pod has anti-affinity; a node that gained (affinity) or lost (anti-affinity) a term's
    topology key, or whose value for it changed."""
    before, after = as_new(Node, old, new)
    affinity = affinity_of(pod) or PodAffinity()
    for term in affinity.required:
        key = term.topology_key
        if before is None:
            if key in after.labels:
                return QueueingHint.QUEUE
            continue
        if key in after.labels and after.labels[key] != before.labels.get(key):
            return QueueingHint.QUEUE
    for term in affinity.anti_required:
        if before is None:
            return QueueingHint.QUEUE
        key = term.topology_key
        if key in before.labels and before.labels[key] != after.labels.get(key):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
