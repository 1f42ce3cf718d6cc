"""NodeAffinity (``pkg/scheduler/framework/plugins/nodeaffinity``).

PreFilter: when every required term pins ``metadata.name`` (as DaemonSet pods do), only
those nodes are considered; the others are reported as
``node(s) didn't satisfy plugin(s) [NodeAffinity]``. Filter: ``spec.nodeSelector`` and the
required terms (``node(s) didn't match Pod's node affinity/selector``). Score: the sum of
the weights of matching preferred terms, normalised to 0..100.
"""

from __future__ import annotations

from gpufleet.cluster.state import IntArray
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import NodesPreFilter, StaticFilter, StaticScore, default_normalize
from gpufleet.scheduling.registry import register

REASON = "node(s) didn't match Pod's node affinity/selector"


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
class NodeAffinity(NodesPreFilter, StaticFilter, StaticScore):
    name = "NodeAffinity"
    origin = "kube-scheduler"

    def nodes(self, pod: Pod) -> set[str] | None:
        return pinned_node_names(pod)

    def reject(self, pod: Pod, node: Node) -> str | None:
        return None if pod.matches_node_selector(node) else REASON

    def applies(self, pod: Pod) -> bool:
        return bool(pod.preferred_terms)

    def raw(self, pod: Pod, node: Node) -> int:
        return sum(p.weight for p in pod.preferred_terms if p.term.matches(node))

    def normalize(self, raw: IntArray) -> IntArray:
        return default_normalize(raw, reverse=False)
