"""Builders for the ports of kube-scheduler v1.34.10's plugin test tables (noderesources,
tainttoleration, nodeaffinity) and of ``framework/types_test.go``'s FitError cases.

Pods are read by gpufleet's own pod reader (``kube.pods.pod``) from the spec that upstream's
wrappers build (``st.MakePod().Req(...)``: one container per call; noderesources'
``newResourcePod``: cpu and memory written even when 0), so requests, explicit zeros and the
non-zero defaults come out as a manifest's would; a pod without containers (``st.MakePod().Obj()``)
requests nothing, not even the non-zero defaults, which upstream applies per container. Nodes are
``st.MakeNode().Capacity(...)`` (capacity and allocatable alike, 32 pods unless given). Quantities
are upstream's strings (``"1000"`` cpu is 1000 cores). A plugin is run on one node or a few, as the
upstream test calls it: Filter gives ``(code, reasons)``; Score gives each node's score, normalised
where the upstream test runs ``NormalizeScore``. The array and the one-node paths of a dynamic
plugin are both run and must agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from gpufleet.cluster.state import ClusterState, NodeRow
from gpufleet.kube.objects import Meta
from gpufleet.kube.pods import pod as read_pod
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.kube.scheduler_config import scheduler_config
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.resources import is_overcommittable, parse_resource_list
from gpufleet.model.scheduler_config import ProfileConfig, SchedulerConfig
from gpufleet.scheduling.events import HintError, HintFn
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    DynamicFilter,
    DynamicScore,
    PodContext,
    StaticFilter,
    StaticScore,
    Status,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler

Quantities = Mapping[str, str | int]
SIDECAR = {"restartPolicy": "Always"}


def container(requests: Quantities | None = None, **extra: Any) -> dict[str, Any]:
    """One container spec with these requests (none: no ``resources`` at all); extended resources
    and hugepages get an equal limit, as the API server requires of a real pod."""
    spec: dict[str, Any] = {"name": "c", "image": "pause", **extra}
    if requests is not None:
        limits = {name: value for name, value in requests.items() if not is_overcommittable(name)}
        spec["resources"] = {"requests": dict(requests), **({"limits": limits} if limits else {})}
    return spec


def resource_container(
    milli_cpu: int = 0, memory: int = 0, scalars: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """A container of noderesources' ``newResourcePod``: cpu and memory always written (0 included),
    then the scalar resources."""
    scalar = {name: str(value) for name, value in (scalars or {}).items()}
    return container({"cpu": f"{milli_cpu}m", "memory": str(memory), **scalar})


def make_pod(
    containers: Sequence[Mapping[str, Any]] = (),
    *,
    name: str = "p",
    init: Sequence[Mapping[str, Any]] = (),
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Pod:
    """A pod read from its spec by gpufleet's reader; without containers, a pod that requests
    nothing (upstream's ``st.MakePod().Obj()``)."""
    body: dict[str, Any] = {**(spec or {})}
    if not containers:
        pod = Pod(name, labels=dict(labels or {}), nonzero_requests={})
        if body:
            raise ValueError("a pod without containers takes no spec here")
        return pod
    body["containers"] = [dict(c) for c in containers]
    if init:
        body["initContainers"] = [dict(c) for c in init]
    problems = Problems()
    report = Reporter(problems, Location("upstream-case.yaml", 0, 1))
    pod = read_pod(Meta(name, labels=dict(labels or {})), body, report, Priorities({}))
    if problems.errors:
        raise ValueError(Problems.lines(problems.errors))
    return pod


def req_pod(*requests: Quantities, name: str = "p", **kw: Any) -> Pod:
    """``st.MakePod().Req(r1).Req(r2)...``: one container per request map."""
    return make_pod([container(r) for r in requests], name=name, **kw)


def make_node(
    name: str = "node",
    capacity: Quantities | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Taint] = (),
    unschedulable: bool = False,
) -> Node:
    """``st.MakeNode().Name(name).Capacity(capacity)``: 32 pods unless ``capacity`` says."""
    parsed, problems = parse_resource_list({"pods": "32", **(capacity or {})}, "capacity")
    assert not problems, problems
    return Node(
        name,
        labels=dict(labels or {}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        capacity=parsed,
        allocatable=dict(parsed),
    )


def cluster(nodes: Sequence[Node], existing: Mapping[str, Sequence[Pod]] | None = None) -> ClusterState:
    """The nodes, with ``existing[node]`` assigned to each (renamed so that keys are unique)."""
    state = ClusterState(list(nodes))
    n = 0
    for node, pods in (existing or {}).items():
        for pod in pods:
            n += 1
            state.assign(replace(pod, name=f"existing-{n}"), node, 0.0)
    return state


def node_row(state: ClusterState, i: int) -> NodeRow:
    return state.alloc[i].tolist(), state.requested[i].tolist(), state.nonzero[i].tolist()


def filter_status(
    plugin: StaticFilter | DynamicFilter, pod: Pod, node: Node, existing: Sequence[Pod] = ()
) -> Status:
    """The plugin's Filter status for ``pod`` on ``node`` (code and reasons; no plugin name)."""
    if isinstance(plugin, StaticFilter):
        reason = plugin.reject(pod, node)
        return SUCCESS if reason is None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))
    state = cluster([node], {node.name: existing})
    ctx = PodContext(pod, state)
    idx = np.array([0], dtype=np.int64)
    passes = bool(plugin.passes(ctx, idx)[0])
    assert plugin.passes_node(ctx, node_row(state, 0), 0) == passes, (
        "array and one-node filter paths disagree"
    )
    if passes:
        return SUCCESS
    reasons = tuple(reason for reason, mask in plugin.reason_masks(ctx, idx) if mask[0])
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if plugin.unresolvable_on(ctx, idx)[0] else Code.UNSCHEDULABLE
    return Status(code, reasons)


def status(code: Code = Code.SUCCESS, *reasons: str) -> Status:
    """``fwk.NewStatus(code, reasons...)``; ``status()`` is a nil (success) status."""
    return Status(code, reasons)


def dynamic_scores(
    plugin: DynamicScore, pod: Pod, nodes: Sequence[Node], existing: Mapping[str, Sequence[Pod]] | None = None
) -> list[int]:
    """Each node's Score (no normalising: these plugins have none), both code paths compared."""
    state = cluster(nodes, existing)
    ctx = PodContext(pod, state)
    got = [int(s) for s in plugin.score(ctx, np.arange(state.size, dtype=np.int64))]
    if not plugin.array_only:
        one = [plugin.score_node(ctx, node_row(state, i)) for i in range(state.size)]
        assert one == got, f"array scores {got} and one-node scores {one} disagree"
    return got


def static_scores(plugin: StaticScore, pod: Pod, nodes: Sequence[Node]) -> list[int]:
    """Score then NormalizeScore over ``nodes`` (as ``runtime.RunScorePlugins`` does)."""
    raw = np.array([plugin.raw(pod, node) for node in nodes], dtype=np.int64)
    return [int(s) for s in plugin.normalize(raw)]


def toleration(key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> Toleration:
    return Toleration(key, operator, value, effect)


def schedule_message(
    nodes: Sequence[Node], pod: Pod, existing: Mapping[str, Sequence[Pod]] | None = None
) -> str:
    """The FailedScheduling message the default profile gives ``pod`` (which must not fit)."""
    state = cluster(nodes, existing)
    scheduler = Scheduler(SchedulerConfig("conformance", [ProfileConfig()]), state, GangView(state))
    node, message = scheduler.try_schedule(pod)
    assert node is None, f"expected no fit, got {node}"
    return message


@dataclass(frozen=True)
class Skip:
    """A table row gpufleet cannot express, and why."""

    reason: str


def cases(test: str, table: Sequence[Sequence[Any]], arity: int) -> list[Any]:
    """pytest params of ``(name, *values)`` rows, each id ``<upstream test>/<case name>``; a row
    ``(name, Skip(reason))`` is kept as a skipped case."""
    out = []
    for name, *values in table:
        test_id = f"{test}/{name}"
        if len(values) == 1 and isinstance(values[0], Skip):
            out.append(
                pytest.param(*([None] * arity), id=test_id, marks=pytest.mark.skip(reason=values[0].reason))
            )
        else:
            assert len(values) == arity, test_id
            out.append(pytest.param(*values, id=test_id))
    return out


def scheduler_config_errors(body: Mapping[str, Any]) -> list[str]:
    """The errors gpufleet reports for a ``KubeSchedulerConfiguration`` body (``path: message``)."""
    problems = Problems()
    report = Reporter(problems, Location("config.yaml", 0, 1))
    document = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **body}
    scheduler_config("config.yaml#1", document, report)
    return [f"{p.path}: {p.message}" for p in problems.errors]


def plugin_args_errors(plugin: str, args: Mapping[str, Any]) -> list[str]:
    """The errors of one profile's ``pluginConfig`` args for ``plugin``, paths from the args."""
    prefix = "profiles[0].pluginConfig[0].args."
    errors = scheduler_config_errors({"profiles": [{"pluginConfig": [{"name": plugin, "args": dict(args)}]}]})
    return [e.removeprefix(prefix) for e in errors]


def nodes(*capacities: Quantities) -> list[Node]:
    """``node1``, ``node2``, ... with these capacities."""
    return [make_node(f"node{i}", cap) for i, cap in enumerate(capacities, start=1)]


def pods_on(**by_node: Sequence[Quantities | None]) -> dict[str, list[Pod]]:
    """Existing pods, one container each with these requests; ``None`` is a pod without containers
    (``st.MakePod().Node(n).Obj()``)."""
    return {
        node: [make_pod() if r is None else make_pod([container(r)]) for r in requests]
        for node, requests in by_node.items()
    }


NOT_A_NODE = "not-a-node"  # upstream's object of the wrong kind (a string)
NOT_A_POD = "not-a-pod"


def hint_of(fn: HintFn, pod: Pod, old: object, new: object) -> str:
    """A queueing hint's answer: ``Queue``, ``QueueSkip``, or ``error`` (upstream's ``(Queue, err)``, which
    the scheduling queue reads as Queue)."""
    try:
        return fn(pod, old, new).value
    except HintError:
        return "error"


def skipped_cases(test: str, names: Sequence[str], skip: Skip) -> list[Any]:
    """A whole upstream test gpufleet cannot express, kept case by case as skipped params."""
    return cases(test, [(name, skip) for name in names], 1)
