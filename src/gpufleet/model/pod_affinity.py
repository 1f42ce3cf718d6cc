"""Inter-pod affinity terms and topology spread constraints of a pod, as the scheduler reads them.

Label selectors follow ``metav1.LabelSelectorAsSelector``: a missing selector (None) selects
nothing, an empty one everything, and ``matchLabels`` / ``matchExpressions`` (``In``, ``NotIn``,
``Exists``, ``DoesNotExist``) are ANDed. An affinity term's namespaces follow
``framework.getNamespacesFromPodAffinityTerm``: no ``namespaces`` and no ``namespaceSelector``
means the pod's own namespace; ``namespaceSelector: {}`` selects every namespace
(``AffinityTerm.Matches``). ``matchLabelKeys`` / ``mismatchLabelKeys`` (1.34, on by default) are
merged into the term's selector by the API server from the owning pod's labels (``key In [v]`` /
``key NotIn [v]``, keys the pod lacks ignored): ``resolved`` does it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from gpufleet.model.pod import Requirement

#: A LabelSelector's requirements, ANDed; None selects nothing.
Selector = tuple[Requirement, ...] | None
#: The label the API server puts on every Namespace (``kubernetes.io/metadata.name``).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def selects(selector: Selector, labels: dict[str, str]) -> bool:
    return selector is not None and all(r.matches(labels) for r in selector)


def merged(selector: Selector, labels: Mapping[str, str], keys: tuple[str, ...], operator: str) -> Selector:
    """``selector`` with ``key <operator> [labels[key]]`` for each of ``keys`` the labels carry."""
    extra = tuple(Requirement(k, operator, (labels[k],)) for k in keys if k in labels)
    if not extra:
        return selector
    return (*(selector or ()), *extra)


@dataclass(frozen=True)
class PodAffinityTerm:
    """An inter-pod (anti-)affinity term: the pods its selector matches, in its namespaces, counted per
    value of the node label ``topology_key``."""

    selector: Selector
    topology_key: str
    namespaces: frozenset[str] = frozenset()
    namespace_selector: Selector = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    def resolved(self, owner_namespace: str, owner_labels: Mapping[str, str]) -> PodAffinityTerm:
        """The term as the scheduler sees it on a pod of ``owner_namespace`` with ``owner_labels``:
        label keys merged into the selector, the default namespace filled in."""
        selector = merged(self.selector, owner_labels, self.match_label_keys, "In")
        selector = merged(selector, owner_labels, self.mismatch_label_keys, "NotIn")
        namespaces = self.namespaces
        if not namespaces and self.namespace_selector is None:
            namespaces = frozenset({owner_namespace})
        return replace(
            self, selector=selector, namespaces=namespaces, match_label_keys=(), mismatch_label_keys=()
        )

    def matches(self, namespace: str, labels: dict[str, str], namespace_labels: dict[str, str]) -> bool:
        """``AffinityTerm.Matches`` for a resolved term and a pod of ``namespace`` with ``labels``."""
        in_namespace = namespace in self.namespaces or selects(self.namespace_selector, namespace_labels)
        return in_namespace and selects(self.selector, labels)


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    """A preferred inter-pod (anti-)affinity term with its weight."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class PodAffinity:
    """``spec.affinity.podAffinity`` and ``podAntiAffinity``."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_required: tuple[PodAffinityTerm, ...] = ()
    anti_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    def resolved(self, namespace: str, labels: Mapping[str, str]) -> PodAffinity:
        def weighted(terms: tuple[WeightedPodAffinityTerm, ...]) -> tuple[WeightedPodAffinityTerm, ...]:
            return tuple(WeightedPodAffinityTerm(w.weight, w.term.resolved(namespace, labels)) for w in terms)

        return PodAffinity(
            tuple(t.resolved(namespace, labels) for t in self.required),
            weighted(self.preferred),
            tuple(t.resolved(namespace, labels) for t in self.anti_required),
            weighted(self.anti_preferred),
        )


DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """One ``spec.topologySpreadConstraints`` entry (API defaults: policies ``Honor``/``Ignore``
    are applied by the scheduler when unset, ``minDomains`` 1)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    match_label_keys: tuple[str, ...] = ()

    def resolved(self, labels: Mapping[str, str]) -> TopologySpreadConstraint:
        """``matchLabelKeys`` merged into the selector from the pod's labels (the API server does it
        in 1.34: ``MatchLabelKeysInPodTopologySpreadSelectorMerge``)."""
        if not self.match_label_keys or self.selector is None:
            return self
        return replace(
            self, selector=merged(self.selector, labels, self.match_label_keys, "In"), match_label_keys=()
        )
