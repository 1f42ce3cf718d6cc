"""PodTopologySpread's array paths agree with the per-node loops they replaced.

PreFilter's counts per domain, Filter's verdicts and the scores of the scored nodes are computed over
node columns (``domain_column``) and the pod index's live counts per node, kept on every assign,
unassign and termination; the oracle here is the plugin's former Python (every matching pod walked,
every node judged on its own) and ``SpreadState.judge``. Clusters are drawn with nodes lacking keys,
terminating pods, other namespaces, tainted nodes and node selectors.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import OwnerRef, Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SCHEDULE_ANYWAY,
    Selector,
    TopologySpreadConstraint,
    selects,
)
from gpufleet.scheduling.framework import MAX_NODE_SCORE, PodContext
from gpufleet.scheduling.plugins.pod_topology_spread import (
    HOSTNAME,
    ZONE,
    PodTopologySpread,
    has_keys,
    included,
)

RACK = "example.com/rack"
APPS = ("a", "b")


def reference_counts(state: ClusterState, selector: Selector, namespace: str) -> Counter[int]:
    counts: Counter[int] = Counter()
    if selector:
        for a in state.assignments.values():
            if a.pod.namespace == namespace and not a.terminating and selects(selector, a.pod.labels):
                counts[a.node] += 1
    return counts


def reference_matched(plugin: PodTopologySpread, state: ClusterState, pod: Pod) -> list[Counter[str]] | None:
    constraints = plugin.constraints(pod, DO_NOT_SCHEDULE)
    if not constraints:
        return None
    per_node = [reference_counts(state, c.selector, pod.namespace) for c in constraints]
    matched: list[Counter[str]] = [Counter() for _ in constraints]
    for i in state.active_indices().tolist():
        node = state.nodes[i]
        if not has_keys(node, constraints):
            continue
        for c, counts, tally in zip(constraints, per_node, matched, strict=True):
            if included(c, pod, node):
                tally[node.labels[c.topology_key]] += counts[i]
    return matched


def reference_scores(
    plugin: PodTopologySpread, state: ClusterState, pod: Pod, nodes: list[int]
) -> list[int] | None:
    constraints = plugin.constraints(pod, SCHEDULE_ANYWAY)
    if not constraints or not state.index:
        return None
    require_all = bool(pod.spread_constraints) or not plugin.system_defaulted
    filtered = [state.nodes[i] for i in nodes]
    ignored = [require_all and not has_keys(n, constraints) for n in filtered]
    domains: list[dict[str, int]] = [{} for _ in constraints]
    for n, skip in zip(filtered, ignored, strict=True):
        for c, values in zip(constraints, domains, strict=True):
            if not skip and c.topology_key != HOSTNAME:
                values.setdefault(n.labels.get(c.topology_key, ""), 0)
    per_node = [reference_counts(state, c.selector, pod.namespace) for c in constraints]
    for c, values, counts in zip(constraints, domains, per_node, strict=True):
        for i, count in counts.items() if values else ():
            node = state.nodes[i]
            if require_all and not has_keys(node, constraints):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in values and included(c, pod, node):
                values[value] += count
    considered = len(filtered) - sum(ignored)
    weights = [
        math.log((considered if c.topology_key == HOSTNAME else len(values)) + 2)
        for c, values in zip(constraints, domains, strict=True)
    ]
    raw: list[int | None] = []
    for i, n, skip in zip(nodes, filtered, ignored, strict=True):
        if skip:
            raw.append(None)
            continue
        score = 0.0
        for c, values, counts, weight in zip(constraints, domains, per_node, weights, strict=True):
            label = n.labels.get(c.topology_key)
            if label is not None:
                count = counts[i] if c.topology_key == HOSTNAME else values[label]
                score += count * weight + (c.max_skew - 1)
        raw.append(math.floor(score + 0.5))
    valid = [s for s in raw if s is not None]
    low, high = (min(valid) if valid else 0), max([0, *valid])
    return [
        0 if s is None else MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high
        for s in raw
    ]


node_labels = st.fixed_dictionaries(
    {"pool": st.sampled_from(["gpu", "cpu"])},
    optional={
        HOSTNAME: st.sampled_from(["h0", "h1", "h2", "h3", "h4", "h5"]),
        ZONE: st.sampled_from(["z0", "z1", "z2", ""]),
        RACK: st.sampled_from(["r0", "r1"]),
    },
)
placed_pod = st.tuples(
    st.integers(0, 7),  # node
    st.sampled_from(APPS),
    st.sampled_from(["default", "other"]),
    st.booleans(),  # terminating
    st.booleans(),  # unassigned again
)
constraint = st.builds(
    TopologySpreadConstraint,
    max_skew=st.integers(1, 4),
    topology_key=st.sampled_from([HOSTNAME, ZONE, RACK]),
    when_unsatisfiable=st.sampled_from([DO_NOT_SCHEDULE, SCHEDULE_ANYWAY]),
    selector=st.sampled_from(
        [None, (), (Requirement("app", "In", ("a",)),), (Requirement("app", "Exists"),)]
    ),
    min_domains=st.integers(1, 3),
    node_affinity_policy=st.sampled_from([HONOR, IGNORE]),
    node_taints_policy=st.sampled_from([HONOR, IGNORE]),
)


@settings(max_examples=300, deadline=None)
@given(
    labels=st.lists(node_labels, min_size=1, max_size=8),
    tainted=st.lists(st.booleans(), min_size=8, max_size=8),
    placed=st.lists(placed_pod, max_size=16),
    own=st.lists(constraint, max_size=3) | st.just([]),
    owned=st.booleans(),
    selector=st.sampled_from([{"pool": "gpu"}, {}]),
    system=st.booleans(),
    removed=st.integers(-1, 7),
    data=st.data(),
)
def test_arrays_equal_per_node_loops(
    labels: list[dict[str, str]],
    tainted: list[bool],
    placed: list[tuple[int, str, str, bool, bool]],
    own: list[TopologySpreadConstraint],
    owned: bool,
    selector: dict[str, str],
    system: bool,
    removed: int,
    data: st.DataObject,
) -> None:
    nodes = [
        Node(f"n{i}", labels=dict(lab), taints=(Taint("gpu"),) if tainted[i] else ())
        for i, lab in enumerate(labels)
    ]
    state = ClusterState(nodes)
    for k, (i, app, namespace, terminating, gone) in enumerate(placed):
        a = state.assign(Pod(f"p{k}", namespace, labels={"app": app}), i % len(nodes), 0.0)
        state.set_terminating(a, terminating)
        if gone:
            state.unassign(a.pod.key)
    if 0 <= removed < len(nodes) and len(nodes) > 1:
        state.remove_node(nodes[removed].name)
    pod = Pod(
        "incoming",
        labels={"app": "a"},
        node_selector=selector,
        spread_constraints=tuple(own),
        owner=OwnerRef("Deployment", "a") if owned else None,
    )
    plugin = (
        PodTopologySpread()
        if system
        else PodTopologySpread(
            (
                TopologySpreadConstraint(2, ZONE, DO_NOT_SCHEDULE, None),
                TopologySpreadConstraint(1, HOSTNAME, SCHEDULE_ANYWAY, None),
            ),
            system_defaulted=False,
        )
    )
    for app in APPS:
        chosen: Selector = (Requirement("app", "In", (app,)),)
        assert state.placed.live_counts(chosen, "default", state.size).tolist() == [
            reference_counts(state, chosen, "default")[i] for i in range(state.size)
        ]
    ctx = PodContext(pod, state)
    spread = plugin.pre_filter_pods(ctx)
    expected = reference_matched(plugin, state, pod)
    assert (None if spread is None else spread.matched) == expected
    active = state.active_indices().tolist()
    if spread is not None:  # Filter over columns, also with pods put and taken away (preemption, autoscaler)
        what_if = spread.changed(
            [(Pod("put", labels={"app": "a"}), active[-1])], list(state.assignments.values())[:2]
        )
        for judged in (spread, what_if):
            passes = judged.passes(np.array(active, dtype=np.int64)).tolist()
            assert passes == [judged.judge(i) is None for i in active]
    some = data.draw(st.booleans())  # the filtered nodes: some of the active ones, else all
    scored = sorted(data.draw(st.sets(st.sampled_from(active), min_size=1))) if some else active
    scores = plugin.pod_scores(ctx, np.array(scored, dtype=np.int64))
    want = reference_scores(plugin, state, pod, scored)
    assert (None if scores is None else scores.tolist()) == want
