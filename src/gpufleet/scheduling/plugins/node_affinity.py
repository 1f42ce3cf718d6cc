"""NodeAffinity (``pkg/scheduler/framework/plugins/nodeaffinity``).

PreFilter: when every required term pins ``metadata.name`` (as DaemonSet pods do), only
those nodes are considered; the others are reported as
``node(s) didn't satisfy plugin(s) [NodeAffinity]``. When the pinned names come out empty (one
term asks for two different names), PreFilter rejects the pod, UnschedulableAndUnresolvable, with
``pod affinity terms conflict`` (``errReasonConflict``). Filter: ``spec.nodeSelector`` and the
required terms (``node(s) didn't match Pod's node affinity/selector``). Score: the sum of
the weights of matching preferred terms, normalised to 0..100.

``NodeAffinityArgs.addedAffinity`` applies to every pod of the profile: its required terms are
checked first (``node(s) didn't match scheduler-enforced node affinity``, unresolvable), its
preferred terms add their weights to every pod's score.

Queueing hint (``EventsToRegister``, ``isSchedulableAfterNodeChange``): a node added, or relabelled
from not matching to matching, that matches ``addedAffinity`` and the pod's required affinity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpufleet.cluster.state import IntArray
from gpufleet.model.node import Node
from gpufleet.model.node_selector import node_selector_terms, preferred_term
from gpufleet.model.pod import Pod, PreferredTerm, SelectorTerm
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, QueueingHint, Resource, as_new
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    NodesPreFilter,
    PodContext,
    PreFilter,
    StaticFilter,
    StaticScore,
    Status,
    default_normalize,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.registry import register

REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
CONFLICT = "pod affinity terms conflict"


def pinned_node_names(pod: Pod) -> set[str] | None:
    """The node names the required terms pin with ``matchFields metadata.name In``, if all do."""
    if not pod.required_terms:
        return None
    names: set[str] = set()
    for term in pod.required_terms:
        term_names: set[str] | None = None
        for req in term.fields:
            if req.key == "metadata.name" and req.operator == "In":
                values = set(req.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return names


@register
class NodeAffinity(PreFilter, NodesPreFilter, StaticFilter, StaticScore):
    name = "NodeAffinity"
    origin = "kube-scheduler"

    def __init__(
        self,
        added_required: tuple[SelectorTerm, ...] | None = None,
        added_preferred: tuple[PreferredTerm, ...] = (),
    ):
        self.added_required = added_required
        self.added_preferred = added_preferred

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> NodeAffinity:
        """``addedAffinity`` (checked when the configuration was read)."""
        added = args.get("addedAffinity") or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        return cls(
            node_selector_terms(required) if required is not None else None,
            tuple(preferred_term(p) for p in preferred),
        )

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        if ctx.pod.required_terms and pinned_node_names(ctx.pod) == set():
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (CONFLICT,), self.name)
        return SUCCESS

    def nodes(self, pod: Pod) -> set[str] | None:
        return pinned_node_names(pod)

    def reject(self, pod: Pod, node: Node) -> str | None:
        if self.added_required is not None and not any(t.matches(node) for t in self.added_required):
            return ENFORCED
        return None if pod.matches_node_selector(node) else REASON

    def reject_each(self, pod: Pod, nodes: list[Node]) -> list[str | None]:
        """``reject`` judged once per distinct value of the labels the pod's ``nodeSelector`` and
        required terms (and ``addedAffinity``'s) name, absent ones included: a requirement reads only its
        key's label. Terms with ``matchFields`` read the node's name: then each node is judged."""
        terms = (*(self.added_required or ()), *(pod.required_terms or ()))
        if any(term.fields for term in terms):
            return super().reject_each(pod, nodes)
        keys = sorted({*pod.node_selector, *(r.key for term in terms for r in term.expressions)})
        return self.reject_alike(pod, nodes, lambda node: tuple(map(node.labels.get, keys)), {})

    def reads(self, pod: Pod) -> tuple[object, ...]:
        """The node selector and required terms (its filter and its PreFilter's node names)."""
        return tuple(sorted(pod.node_selector.items())), pod.required_terms

    def applies(self, pod: Pod) -> bool:
        return bool(pod.preferred_terms or self.added_preferred)

    def raw(self, pod: Pod, node: Node) -> int:
        return sum(p.weight for p in (*self.added_preferred, *pod.preferred_terms) if p.term.matches(node))

    def normalize(self, raw: IntArray) -> IntArray:
        return default_normalize(raw, reverse=False)

    def events_to_register(self) -> Sequence[EventWithHint]:
        node_changes = ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
        return (EventWithHint(node_changes, self.after_node_change),)

    def after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterNodeChange``."""
        before, after = as_new(Node, old, new)
        if self.added_required is not None and not any(t.matches(after) for t in self.added_required):
            return QueueingHint.SKIP
        if not pod.matches_node_selector(after):
            return QueueingHint.SKIP
        if before is not None and pod.matches_node_selector(before):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
