"""The live objects as the engine reads them: each Node, Pod, PodGroup and PodDisruptionBudget
converted once per resourceVersion by the same readers that load manifests (``kube.nodes``,
``kube.pods``, ``kube.pod_groups``, ``kube.disruption_budgets``), so a live cluster and a scenario
file mean the same thing.

A pod's priority is the one the API server's admission wrote into ``spec.priority``; its
``PodScheduled`` condition and ``status.nominatedNodeName`` are kept beside it.

A Node is read as kube-scheduler reads it: its ``spec.taints`` as they are, its Ready condition not at all
(``kube.nodes.node`` without ``readiness``). kube-scheduler never reads the condition, only the
``node.kubernetes.io/not-ready`` or ``unreachable`` taint the node lifecycle controller adds at its next
pass (TaintToleration); a NotReady node the controller has not tainted yet is schedulable to it, and so it
is to gpufleet's live scheduler. A scenario or dump, read once, adds the taint where it is missing
(``model.node_readiness``), as the controller will have added it by the time the run goes on; a live
scheduler runs beside the controller, which adds it (or, on a node Ready again, removes it) itself, and
the next cycle reads the Node it wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from gpufleet.kube import disruption_budgets, nodes, pod_groups, pods
from gpufleet.kube.objects import controller_of, mapping, meta
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import PodGroup

ENDED = ("Succeeded", "Failed")
T = TypeVar("T")


@dataclass(frozen=True)
class LivePod:
    pod: Pod
    uid: str
    phase: str
    node: str | None  # spec.nodeName
    deleting: bool  # metadata.deletionTimestamp is set
    nominated: str | None  # status.nominatedNodeName
    condition: tuple[str, str] | None  # PodScheduled=False: (reason, message)
    #: the DisruptionTarget condition a scheduler's preemption set (reason PreemptionByScheduler)
    preempted: bool
    errors: tuple[str, ...]  # what the reader refused (the pod cannot be judged)

    @property
    def ended(self) -> bool:
        return self.phase in ENDED


@dataclass(frozen=True)
class Converted(Generic[T]):
    version: str
    value: T


class Models:
    """Memoised conversions by object and resourceVersion; ``prune`` forgets the objects no longer in
    the stores."""

    def __init__(self) -> None:
        self._priorities = Priorities({})
        self._memo: dict[tuple[str, str], Converted[Any]] = {}

    def _cached(
        self, kind: str, key: str, obj: dict[str, Any], convert: Callable[[Reporter, Problems], T]
    ) -> T | None:
        """``convert``'s value, None where the reader found errors (a pod keeps them instead)."""
        version = _version(obj)
        cached = self._memo.get((kind, key))
        if cached is None or cached.version != version:
            problems = Problems()
            value = convert(Reporter(problems, Location(f"{kind}/{key}", 0)), problems)
            refused = problems.errors and kind != "pods"
            cached = self._memo[(kind, key)] = Converted(version, None if refused else value)
        return cast("T | None", cached.value)

    def node(self, key: str, obj: dict[str, Any]) -> Node | None:
        """The Node as kube-scheduler reads it: its taints, not its Ready condition (see above)."""
        return self._cached(
            "nodes", key, obj, lambda report, _: nodes.node(meta(obj, False), obj, report, readiness=False)
        )

    def pod(self, key: str, obj: dict[str, Any]) -> LivePod:
        pod = self._cached("pods", key, obj, lambda report, problems: self._pod(obj, report, problems))
        assert pod is not None
        return pod

    def group(self, key: str, obj: dict[str, Any]) -> PodGroup | None:
        return self._cached(
            "podgroups", key, obj, lambda report, _: pod_groups.pod_group(meta(obj, True), obj, report, 0)
        )

    def budget(self, key: str, obj: dict[str, Any]) -> tuple[DisruptionBudget, int] | None:
        """The PodDisruptionBudget with its ``status.disruptionsAllowed``, as DefaultPreemption reads it."""
        allowed = int(mapping(obj.get("status")).get("disruptionsAllowed") or 0)
        found = self._cached(
            "poddisruptionbudgets",
            key,
            obj,
            lambda report, _: disruption_budgets.budget(meta(obj, True), obj, report),
        )
        return None if found is None else (found, allowed)

    def _pod(self, obj: dict[str, Any], report: Reporter, problems: Problems) -> LivePod:
        spec, status = mapping(obj.get("spec")), mapping(obj.get("status"))
        metadata = mapping(obj.get("metadata"))
        pod = pods.pod(meta(obj, True), spec, report, self._priorities, controller_of(obj))
        conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
        condition = next(
            (
                (str(c.get("reason") or ""), str(c.get("message") or ""))
                for c in conditions
                if c.get("type") == "PodScheduled" and c.get("status") == "False"
            ),
            None,
        )
        preempted = any(
            c.get("type") == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler"
            for c in conditions
        )
        return LivePod(
            pod=pod,
            uid=str(metadata.get("uid") or ""),
            phase=str(status.get("phase") or "Pending"),
            node=spec.get("nodeName") or None,
            deleting=metadata.get("deletionTimestamp") is not None,
            nominated=status.get("nominatedNodeName") or None,
            condition=condition,
            preempted=preempted,
            errors=tuple(p.line() for p in problems.errors),
        )

    def prune(self, keep: dict[str, set[str]]) -> None:
        """Forget every memo whose object is not in ``keep[kind]``."""
        for memo_key in [k for k in self._memo if k[1] not in keep.get(k[0], set())]:
            del self._memo[memo_key]


def _version(obj: dict[str, Any]) -> str:
    return str(mapping(obj.get("metadata")).get("resourceVersion") or "")
