"""Builders for the DefaultPreemption tables ported from kube-scheduler v1.34.10
(``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go``,
``pkg/scheduler/framework/preemption/preemption_test.go``): upstream's resource sizes and
priorities, its ``st.MakeNode()``/``st.MakePod()`` wrappers, and the plugin called directly on a
cluster with the node statuses a case gives (``filteredNodesStatuses``).

Upstream's ``epochTimeN`` is ``time.Unix(0, N)``, N nanoseconds, which only an in-memory object
carries: ``status.startTime`` crosses the API in whole seconds (gpufleet's unit), so a case's
``epochTimeN`` is N seconds here, which keeps its order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import PodContext, PostFilterRequest, PostFilterResult
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.default_preemption import Candidate, DefaultPreemption
from gpufleet.scheduling.pod_aware import PodCycle
from gpufleet.scheduling.scheduler import Scheduler

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000

# upstream's resource maps: cpu in millicores, memory in bytes
SMALL = {"cpu": 100, "memory": 100}
MEDIUM = {"cpu": 200, "memory": 200}
LARGE = {"cpu": 300, "memory": 300}
VERY_LARGE = {"cpu": 500, "memory": 500}
ONE_POD = {"pods": 1}


def node(name: str, capacity: dict[str, int], labels: dict[str, str] | None = None) -> Node:
    """``st.MakeNode().Name(name).Capacity(capacity)``: ``pods`` is 32 unless given."""
    return Node(name, labels=dict(labels or {}), capacity={"pods": 32, **capacity})


def pod(
    name: str,
    priority: int = 0,
    req: dict[str, int] | None = None,
    labels: dict[str, str] | None = None,
    namespace: str = "default",
    preemption_policy: str = "PreemptLowerPriority",
    affinity: PodAffinity | None = None,
    spread: tuple[TopologySpreadConstraint, ...] = (),
) -> Pod:
    """``st.MakePod().Name(name).Priority(priority).Req(req).Label(...)``, with
    ``PodAntiAffinityExists``-style ``affinity`` and ``SpreadConstraint``s."""
    return Pod(
        name,
        namespace=namespace,
        labels=dict(labels or {}),
        requests=dict(req or {}),
        priority=priority,
        preemption_policy=preemption_policy,
        pod_affinity=affinity,
        spread_constraints=spread,
    )


def anti_affinity_exists(key: str, topology_key: str) -> PodAffinity:
    """``PodAntiAffinityExists(key, topologyKey, PodAntiAffinityWithRequiredReq)``."""
    return PodAffinity(anti_required=(PodAffinityTerm((Requirement(key, "Exists"),), topology_key),))


def spread_exists(max_skew: int, topology_key: str, key: str) -> TopologySpreadConstraint:
    """``SpreadConstraint(maxSkew, topologyKey, DoNotSchedule, MakeLabelSelector().Exists(key))``."""
    return TopologySpreadConstraint(max_skew, topology_key, DO_NOT_SCHEDULE, (Requirement(key, "Exists"),))


def labelled_nodes(names: list[str], capacity: dict[str, int]) -> list[Node]:
    """``TestDryRunPreemption``'s nodes: ``"name/zone/region"`` gives the node its name and the labels
    ``hostname``, ``zone`` and ``region``."""
    out = []
    for spec in names:
        parts = spec.split("/")
        out.append(node(parts[0], capacity, dict(zip(("hostname", "zone", "region"), parts, strict=False))))
    return out


@dataclass
class Budgets:
    """A ``DisruptionView`` with each budget's ``status.disruptionsAllowed`` given."""

    allowed: list[tuple[DisruptionBudget, int]] = field(default_factory=list)

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return list(self.allowed)


def pdb(
    name: str, labels: dict[str, str], allowed: int, namespace: str = "default"
) -> tuple[DisruptionBudget, int]:
    return DisruptionBudget(namespace, name, tuple(sorted(labels.items()))), allowed


@dataclass(frozen=True)
class Placed:
    """An existing pod: ``.Node(node)``, ``.StartTime(epochTime<start>)``, ``.Terminating()`` and
    ``.Condition(DisruptionTarget, True, PreemptionByScheduler)`` (``preempted``)."""

    pod: Pod
    node: str
    start: float = 0.0
    terminating: bool = False
    preempted: bool = False


class PreemptionCase:
    """A cluster with the default profile, and DefaultPreemption called on it."""

    def __init__(
        self,
        nodes: Iterable[Node],
        placed: Iterable[Placed] = (),
        pdbs: Iterable[tuple[DisruptionBudget, int]] = (),
    ) -> None:
        self.state = ClusterState(list(nodes))
        self.state.disruptions = Budgets(list(pdbs))
        self.gangs = GangView(self.state)
        self.profile = next(
            iter(Scheduler(SchedulerConfig("test"), self.state, self.gangs).profiles.values())
        )
        self.filters, self.static_filters = self.profile.dynamic_filters, self.profile.static_filters
        for p in placed:
            a = self.state.assign(p.pod, p.node, p.start)
            self.state.set_terminating(a, p.terminating)
            a.preempted = p.preempted
        self.plugin = DefaultPreemption()

    def request(
        self, preemptor: Pod, unschedulable: Iterable[str], nominated: str | None = None
    ) -> PostFilterRequest:
        """What ``PostFilter`` is given: ``unschedulable`` nodes are Unschedulable in
        ``filteredNodesStatuses``, every other node UnschedulableAndUnresolvable; ``nominated``: the
        preemptor's ``status.nominatedNodeName``."""
        resolvable = np.array(sorted(self.state.index[n] for n in unschedulable), dtype=np.int64)
        ctx = PodContext(preemptor, self.state)
        return PostFilterRequest(
            ctx,
            resolvable,
            self.state.size_active,
            self.filters,
            self.static_filters,
            self.gangs,
            self.state.index[nominated] if nominated is not None else None,
            pods=self._cycle(ctx),
        )

    def _cycle(self, ctx: PodContext) -> PodCycle | None:
        """The preemptor's pod-aware filters (InterPodAffinity, PodTopologySpread) after PreFilter."""
        return PodCycle.start(self.profile.pod_filters, self.profile.pod_scores, ctx)

    def post_filter(self, preemptor: Pod, unschedulable: Iterable[str]) -> PostFilterResult:
        return self.plugin.post_filter(self.request(preemptor, unschedulable))

    def dry_run(self, preemptor: Pod) -> dict[str, tuple[list[str], int]]:
        """``DryRunPreemption`` over every node: node -> (victim names sorted, numPDBViolations)."""
        snapshot = ClusterSnapshot(self.state)
        ctx = PodContext(preemptor, self.state)
        pods = self._cycle(ctx)
        out = {}
        for i, n in enumerate(self.state.nodes):
            candidate, _ = self.plugin.select_victims(ctx, i, self.filters, None, snapshot, pods)
            if candidate is not None and candidate.victims:
                out[n.name] = (sorted(v.pod.name for v in candidate.victims), candidate.violations)
        return out

    def best(self, preemptor: Pod) -> list[str]:
        """``SelectCandidate`` after ``DryRunPreemption``: the nodes ranked best (any may be upstream's)."""
        ctx = PodContext(preemptor, self.state)
        best: list[Candidate] = self.plugin.best_candidates(
            ctx,
            list(range(len(self.state.nodes))),
            self.filters,
            None,
            ClusterSnapshot(self.state),
            Counter(),
            self._cycle(ctx),
        )
        return [self.state.nodes[c.node].name for c in best]
