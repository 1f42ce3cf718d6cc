"""InterPodAffinity's array paths agree with the per-pod loops they replaced.

PreFilter's three counts, Filter's verdicts and the scores are computed from the pod index's groups
(pods per node index) and node columns (``domain_column``); the oracle here is the plugin's former
Python, which walks every placed pod, and ``AffinityState.judge``, which judges one node at a time.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm
from gpufleet.scheduling.framework import MAX_NODE_SCORE, PodContext
from gpufleet.scheduling.plugins.inter_pod_affinity import (
    InterPodAffinity,
    Pair,
    _bump,
    _term_matches,
    affinity_of,
    matches_all,
    namespace_labels,
)
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME, ZONE

APP_A = (Requirement("app", "In", ("a",)),)
APP_B = (Requirement("app", "In", ("b",)),)
AFFINITIES = [
    None,
    PodAffinity(anti_required=(PodAffinityTerm(APP_A, HOSTNAME),)),
    PodAffinity(required=(PodAffinityTerm(APP_A, ZONE),)),
    PodAffinity(required=(PodAffinityTerm(APP_B, ZONE), PodAffinityTerm(APP_B, HOSTNAME))),
    PodAffinity(preferred=(WeightedPodAffinityTerm(5, PodAffinityTerm(APP_B, ZONE)),)),
    PodAffinity(
        anti_preferred=(WeightedPodAffinityTerm(3, PodAffinityTerm(APP_A, HOSTNAME)),),
        preferred=(WeightedPodAffinityTerm(2, PodAffinityTerm(APP_A, ZONE, frozenset({"other"}))),),
    ),
    PodAffinity(anti_required=(PodAffinityTerm(APP_B, ZONE, namespace_selector=()),)),
]


def reference_counts(state: ClusterState, pod: Pod) -> tuple[Counter[Pair], Counter[Pair], Counter[Pair]]:
    """PreFilter's ``existing_anti``, ``affinity_counts`` and ``anti_counts``, pod by pod."""
    affinity = affinity_of(pod) or PodAffinity()
    existing: Counter[Pair] = Counter()
    wanted: Counter[Pair] = Counter()
    shunned: Counter[Pair] = Counter()
    for a in state.assignments.values():
        node, theirs = state.nodes[a.node], affinity_of(a.pod)
        for term in theirs.anti_required if theirs is not None else ():
            if _term_matches(state, term, pod):
                _bump(existing, node, term.topology_key, 1)
        if matches_all(state, affinity.required, a.pod.namespace, a.pod.labels):
            for term in affinity.required:
                _bump(wanted, node, term.topology_key, 1)
        for term in affinity.anti_required:
            if _term_matches(state, term, a.pod):
                _bump(shunned, node, term.topology_key, 1)
    return existing, wanted, shunned


def reference_scores(
    plugin: InterPodAffinity, state: ClusterState, pod: Pod, nodes: list[int]
) -> list[int] | None:
    affinity = affinity_of(pod) or PodAffinity()
    scores: dict[str, Counter[str]] = {}

    def add(term: PodAffinityTerm, weight: int, node: Node) -> None:
        value = node.labels.get(term.topology_key)
        if value is not None:
            scores.setdefault(term.topology_key, Counter())[value] += weight

    own = [(w, 1) for w in affinity.preferred] + [(w, -1) for w in affinity.anti_preferred]
    for a in state.assignments.values():
        node = state.nodes[a.node]
        ns_labels = namespace_labels(state, a.pod.namespace)
        for w, sign in own:
            if w.term.matches(a.pod.namespace, a.pod.labels, ns_labels):
                add(w.term, sign * w.weight, node)
        theirs = affinity_of(a.pod)
        if theirs is None or (not own and plugin.ignore_existing_preferred):
            continue
        for term in theirs.required if plugin.hard_weight > 0 else ():
            if _term_matches(state, term, pod):
                add(term, plugin.hard_weight, node)
        for w in theirs.preferred:
            if _term_matches(state, w.term, pod):
                add(w.term, w.weight, node)
        for w in theirs.anti_preferred:
            if _term_matches(state, w.term, pod):
                add(w.term, -w.weight, node)
    if not scores:
        return None
    labels = [state.nodes[i].labels for i in nodes]
    raw = [sum(values[lab[key]] for key, values in scores.items() if key in lab) for lab in labels]
    low, high = min(raw), max(raw)
    if high - low <= 0:
        return [0] * len(raw)
    return [int(float(MAX_NODE_SCORE) * ((s - low) / (high - low))) for s in raw]


node_labels = st.fixed_dictionaries(
    {},
    optional={
        HOSTNAME: st.sampled_from(["h0", "h1", "h2", "h3", "h4", "h5"]),
        ZONE: st.sampled_from(["z0", "z1", ""]),
    },
)
placed_pod = st.tuples(
    st.integers(0, 7),  # node
    st.sampled_from(["a", "b"]),
    st.sampled_from(["default", "other"]),
    st.sampled_from(AFFINITIES),
    st.booleans(),  # terminating
    st.booleans(),  # unassigned again
)


@settings(max_examples=300, deadline=None)
@given(
    labels=st.lists(node_labels, min_size=1, max_size=8),
    placed=st.lists(placed_pod, max_size=16),
    app=st.sampled_from(["a", "b"]),
    affinity=st.sampled_from(AFFINITIES),
    hard_weight=st.sampled_from([0, 1, 5]),
    ignore_existing=st.booleans(),
    data=st.data(),
)
def test_arrays_equal_per_pod_loops(
    labels: list[dict[str, str]],
    placed: list[tuple[int, str, str, PodAffinity | None, bool, bool]],
    app: str,
    affinity: PodAffinity | None,
    hard_weight: int,
    ignore_existing: bool,
    data: st.DataObject,
) -> None:
    state = ClusterState([Node(f"n{i}", labels=dict(lab)) for i, lab in enumerate(labels)])
    for k, (i, label, namespace, theirs, terminating, gone) in enumerate(placed):
        pod = Pod(f"p{k}", namespace, labels={"app": label}, pod_affinity=theirs)
        a = state.assign(pod, i % len(labels), 0.0)
        state.set_terminating(a, terminating)
        if gone:
            state.unassign(pod.key)
    plugin = InterPodAffinity(hard_weight, ignore_existing)
    incoming = Pod("incoming", labels={"app": app}, pod_affinity=affinity)
    ctx = PodContext(incoming, state)
    got = plugin.pre_filter_pods(ctx)
    existing, wanted, shunned = reference_counts(state, incoming)
    mine = affinity_of(incoming) or PodAffinity()
    if not existing and not mine.required and not mine.anti_required:
        assert got is None
    else:
        assert got is not None
        assert (got.existing_anti, got.affinity_counts, got.anti_counts) == (existing, wanted, shunned)
        active = np.arange(state.size, dtype=np.int64)
        what_if = got.changed([(Pod("put", labels={"app": "a"}), 0)], list(state.assignments.values())[:2])
        for judged in (got, what_if):
            assert judged.passes(active).tolist() == [judged.judge(i) is None for i in active.tolist()]
    some = data.draw(st.booleans())  # the filtered nodes: some of them, else all
    scored = (
        sorted(data.draw(st.sets(st.integers(0, state.size - 1), min_size=1)))
        if some
        else list(range(state.size))
    )
    scores = plugin.pod_scores(ctx, np.array(scored, dtype=np.int64))
    assert (None if scores is None else scores.tolist()) == reference_scores(plugin, state, incoming, scored)
