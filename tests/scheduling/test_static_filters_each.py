"""The static filters judge many nodes at once (``StaticFilter.reject_each``, what a shape's static part is
built from), sharing a verdict between nodes alike in what the filter reads: NodeAffinity by the labels
the pod's terms name, TaintToleration by the node's taints. Each must give exactly ``reject`` of every
node, in order, whatever the nodes and the pod's constraints."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint, Toleration
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.plugins.node_affinity import NodeAffinity
from gpufleet.scheduling.plugins.node_name import NodeName
from gpufleet.scheduling.plugins.node_unschedulable import NodeUnschedulable
from gpufleet.scheduling.plugins.taint_toleration import TaintToleration

KEYS = ("gpu", "zone", "tier")
VALUES = ("a", "b", "1", "7")
NAMES = ("n0", "n1", "n2")

labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
taints = st.lists(
    st.builds(
        Taint,
        st.sampled_from(("k", "node.kubernetes.io/unschedulable")),
        st.sampled_from(("", "x")),
        st.sampled_from((NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE)),
    ),
    max_size=2,
).map(tuple)
nodes = st.lists(
    st.builds(Node, st.sampled_from(NAMES), labels=labels, taints=taints, unschedulable=st.booleans()),
    max_size=12,
)
requirements = st.builds(
    Requirement,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus")),
    st.lists(st.sampled_from(VALUES), max_size=2).map(tuple),
)
fields = st.builds(
    Requirement, st.just("metadata.name"), st.sampled_from(("In", "NotIn")), st.tuples(st.sampled_from(NAMES))
)
terms = st.builds(
    SelectorTerm,
    st.lists(requirements, max_size=3).map(tuple),
    st.lists(fields, max_size=1).map(tuple),
)
tolerations = st.lists(
    st.builds(
        Toleration,
        st.sampled_from(("", "k", "node.kubernetes.io/unschedulable")),
        st.sampled_from(("Equal", "Exists")),
        st.sampled_from(("", "x")),
        st.sampled_from(("", NO_SCHEDULE, NO_EXECUTE)),
    ),
    max_size=2,
).map(tuple)
pods = st.builds(
    Pod,
    st.just("p"),
    node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    required_terms=st.none() | st.lists(terms, max_size=2).map(tuple),
    tolerations=tolerations,
    node_name=st.none() | st.sampled_from(NAMES),
)
filters = st.sampled_from(
    [
        NodeName(),
        NodeUnschedulable(),
        TaintToleration(),
        NodeAffinity(),
        NodeAffinity(added_required=(SelectorTerm((Requirement("zone", "In", ("a", "b")),)),)),
    ]
)


@settings(max_examples=300, deadline=None)
@given(f=filters, pod=pods, each=nodes)
def test_a_static_filters_verdicts_on_many_nodes_are_its_verdict_on_each(
    f: StaticFilter, pod: Pod, each: list[Node]
) -> None:
    assert f.reject_each(pod, each) == [f.reject(pod, node) for node in each]
