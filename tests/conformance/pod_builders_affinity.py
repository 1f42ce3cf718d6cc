"""Builders for the ports of kube-scheduler v1.34.10's interpodaffinity and podtopologyspread test
tables: upstream's ``st.MakePod()`` affinity and spread wrappers written as the pod spec they build,
read by gpufleet's pod reader, and the plugins run as upstream's tests run them.

``filter_statuses`` runs PreFilter once and Filter on every node (a PreFilter Skip is a success
everywhere, as the framework treats it); ``scores`` runs PreScore over the nodes given as filtered,
then Score and NormalizeScore, as ``runtime.RunScorePlugins`` does (a Skip scores 0 everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.kube.objects import Meta
from gpufleet.kube.pods import pod as read_pod
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import OwnerRef, Pod, Requirement, SelectorTerm
from gpufleet.model.pod_affinity import (
    HONOR,
    IGNORE,
    PodAffinity,
    PodAffinityTerm,
    Selector,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from gpufleet.scheduling.framework import SUCCESS, PodContext, Status
from gpufleet.scheduling.pod_aware import PodAwareFilter, PodAwareScore

Term = dict[str, Any]


def selector(
    labels: Mapping[str, str] | None = None, *expressions: tuple[str, str, Sequence[str]]
) -> dict[str, Any]:
    """A LabelSelector: ``matchLabels`` and ``(key, operator, values)`` expressions."""
    body: dict[str, Any] = {}
    if labels is not None:
        body["matchLabels"] = dict(labels)
    if expressions:
        body["matchExpressions"] = [
            {"key": k, "operator": op, **({"values": list(v)} if v else {})} for k, op, v in expressions
        ]
    return body


def exists(key: str) -> dict[str, Any]:
    """``st.MakePod().PodAffinityExists(key, ...)``'s selector: ``key Exists``."""
    return selector(None, (key, "Exists", ()))


def in_values(key: str, *values: str) -> dict[str, Any]:
    """``PodAffinityIn(key, topologyKey, values)``'s selector: ``key In values``."""
    return selector(None, (key, "In", values))


def not_in(key: str, *values: str) -> dict[str, Any]:
    return selector(None, (key, "NotIn", values))


def term(
    label_selector: dict[str, Any] | None,
    topology_key: str,
    namespaces: Sequence[str] | None = None,
    **extra: Any,
) -> Term:
    body: Term = {"topologyKey": topology_key}
    if label_selector is not None:
        body["labelSelector"] = label_selector
    if namespaces is not None:
        body["namespaces"] = list(namespaces)
    body.update(extra)
    return body


def affinity(
    required: Sequence[Term] = (),
    preferred: Sequence[tuple[int, Term]] = (),
    anti_required: Sequence[Term] = (),
    anti_preferred: Sequence[tuple[int, Term]] = (),
) -> dict[str, Any]:
    """``spec.affinity`` with these podAffinity / podAntiAffinity terms."""
    out: dict[str, Any] = {}
    for kind, req, pref in (
        ("podAffinity", required, preferred),
        ("podAntiAffinity", anti_required, anti_preferred),
    ):
        body: dict[str, Any] = {}
        if req:
            body["requiredDuringSchedulingIgnoredDuringExecution"] = list(req)
        if pref:
            body["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in pref
            ]
        if body:
            out[kind] = body
    return out


def spread(
    max_skew: int, topology_key: str, action: str, label_selector: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    """One ``topologySpreadConstraints`` entry (``st.MakePod().SpreadConstraint(...)``)."""
    body: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": action}
    if label_selector is not None:
        body["labelSelector"] = label_selector
    body.update(extra)
    return body


def pod(
    name: str = "p",
    *,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    spec: Mapping[str, Any] | None = None,
    node: str | None = None,
    owner: OwnerRef | None = None,
) -> Pod:
    """A pod (one container, no requests) read from ``spec`` by gpufleet's reader."""
    body = {"containers": [{"name": "c", "image": "pause"}], **(spec or {})}
    if node is not None:
        body["nodeName"] = node
    problems = Problems()
    report = Reporter(problems, Location("upstream-case.yaml", 0, 1))
    read = read_pod(Meta(name, namespace, dict(labels or {})), body, report, Priorities({}), owner)
    if problems.errors:
        raise ValueError(Problems.lines(problems.errors))
    return read


def node(name: str, labels: Mapping[str, str] | None = None, taints: Sequence[Taint] = ()) -> Node:
    """``st.MakeNode().Name(name).Label(...)`` (no hostname label unless given, as upstream's)."""
    made = Node(
        name,
        labels={},
        taints=tuple(taints),
        capacity={"pods": 110, "cpu": 64000},
        allocatable={"pods": 110, "cpu": 64000},
    )
    made.labels = dict(labels or {})
    return made


def cluster(nodes: Sequence[Node], existing: Sequence[Pod] = ()) -> ClusterState:
    """The nodes, each existing pod assigned to its ``node_name`` (keys made unique)."""
    state = ClusterState(list(nodes))
    for k, placed in enumerate(existing):
        assert placed.node_name is not None, "an existing pod names its node"
        key_clash = any(a.pod.key == placed.key for a in state.assignments.values())
        state.assign(
            replace(placed, name=f"{placed.name}-{k}") if key_clash else placed, placed.node_name, 0.0
        )
    return state


def filter_statuses(
    plugin: PodAwareFilter, incoming: Pod, nodes: Sequence[Node], existing: Sequence[Pod] = ()
) -> list[Status]:
    """PreFilter, then Filter on each node: ``Status(code, (reason,))`` or success."""
    return run_filter(plugin, incoming, nodes, existing)[1]


def scores(
    plugin: PodAwareScore,
    incoming: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    filtered: Sequence[str] | None = None,
) -> list[int]:
    """PreScore over the ``filtered`` nodes (default all), Score and NormalizeScore: their scores."""
    return run_scores(plugin, incoming, nodes, existing, filtered)


# -- upstream's ``st.MakePod()`` wrappers, building gpufleet's model directly ------------------------
# (upstream's tables use terms the API server would refuse, an empty topologyKey among them, so the
# ports build the scheduler's view of the pod without going through the reader's validation)

REQUIRED, PREFERRED, REQUIRED_PREFERRED = "required", "preferred", "both"


class LabelSelector:
    """``st.MakeLabelSelector()``."""

    def __init__(self) -> None:
        self.requirements: list[Requirement] = []

    def label(self, key: str, value: str) -> LabelSelector:
        self.requirements.append(Requirement(key, "In", (value,)))
        return self

    def in_(self, key: str, values: Sequence[str]) -> LabelSelector:
        self.requirements.append(Requirement(key, "In", tuple(values)))
        return self

    def not_in(self, key: str, values: Sequence[str]) -> LabelSelector:
        self.requirements.append(Requirement(key, "NotIn", tuple(values)))
        return self

    def exists(self, key: str) -> LabelSelector:
        self.requirements.append(Requirement(key, "Exists"))
        return self

    def not_exist(self, key: str) -> LabelSelector:
        self.requirements.append(Requirement(key, "DoesNotExist"))
        return self

    def obj(self) -> tuple[Requirement, ...]:
        return tuple(self.requirements)


class MakePod:
    """``st.MakePod()``: the chained setters upstream's tables use, ``obj()`` the pod."""

    def __init__(self) -> None:
        self.pod = Pod("", namespace="")
        self.affinity: dict[str, list[Any]] = {
            "required": [],
            "preferred": [],
            "anti_required": [],
            "anti_preferred": [],
        }
        self.constraints: list[TopologySpreadConstraint] = []

    def name(self, name: str) -> MakePod:
        self.pod.name = name
        return self

    def namespace(self, namespace: str) -> MakePod:
        self.pod.namespace = namespace
        return self

    def uid(self, _uid: str) -> MakePod:
        return self

    def labels(self, labels: Mapping[str, str]) -> MakePod:
        self.pod.labels = dict(labels)
        return self

    def label(self, key: str, value: str) -> MakePod:
        self.pod.labels[key] = value
        return self

    def node(self, name: str) -> MakePod:
        self.pod.node_name = name
        return self

    def node_selector(self, labels: Mapping[str, str]) -> MakePod:
        self.pod.node_selector = dict(labels)
        return self

    def node_affinity_in(self, key: str, values: Sequence[str]) -> MakePod:
        self.pod.required_terms = (SelectorTerm((Requirement(key, "In", tuple(values)),)),)
        return self

    def node_affinity_not_in(self, key: str, values: Sequence[str]) -> MakePod:
        self.pod.required_terms = (SelectorTerm((Requirement(key, "NotIn", tuple(values)),)),)
        return self

    def toleration(self, key: str) -> MakePod:
        self.pod.tolerations = (*self.pod.tolerations, Toleration(key, "Exists", "", ""))
        return self

    def terminating(self) -> MakePod:
        self.pod.annotations["terminating"] = "true"
        return self

    def _term(self, side: str, topology_key: str, selector: Selector, kind: str, **extra: Any) -> MakePod:
        made = PodAffinityTerm(selector, topology_key, **extra)
        if kind in (REQUIRED, REQUIRED_PREFERRED):
            self.affinity[side + "required"].append(made)
        if kind in (PREFERRED, REQUIRED_PREFERRED):
            self.affinity[side + "preferred"].append(WeightedPodAffinityTerm(1, made))
        return self

    def pod_affinity(self, topology_key: str, selector: Selector, kind: str, **extra: Any) -> MakePod:
        return self._term("", topology_key, selector, kind, **extra)

    def pod_anti_affinity(self, topology_key: str, selector: Selector, kind: str, **extra: Any) -> MakePod:
        return self._term("anti_", topology_key, selector, kind, **extra)

    def pod_affinity_exists(self, key: str, topology_key: str, kind: str) -> MakePod:
        return self.pod_affinity(topology_key, LabelSelector().exists(key).obj(), kind)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, kind: str) -> MakePod:
        return self.pod_anti_affinity(topology_key, LabelSelector().exists(key).obj(), kind)

    def pod_affinity_not_exists(self, key: str, topology_key: str, kind: str) -> MakePod:
        return self.pod_affinity(topology_key, LabelSelector().not_exist(key).obj(), kind)

    def pod_affinity_in(self, key: str, topology_key: str, values: Sequence[str], kind: str) -> MakePod:
        return self.pod_affinity(topology_key, LabelSelector().in_(key, values).obj(), kind)

    def pod_anti_affinity_in(self, key: str, topology_key: str, values: Sequence[str], kind: str) -> MakePod:
        return self.pod_anti_affinity(topology_key, LabelSelector().in_(key, values).obj(), kind)

    def pod_affinity_not_in(self, key: str, topology_key: str, values: Sequence[str], kind: str) -> MakePod:
        return self.pod_affinity(topology_key, LabelSelector().not_in(key, values).obj(), kind)

    def pod_anti_affinity_not_in(
        self, key: str, topology_key: str, values: Sequence[str], kind: str
    ) -> MakePod:
        return self.pod_anti_affinity(topology_key, LabelSelector().not_in(key, values).obj(), kind)

    def weighted(self, side: str, weight: int, made: PodAffinityTerm) -> MakePod:
        self.affinity[side + "preferred"].append(WeightedPodAffinityTerm(weight, made))
        return self

    def required_terms(self, side: str, *terms: PodAffinityTerm) -> MakePod:
        self.affinity[side + "required"].extend(terms)
        return self

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        action: str,
        selector: Selector,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: Sequence[str] | None = None,
    ) -> MakePod:
        self.constraints.append(
            TopologySpreadConstraint(
                max_skew,
                topology_key,
                action,
                selector,
                min_domains if min_domains is not None else 1,
                node_affinity_policy or HONOR,
                node_taints_policy or IGNORE,
                tuple(match_label_keys or ()),
            )
        )
        return self

    def owner(self, kind: str, name: str) -> MakePod:
        self.pod.owner = OwnerRef(kind, name)
        return self

    def obj(self) -> Pod:
        a = self.affinity
        has_affinity = any(a.values())
        return replace(
            self.pod,
            labels=dict(self.pod.labels),
            pod_affinity=PodAffinity(
                tuple(a["required"]),
                tuple(a["preferred"]),
                tuple(a["anti_required"]),
                tuple(a["anti_preferred"]),
            )
            if has_affinity
            else None,
            spread_constraints=tuple(self.constraints),
        )


def make_node(name: str, labels: Mapping[str, str] | None = None, taints: Sequence[Taint] = ()) -> Node:
    """``st.MakeNode().Name(name).Label(...)``."""
    return node(name, labels, taints)


def snapshot(
    nodes: Sequence[Node], existing: Sequence[Pod], namespaces: Mapping[str, Mapping[str, str]] | None
) -> ClusterState:
    """``cache.NewSnapshot(pods, nodes)``: a pod on a node not listed is left out; terminating pods
    (``MakePod().Terminating()``) are marked so; ``namespaces``: the Namespace objects' labels."""
    state = cluster(nodes, [p for p in existing if p.node_name in {n.name for n in nodes}])
    state.namespace_labels = {k: dict(v) for k, v in (namespaces or {}).items()}
    for p in existing:
        if p.annotations.get("terminating") and p.key in state.assignments:
            state.set_terminating(state.assignments[p.key])
    return state


def run_filter(
    plugin: PodAwareFilter,
    incoming: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[bool, list[Status]]:
    """(PreFilter skipped, each node's Filter status), with existing pods on nodes that are listed
    (a pod on a node not in the snapshot is left out, as ``cache.NewSnapshot`` lists only nodes)."""
    state = snapshot(nodes, existing, namespaces)
    pre = plugin.pre_filter_pods(PodContext(incoming, state))
    out = []
    for i in range(state.size):
        rejection = pre.reject(i) if pre is not None else None
        out.append(SUCCESS if rejection is None else Status(rejection[1], (rejection[0],)))
    return pre is None, out


def run_scores(
    plugin: PodAwareScore,
    incoming: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    filtered: Sequence[str] | None = None,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> list[int]:
    """PreScore over ``filtered`` (default every node), Score and NormalizeScore."""
    state = snapshot(nodes, existing, namespaces)
    names = [n.name for n in nodes] if filtered is None else list(filtered)
    idx = np.array([state.index[n] for n in names], dtype=np.int64)
    got = plugin.pod_scores(PodContext(incoming, state), idx)
    return [0] * len(names) if got is None else [int(s) for s in got]
