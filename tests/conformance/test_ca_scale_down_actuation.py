"""cluster-autoscaler 1.34's own actuation tables (tag ``cluster-autoscaler-1.34.5``,
``core/scaledown/actuation/``: ``drain_test.go``, ``priority_test.go``, ``actuator_test.go``'s
``TestStartDeletion`` rows, ``delete_in_batch_test.go``, ``delay_test.go``), case by case, through gpufleet's
actuator (``control.cluster_autoscaler_actuation.Actuator``, what cluster-autoscaler's loop deletes nodes
with) on a cluster the test keeps by hand behind the loop's port: which pods are evicted when and with which
grace, which nodes are deleted, which are given back and why (``deleteNodesAsync``' second look,
``GetPodsToMove`` after ``--node-delete-delay-after-taint``, among them).

Upstream's tests set ``EvictionRetryTime`` and ``PodEvictionHeadroom`` to 0 to run fast; gpufleet keeps
upstream's defaults (10 s, 30 s), so a refused eviction fails at the first retry time past
``MaxPodEvictionTime`` and a wait ends 30 s after the grace period: the times asserted here are those.
The pods' grace period is ``BuildTestPod``'s (none: ``DefaultTerminationGracePeriodSeconds``, 30 s); a pod
evicted leaves its node when its grace period is over, but where the row keeps it there."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import pytest

from conftest import ManualClock, gpu_node
from gpufleet.autoscaling.drainability import MIRROR, SAFE_TO_EVICT
from gpufleet.autoscaling.eviction import (
    ENABLE_DS_EVICTION,
    ShutdownGracePeriod,
    group_by_priority,
    pods_to_evict,
)
from gpufleet.cluster.state import ClusterState
from gpufleet.control.clock import Priority
from gpufleet.control.cluster_autoscaler_actuation import Actuator, Removal, Removed
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.simulation import AutoscalerSettings

PDB = "Cannot evict pod as it would violate the pod's disruption budget."
FORCE = "forced scale-down (StartForceDeletion, drainNodeForce) is not modelled"
TAINT_FAILS = "gpufleet's ToBeDeleted mark (a cordon) never fails"
CLOUD_FAILS = "gpufleet's cloud never fails to delete a node"
API_ERRORS = "gpufleet's Eviction API refuses only for a PodDisruptionBudget; no other API error is modelled"


def pod(name: str, priority: int = 0, daemon: bool = False, annotations: dict[str, str] | None = None) -> Pod:
    """``BuildTestPod``: no grace period given (30 s); ``WithDSController``: a DaemonSet's. Annotated
    ``safe-to-evict: "true"`` as ``actuator_test.go``'s ``removablePod``: the actuator's second look
    (``GetPodsToMove``) finds a pod with no controller not replicated (``drain_test.go`` calls ``DrainNode``
    past it)."""
    owner = OwnerRef("DaemonSet", "ds") if daemon else None
    return Pod(
        name, priority=priority, owner=owner, annotations={SAFE_TO_EVICT: "true", **(annotations or {})}
    )


def ds_pods(node: str, count: int) -> list[Pod]:
    """``generateDsPods``: ``<node>-ds-pod-<k>``."""
    return [pod(f"{node}-ds-pod-{k}", daemon=True) for k in range(count)]


def removable(node: str, count: int) -> list[Pod]:
    """``removablePods``: ``<node>-pod-<k>``."""
    return [pod(f"{node}-pod-{k}") for k in range(count)]


@dataclass
class Group:
    nodes: set[str]


@dataclass
class HandKeptCluster:
    """The nodes and pods the actuator reads and changes through ``NodeGroupPort``; the Eviction API answers
    as the row says: ``refuse`` (a pod's evictions refused that many times, -1: always), ``stay`` (pods that
    never leave the node once evicted), ``moved`` (pods found on another node once evicted, as
    ``p2Rescheduled``)."""

    clock: ManualClock
    pods: Mapping[str, Sequence[Pod]]
    groups: Mapping[str, Sequence[str]]
    refuse: dict[str, int] = field(default_factory=dict)
    stay: frozenset[str] = frozenset()
    moved: frozenset[str] = frozenset()
    delayed: frozenset[str] = frozenset()  # nodes annotated delay-deletion
    unready: frozenset[str] = frozenset()
    #: the PodDisruptionBudgets, each with its ``disruptionsAllowed`` (kept by hand as the row says)
    budgets: list[tuple[DisruptionBudget, int]] = field(default_factory=list)
    log: list[tuple[object, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = ClusterState([gpu_node(n, 8) for n in [*self.pods, "elsewhere"]])
        for name in self.delayed:
            self.state.nodes[self.state.index[name]].delay_deletion = True
        for node, pods in self.pods.items():
            for p in pods:
                self.state.assign(p, node, 0.0)
        self.node_groups = {g: Group(set(nodes)) for g, nodes in self.groups.items()}

    def unready_nodes(self) -> dict[str, float]:
        return {n: 0.0 for n in self.unready}

    @property
    def disruption_budgets(self) -> list[DisruptionBudget]:
        return [b for b, _ in self.budgets]

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return list(self.budgets)

    def daemon_pod_keys(self) -> frozenset[str]:
        return frozenset()  # (a DaemonSet pod here is one by its owner)

    def cordon(self, name: str, unschedulable: bool) -> None:
        self.log.append((self.clock.now, "taint" if unschedulable else "untaint", name))

    def evict_pod(self, key: str, grace_s: float) -> str | None:
        left = self.refuse.get(key, 0)
        if left:
            self.refuse[key] = left - 1
            return PDB
        self.log.append((self.clock.now, "evict", key.split("/")[1], grace_s))
        if key not in self.stay:
            self.clock.at(self.clock.now + grace_s, Priority.COMPLETION, lambda: self._leave(key))
        return None

    def _leave(self, key: str) -> None:
        a = self.state.unassign(key)
        if key in self.moved and a is not None:
            self.state.assign(a.pod, "elsewhere", self.clock.now)

    def delete_node(self, name: str) -> None:
        self.log.append((self.clock.now, "delete", name))


def actuator_run(
    cluster: HandKeptCluster,
    removals: Sequence[Removal],
    settings: AutoscalerSettings,
    delay_after_taint_s: float = 0.0,
) -> tuple[list[ScaleEvent], list[Removed]]:
    """The actuator started on ``removals``, run until every deletion is over: its events and the nodes it
    deleted (what ``scaled_down_nodes_total`` counts). Upstream's tables build their ``Actuator`` with no
    ``nodeDeleteDelayAfterTaint``: 0 here unless given."""
    events: list[ScaleEvent] = []
    settings = replace(settings, node_delete_delay_after_taint_s=delay_after_taint_s)
    actuator = Actuator(cluster, cluster.clock, settings, events, lambda: None)  # type: ignore[arg-type]
    actuator.start(removals)
    cluster.clock.run_until(3600.0)
    assert not actuator.deleting  # (every deletion over: done or given back)
    return events, actuator.removed


def actuate(
    cluster: HandKeptCluster, removals: Sequence[Removal], settings: AutoscalerSettings
) -> list[ScaleEvent]:
    return actuator_run(cluster, removals, settings)[0]


def drain_node(
    pods: Sequence[Pod], settings: AutoscalerSettings, drain: bool = True, **answers: object
) -> tuple[list[tuple[object, ...]], list[ScaleEvent]]:
    """``Evictor.DrainNode`` of n1 (with the node's deletion after it); ``drain`` False: n1 deleted as empty
    (``EvictDaemonSetPods``)."""
    cluster = HandKeptCluster(ManualClock(), {"n1": pods}, {"ng": ["n1"]}, **answers)  # type: ignore[arg-type]
    events = actuate(cluster, [Removal("n1", "ng", False, drain)], settings)
    return cluster.log, events


def failed(events: Sequence[ScaleEvent]) -> list[tuple[float, str, str]]:
    return [(e.t_s, e.nodes[0], e.reason) for e in events if e.kind == "scale-down-failed"]


LEGACY_20 = AutoscalerSettings(max_graceful_termination_s=20, max_pod_eviction_time_s=5.0)
ONE_TRY_20 = AutoscalerSettings(max_graceful_termination_s=20, max_pod_eviction_time_s=0)


# -- priority_test.go --------------------------------------------------------------------------------------


def test_group_by_priority_puts_each_pod_in_the_group_of_the_highest_priority_not_above_its_own() -> None:
    """``TestGroupByPriority`` (``groupByPriority``, ``groupIndex``): groups 10, 1000, 2000, 2000000000;
    priority 0 and 100 go below the lowest, to its group; 500 to 10's; 1000 to its own; 2000000005 above the
    highest, to it; the 2000 group stays empty. (Upstream's second list, the best-effort DaemonSet pods, is
    grouped the same way; gpufleet evicts no DaemonSet pod.)"""
    rules = [ShutdownGracePeriod(10, 4), ShutdownGracePeriod(1000, 3), ShutdownGracePeriod(2000, 2),
             ShutdownGracePeriod(2000000000, 1)]  # fmt: skip
    pods = [pod("p1", 2000000005), pod("p2", 500), pod("p3", 100), pod("p4", 0), pod("p5", 1000)]
    groups = group_by_priority(rules, pods)
    assert [(g.rule, [p.name for p in g.pods]) for g in groups] == [
        (rules[0], ["p2", "p3", "p4"]),
        (rules[1], ["p5"]),
        (rules[2], []),
        (rules[3], ["p1"]),
    ]


def test_the_priority_evictor_evicts_group_by_group_in_ascending_priority() -> None:
    """``TestPriorityEvictor`` (``drainNodeWithPodsBasedOnPodPriority``): with ``0:3, 1000:2,
    2000000000:1`` p3 (priority 100) goes first, with the 3 s of its group; once it has left, p2 (2000), with
    2 s; then p1 (2000000005), with 1 s; the node is deleted when p1 has left."""
    settings = AutoscalerSettings(drain_priority_config=((0, 3), (1000, 2), (2000000000, 1)))
    pods = [pod("p1", 2000000005), pod("p2", 2000), pod("p3", 100)]
    log, events = drain_node(pods, settings)
    assert log == [
        (0.0, "taint", "n1"),
        (0.0, "evict", "p3", 3.0),
        (3.0, "evict", "p2", 2.0),
        (5.0, "evict", "p1", 1.0),
        (6.0, "delete", "n1"),
    ]
    assert failed(events) == []


# -- drain_test.go -----------------------------------------------------------------------------------------


def test_drain_node_with_pods_evicts_them_with_the_grace_period_cut_to_the_flag() -> None:
    """``TestDrainNodeWithPods``: p1, p2 and the DaemonSet pod d1
    (``--daemonset-eviction-for-occupied-nodes``, true by default) evicted, their 30 s cut to
    ``MaxGracefulTerminationSec`` 20; the node deleted once p1 and p2 have left (d1 is not waited for)."""
    log, events = drain_node([pod("p1"), pod("p2"), pod("d1", daemon=True)], LEGACY_20)
    assert log == [
        (0.0, "taint", "n1"),
        (0.0, "evict", "p1", 20.0),
        (0.0, "evict", "p2", 20.0),
        (0.0, "evict", "d1", 20.0),
        (20.0, "delete", "n1"),
    ]
    assert failed(events) == []


def test_drain_node_with_pods_with_rescheduled_counts_a_pod_on_another_node_as_gone() -> None:
    """``TestDrainNodeWithPodsWithRescheduled`` (``waitPodsToDisappear``: a pod whose ``nodeName`` is no
    longer the node has left it): p2 found on another node after its eviction; the drain succeeds."""
    log, events = drain_node([pod("p1"), pod("p2")], LEGACY_20, moved=frozenset({"default/p2"}))
    assert log[-1] == (20.0, "delete", "n1")
    assert failed(events) == []


def test_drain_node_with_pods_with_retries_evicts_them_all_once_the_refusals_stop() -> None:
    """``TestDrainNodeWithPodsWithRetries`` (``evictPod``: an eviction refused is tried again every
    ``EvictionRetryTime`` while before ``MaxPodEvictionTime``): p2 and p3 refused once each (upstream's
    one-ticket budget), evicted at the retry 10 s later; d1, a DaemonSet pod, evicted at once (best effort);
    the node deleted when the last of p1, p2 and p3 has left."""
    refuse = {"default/p2": 1, "default/p3": 1}
    log, events = drain_node([pod("p1"), pod("p2"), pod("p3"), pod("d1", daemon=True)],
                             AutoscalerSettings(max_graceful_termination_s=20), refuse=refuse)  # fmt: skip
    assert log == [
        (0.0, "taint", "n1"),
        (0.0, "evict", "p1", 20.0),
        (0.0, "evict", "d1", 20.0),
        (10.0, "evict", "p2", 20.0),
        (10.0, "evict", "p3", 20.0),
        (30.0, "delete", "n1"),
    ]
    assert failed(events) == []


def test_drain_node_with_pods_daemon_set_eviction_failure_does_not_fail_the_drain() -> None:
    """``TestDrainNodeWithPodsDaemonSetEvictionFailure`` (its options leave
    ``DaemonSetEvictionForOccupiedNodes`` false): d1 and d2 are not evicted; p1 and p2 are, and the drain
    succeeds."""
    refuse = {"default/d1": -1, "default/d2": -1}
    pods = [pod("p1"), pod("p2"), pod("d1", daemon=True), pod("d2", daemon=True)]
    settings = replace(ONE_TRY_20, daemonset_eviction_for_occupied_nodes=False)
    log, events = drain_node(pods, settings, refuse=refuse)
    assert log == [(0.0, "taint", "n1"), (0.0, "evict", "p1", 20.0), (0.0, "evict", "p2", 20.0),
                   (20.0, "delete", "n1")]  # fmt: skip
    assert failed(events) == []


def test_daemon_set_pods_refused_are_given_up_at_the_retry_time_without_failing_the_drain() -> None:
    """``initiateEviction`` with best-effort pods (``evictPod`` with ``fullEvictionPod`` false): d1 and d2
    (evicted under ``--daemonset-eviction-for-occupied-nodes``) always refused, ``MaxPodEvictionTime`` 0:
    tried once, given up at the retry time (10 s) with no error, only then is the group waited for; p1 and p2,
    evicted with 5 s, gone by then: the node deleted at 10 s."""
    refuse = {"default/d1": -1, "default/d2": -1}
    pods = [pod("p1"), pod("p2"), pod("d1", daemon=True), pod("d2", daemon=True)]
    settings = AutoscalerSettings(max_graceful_termination_s=5, max_pod_eviction_time_s=0)
    log, events = drain_node(pods, settings, refuse=refuse)
    assert [e[2] for e in log if e[1] == "evict"] == ["p1", "p2"]
    assert log[-1] == (10.0, "delete", "n1") and failed(events) == []


def test_a_group_waits_for_its_daemon_set_pods_evictions_before_its_pods_are_waited_for() -> None:
    """``initiateEviction`` reads every eviction's answer, the best-effort ones too, before
    ``waitPodsToDisappear``: d1 refused until ``--max-pod-eviction-time`` (30 s) has passed (tries at 0, 10,
    20 s, given up at 30 s) holds the group; p1, evicted at 0 s, left at 20 s; the node is deleted at 30 s."""
    settings = AutoscalerSettings(max_graceful_termination_s=20, max_pod_eviction_time_s=30.0)
    log, events = drain_node([pod("p1"), pod("d1", daemon=True)], settings, refuse={"default/d1": -1})
    assert log == [(0.0, "taint", "n1"), (0.0, "evict", "p1", 20.0), (30.0, "delete", "n1")]
    assert failed(events) == []


def test_with_a_drain_priority_config_daemon_set_pods_are_evicted_and_waited_for_as_the_others() -> None:
    """``NewActuator``: with ``--drain-priority-config`` the evictor has ``fullDsEviction``, and ``drainNode``
    evicts the DaemonSet pods as the others: d1 (priority 2000) in the second group, after p1 (0) has left; d1
    refused fails the drain, naming it; d1 never leaving fails it after the group's wait."""
    settings = AutoscalerSettings(drain_priority_config=((0, 5), (1000, 3)), max_pod_eviction_time_s=0)
    pods = [pod("p1"), pod("d1", 2000, daemon=True)]
    log, events = drain_node(pods, settings)
    assert log == [(0.0, "taint", "n1"), (0.0, "evict", "p1", 5.0), (5.0, "evict", "d1", 3.0),
                   (8.0, "delete", "n1")]  # fmt: skip
    assert failed(events) == []
    log, events = drain_node(pods, settings, refuse={"default/d1": -1})
    why = (
        "failed to drain and delete node: Failed to drain node /n1, due to following errors: "
        f"[failed to evict pod default/d1 within allowed timeout (last error: {PDB})]"
    )
    assert failed(events) == [(15.0, "n1", why)]
    log, events = drain_node(pods, settings, stay=frozenset({"default/d1"}))
    why = "failed to drain and delete node: Failed to drain node /n1: pods remaining after timeout"
    assert failed(events) == [(5.0 + 35.0, "n1", why)]


def test_without_a_drain_priority_config_daemon_set_pods_are_not_waited_for() -> None:
    """``DrainNode`` without ``fullDsEviction``: d1, evicted best effort, never leaves; the node is deleted
    once p1 has."""
    log, events = drain_node([pod("p1"), pod("d1", daemon=True)], LEGACY_20, stay=frozenset({"default/d1"}))
    assert log == [(0.0, "taint", "n1"), (0.0, "evict", "p1", 20.0), (0.0, "evict", "d1", 20.0),
                   (20.0, "delete", "n1")]  # fmt: skip
    assert failed(events) == []


@pytest.mark.parametrize(
    ("evict_by_default", "annotation", "want"),
    [
        pytest.param(True, {}, ["d1", "d2"], id="Successful attempt to evict DaemonSet pods"),
        pytest.param(False, {"d1": "true"}, ["d1"], id="Evict single pod due to annotation"),
        pytest.param(True, {"d1": "false"}, ["d2"], id="Don't evict single pod due to annotation"),
    ],
)
def test_daemon_set_eviction_for_empty_nodes(
    evict_by_default: bool, annotation: dict[str, str], want: list[str]
) -> None:
    """``TestDaemonSetEvictionForEmptyNodes`` (``EvictDaemonSetPods``, ``daemonset.PodsToEvict``): an empty
    node's DaemonSet pods evicted under ``--daemonset-eviction-for-empty-nodes``, a pod's
    ``enable-ds-eviction`` annotation having the last word, with ``MaxGracefulTerminationSec`` 1; the node
    deleted at once (nobody waits for them)."""
    pods = [
        pod(
            name,
            daemon=True,
            annotations={ENABLE_DS_EVICTION: annotation[name]} if name in annotation else {},
        )
        for name in ("d1", "d2")
    ]
    settings = AutoscalerSettings(
        max_graceful_termination_s=1,
        max_pod_eviction_time_s=5.0,
        daemonset_eviction_for_empty_nodes=evict_by_default,
    )
    log, events = drain_node(pods, settings, drain=False)
    assert log == [(0.0, "taint", "n1"), *((0.0, "evict", name, 1.0) for name in want), (0.0, "delete", "n1")]
    assert failed(events) == []


def test_an_empty_nodes_daemon_set_pods_are_not_evicted_by_default() -> None:
    """``--daemonset-eviction-for-empty-nodes`` is false by default: an empty node's DaemonSet pods end with
    it."""
    log, _ = drain_node([pod("d1", daemon=True)], AutoscalerSettings(), drain=False)
    assert log == [(0.0, "taint", "n1"), (0.0, "delete", "n1")]


def test_drain_node_with_pods_eviction_failure_gives_the_node_back() -> None:
    """``TestDrainNodeWithPodsEvictionFailure``: p2 and p4 refused and ``MaxPodEvictionTime`` 0: one try
    each, failed at the retry time (10 s); p1 and p3 were evicted. The drain fails with ``initiateEviction``'s
    error naming both; the node is given back (``CleanUpAndRecordFailedScaleDownEvent``: its taint off), not
    deleted."""
    refuse = {"default/p2": -1, "default/p4": -1}
    pods = [pod("p1"), pod("p2"), pod("p3"), pod("p4")]
    log, events = drain_node(pods, ONE_TRY_20, refuse=refuse)
    assert log == [
        (0.0, "taint", "n1"),
        (0.0, "evict", "p1", 20.0),
        (0.0, "evict", "p3", 20.0),
        (10.0, "untaint", "n1"),
    ]
    errors = " ".join(
        f"failed to evict pod default/{p} within allowed timeout (last error: {PDB})" for p in ("p2", "p4")
    )
    why = f"failed to drain and delete node: Failed to drain node /n1, due to following errors: [{errors}]"
    assert failed(events) == [(10.0, "n1", why)]


def test_an_eviction_refused_past_max_pod_eviction_time_fails_at_the_first_retry_not_before_it() -> None:
    """``evictPod``'s loop (``first || time.Now().Before(retryUntil)``, sleeping ``EvictionRetryTime``): with
    ``--max-pod-eviction-time`` 2 minutes (the default) a pod always refused is tried at 0, 10, ..., 110 s,
    and the drain fails at 120 s."""
    log, events = drain_node([pod("p1")], AutoscalerSettings(), refuse={"default/p1": -1})
    assert log == [(0.0, "taint", "n1"), (120.0, "untaint", "n1")]
    assert [t for t, _, _ in failed(events)] == [120.0]


def test_drain_with_pods_node_disappearance_failure_fails_after_the_wait() -> None:
    """``TestDrainWithPodsNodeDisappearanceFailure`` (``waitPodsToDisappear``): every pod evicted, p2 and
    p4 never leave; with ``MaxGracefulTerminationSec`` 0 the wait is the 30 s headroom alone (polls at 0,
    5, ..., 25 s), and the pods' 30 s are not cut: the drain fails at 30 s, the node given back. (Upstream's
    p2 answers the Get with an error: not modelled, it stays like p4.)"""
    pods = [pod("p1"), pod("p2"), pod("p3"), pod("p4")]
    settings = AutoscalerSettings(max_graceful_termination_s=0, max_pod_eviction_time_s=0)
    log, events = drain_node(pods, settings, stay=frozenset({"default/p2", "default/p4"}))
    assert [e for e in log if e[1] != "evict"] == [(0.0, "taint", "n1"), (30.0, "untaint", "n1")]
    assert [(e[2], e[3]) for e in log if e[1] == "evict"] == [
        ("p1", 30.0),
        ("p2", 30.0),
        ("p3", 30.0),
        ("p4", 30.0),
    ]
    why = "failed to drain and delete node: Failed to drain node /n1: pods remaining after timeout"
    assert failed(events) == [(30.0, "n1", why)]


def test_a_pod_still_there_is_polled_for_until_the_wait_ends() -> None:
    """``waitPodsToDisappear`` with a grace period the pod outlasts: ``MaxGracefulTerminationSec`` 20, so
    the wait lasts while less than 50 s have passed; the pod kept there fails the drain at 50 s (the first
    poll time not below it)."""
    _, events = drain_node([pod("p1")], LEGACY_20, stay=frozenset({"default/p1"}))
    assert [t for t, _, _ in failed(events)] == [50.0]


def mirror(name: str) -> Pod:
    return Pod(name, annotations={MIRROR: "some-key"})


def ds(name: str, evictable: bool) -> Pod:
    """``dsPod``: a DaemonSet's, annotated ``enable-ds-eviction: "true"`` when ``evictable``."""
    return pod(name, daemon=True, annotations={ENABLE_DS_EVICTION: "true"} if evictable else None)


#: ``TestPodsToEvict``'s rows: the node's pods, ``DaemonSetEvictionForOccupiedNodes`` off, the DaemonSet pods
#: and the other pods ``podsToEvict`` returns
PODS_TO_EVICT = {
    "no pods": ([], False, [], []),
    "mirror pods are never returned": ([mirror("pod-1"), mirror("pod-2")], False, [], []),
    "non-DS pods are correctly returned": ([pod("pod-1"), pod("pod-2")], False, [], ["pod-1", "pod-2"]),
    "DS pods are correctly returned when DS eviction is enabled": (
        [ds("pod-1", False), ds("pod-2", False)], False, ["pod-1", "pod-2"], []
    ),
    "DS pods are not returned when DS eviction is disabled and the pods are not marked as evictable": (
        [ds("pod-1", False), ds("pod-2", False)], True, [], []
    ),
    "DS pods are correctly returned when DS eviction is disabled, but the pods are marked as evictable": (
        [ds("pod-1", True), ds("pod-2", False), ds("pod-3", True)], True, ["pod-1", "pod-3"], []
    ),
    "all pod kinds are correctly handled together": (
        [ds("ds-pod-1", False), ds("ds-pod-2", False), pod("regular-pod-1"), pod("regular-pod-2"),
         mirror("mirror-pod-1"), mirror("mirror-pod-2")],
        False, ["ds-pod-1", "ds-pod-2"], ["regular-pod-1", "regular-pod-2"],
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("pods", "disabled", "want_ds", "want_others"),
    [pytest.param(*row, id=name) for name, row in PODS_TO_EVICT.items()],
)
def test_pods_to_evict(pods: list[Pod], disabled: bool, want_ds: list[str], want_others: list[str]) -> None:
    """``TestPodsToEvict`` (``podsToEvict``): mirror pods never; DaemonSet pods under the flag or their
    ``enable-ds-eviction`` annotation; the others always."""
    daemon, others = pods_to_evict(pods, not disabled)
    assert ([p.name for p in daemon], [p.name for p in others]) == (want_ds, want_others)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param("TestDrainForceNodeWithPodsEvictionFailure", marks=pytest.mark.skip(reason=FORCE)),
        pytest.param(
            "TestPodsToEvict/fake pods are never returned",
            marks=pytest.mark.skip(reason="gpufleet's snapshots hold no fake pods (the simulator's own)"),
        ),
    ],
)
def test_drain_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)


# -- actuator_test.go (TestStartDeletion) ------------------------------------------------------------------


#: ``TestStartDeletion``'s options: ``MaxPodEvictionTime`` 0, ``DaemonSetEvictionForEmptyNodes`` true and
#: ``DaemonSetEvictionForOccupiedNodes`` left false (gpufleet's grace period cut to 20 s)
START_DELETION = replace(
    ONE_TRY_20, daemonset_eviction_for_empty_nodes=True, daemonset_eviction_for_occupied_nodes=False
)


def start_deletion(
    pods: Mapping[str, Sequence[Pod]],
    groups: Mapping[str, Sequence[str]],
    removals: Sequence[Removal],
    refuse: dict[str, int] | None = None,
) -> tuple[list[tuple[object, ...]], list[ScaleEvent]]:
    cluster = HandKeptCluster(ManualClock(), pods, groups, refuse=refuse or {})
    events = actuate(cluster, removals, START_DELETION)
    return cluster.log, events


def nodes(prefix: str, count: int) -> list[str]:
    return [f"{prefix}-node-{k}" for k in range(count)]


def deleted(log: Sequence[tuple[object, ...]]) -> list[tuple[object, str]]:
    return sorted((e[0], str(e[2])) for e in log if e[1] == "delete")


def evicted(log: Sequence[tuple[object, ...]]) -> list[str]:
    return sorted(str(e[2]) for e in log if e[1] == "evict")


def test_start_deletion_with_nothing_to_delete_does_nothing() -> None:
    """``TestStartDeletion/nothing to delete``."""
    log, events = start_deletion({}, {}, [])
    assert log == [] and events == []


def test_start_deletion_deletes_empty_nodes_at_once() -> None:
    """``TestStartDeletion/empty node deletion``: both tainted, then deleted with no drain."""
    names = nodes("test", 3)
    log, events = start_deletion({n: [] for n in names}, {"test": names},
                                 [Removal(n, "test", False, False) for n in names[:2]])  # fmt: skip
    assert log == [(0.0, "taint", names[0]), (0.0, "taint", names[1]),
                   (0.0, "delete", names[0]), (0.0, "delete", names[1])]  # fmt: skip
    assert failed(events) == []


def test_start_deletion_deletes_an_empty_atomic_group_whole() -> None:
    """``TestStartDeletion/empty atomic node deletion``."""
    names = nodes("atomic-2", 2)
    log, events = start_deletion({n: [] for n in names}, {"atomic-2": names},
                                 [Removal(n, "atomic-2", True, False) for n in names])  # fmt: skip
    assert deleted(log) == [(0.0, names[0]), (0.0, names[1])] and failed(events) == []


def test_start_deletion_with_drain_evicts_the_pods_then_deletes() -> None:
    """``TestStartDeletion/deletion with drain``: two nodes of three, each with two pods."""
    names = nodes("test", 3)
    pods = {n: removable(n, 2) for n in names[:2]} | {names[2]: []}
    log, events = start_deletion(pods, {"test": names}, [Removal(n, "test", False, True) for n in names[:2]])
    assert evicted(log) == [
        "test-node-0-pod-0",
        "test-node-0-pod-1",
        "test-node-1-pod-0",
        "test-node-1-pod-1",
    ]
    assert deleted(log) == [(20.0, names[0]), (20.0, names[1])] and failed(events) == []
    assert [e[2] for e in log if e[1] == "taint"] == names[:2]  # (all tainted before any eviction)
    assert log.index((0.0, "taint", names[1])) < log.index((0.0, "evict", "test-node-0-pod-0", 20.0))


def test_start_deletion_of_empty_and_drained_nodes_together() -> None:
    """``TestStartDeletion/empty and drain deletion work correctly together``: the empty ones at once, the
    others once drained."""
    names = nodes("test", 4)
    pods = {names[0]: [], names[1]: [], names[2]: removable(names[2], 2), names[3]: removable(names[3], 2)}
    removals = [Removal(n, "test", False, k >= 2) for k, n in enumerate(names)]
    log, events = start_deletion(pods, {"test": names}, removals)
    assert deleted(log) == [(0.0, names[0]), (0.0, names[1]), (20.0, names[2]), (20.0, names[3])]
    assert evicted(log) == [
        "test-node-2-pod-0",
        "test-node-2-pod-1",
        "test-node-3-pod-0",
        "test-node-3-pod-1",
    ]
    assert failed(events) == []


def test_start_deletion_of_two_atomic_groups_together() -> None:
    """``TestStartDeletion/two atomic groups can be scaled down together``: each group deleted whole once
    its last node is drained (``addToBatcher``); the empty node of the mixed group waits for its drained
    one."""
    mixed, drain = nodes("atomic-2-mixed", 2), nodes("atomic-2-drain", 2)
    pods = {mixed[0]: removable(mixed[0], 2), mixed[1]: [], drain[0]: removable(drain[0], 1),
            drain[1]: removable(drain[1], 2)}  # fmt: skip
    removals = [
        Removal(mixed[1], "atomic-2-mixed", True, False),
        Removal(mixed[0], "atomic-2-mixed", True, True),
        *(Removal(n, "atomic-2-drain", True, True) for n in drain),
    ]
    log, events = start_deletion(pods, {"atomic-2-mixed": mixed, "atomic-2-drain": drain}, removals)
    assert deleted(log) == sorted((20.0, n) for n in [*mixed, *drain])
    assert len(evicted(log)) == 5 and failed(events) == []


def test_start_deletion_of_an_atomic_group_empty_and_drained_nodes_together() -> None:
    """``TestStartDeletion/atomic empty and drain deletion work correctly together``: the empty nodes are
    deleted with the drained ones, when the last is drained."""
    names = nodes("atomic-4", 4)
    pods = {names[0]: [], names[1]: [], names[2]: removable(names[2], 2), names[3]: removable(names[3], 2)}
    removals = [Removal(n, "atomic-4", True, k >= 2) for k, n in enumerate(names)]
    log, events = start_deletion(pods, {"atomic-4": names}, removals)
    assert deleted(log) == [(20.0, n) for n in names] and failed(events) == []


def test_start_deletion_gives_back_the_nodes_whose_drain_failed() -> None:
    """``TestStartDeletion/nodes that failed drain are correctly reported in results``: node-0's pod-0 and
    pod-1 and node-2's pod-1 cannot be evicted: node-0 and node-2 are given back (tainted, then untainted:
    ``NodeDeleteErrorFailedToEvictPods``), their other pods evicted; node-1 and node-3 are deleted."""
    names = nodes("test", 4)
    pods = {n: removable(n, 3) for n in names}
    refuse = {
        "default/test-node-0-pod-0": -1,
        "default/test-node-0-pod-1": -1,
        "default/test-node-2-pod-1": -1,
    }
    log, events = start_deletion(
        pods, {"test": names}, [Removal(n, "test", False, True) for n in names], refuse
    )
    assert deleted(log) == [(20.0, names[1]), (20.0, names[3])]
    assert evicted(log) == [
        "test-node-0-pod-2",
        "test-node-1-pod-0", "test-node-1-pod-1", "test-node-1-pod-2",
        "test-node-2-pod-0", "test-node-2-pod-2",
        "test-node-3-pod-0", "test-node-3-pod-1", "test-node-3-pod-2",
    ]  # fmt: skip
    assert sorted(e[2] for e in log if e[1] == "untaint") == [names[0], names[2]]
    assert [(t, n) for t, n, _ in failed(events)] == [(10.0, names[0]), (10.0, names[2])]


def test_start_deletion_evicts_ds_pods_from_empty_nodes_but_does_not_block_deletion_on_error() -> None:
    """``TestStartDeletion/DS pods are evicted from empty nodes, but don't block deletion on error``
    (``prepareNodeForDeletion``: ``EvictDaemonSetPods``' error only logged): node-1's ds-pod-0 refused,
    tried once and given up at the retry time (10 s), when node-1 is deleted; node-0's DaemonSet pods evicted,
    node-0 deleted at once."""
    names = nodes("test", 3)
    pods = {names[0]: ds_pods(names[0], 2), names[1]: ds_pods(names[1], 2), names[2]: []}
    removals = [Removal(n, "test", False, False) for n in names[:2]]
    log, events = start_deletion(pods, {"test": names}, removals, {"default/test-node-1-ds-pod-0": -1})
    assert evicted(log) == ["test-node-0-ds-pod-0", "test-node-0-ds-pod-1", "test-node-1-ds-pod-1"]
    assert deleted(log) == [(0.0, names[0]), (10.0, names[1])] and failed(events) == []


def test_start_deletion_with_drain_of_nodes_with_only_ds_pods() -> None:
    """``TestStartDeletion/DS pods and deletion with drain``: ``DaemonSetEvictionForOccupiedNodes`` off, the
    DaemonSet pods of the drained nodes are not evicted; the nodes deleted at once."""
    names = nodes("test", 3)
    pods = {names[0]: ds_pods(names[0], 2), names[1]: ds_pods(names[1], 2), names[2]: []}
    log, events = start_deletion(pods, {"test": names}, [Removal(n, "test", False, True) for n in names[:2]])
    assert evicted(log) == [] and deleted(log) == [(0.0, names[0]), (0.0, names[1])]
    assert failed(events) == []


def test_start_deletion_of_ds_pods_and_empty_and_drained_nodes_together() -> None:
    """``TestStartDeletion/DS pods and empty and drain deletion work correctly together``: the empty nodes
    and the drained node with only DaemonSet pods deleted at once, the other drained one once its pods have
    left; only those pods evicted."""
    names = nodes("test", 4)
    pods = {names[0]: [], names[1]: [], names[2]: removable(names[2], 2), names[3]: ds_pods(names[3], 2)}
    removals = [Removal(n, "test", False, k >= 2) for k, n in enumerate(names)]
    log, events = start_deletion(pods, {"test": names}, removals)
    assert evicted(log) == ["test-node-2-pod-0", "test-node-2-pod-1"]
    assert deleted(log) == [(0.0, names[0]), (0.0, names[1]), (0.0, names[3]), (20.0, names[2])]
    assert failed(events) == []


def test_expendable_ds_pods_are_not_evicted() -> None:
    """``createSnapshot``: the actuator's snapshot holds no expendable pod (``FilterOutExpendablePods``, below
    ``--expendable-pods-priority-cutoff``, -10), so ``podsToEvict`` never sees one: the expendable DaemonSet
    pod d1 (priority -20) ends with its node, d2 is evicted."""
    pods = [pod("p1"), pod("d1", -20, daemon=True), pod("d2", daemon=True)]
    cluster = HandKeptCluster(ManualClock(), {"n1": pods}, {"ng": ["n1"]})
    actuate(cluster, [Removal("n1", "ng", False, True)], LEGACY_20)
    assert evicted(cluster.log) == ["d2", "p1"]


def test_a_failed_drain_gives_back_the_other_nodes_of_its_atomic_group() -> None:
    """``AbortNodeDeletion`` and ``addToBatcher`` (``failuresForGroup``): in a zeroOrMaxNodeScaling group,
    the empty node queued for the batch is given back with the node whose drain failed, with ``couldn't scale
    down other nodes in this node group``; no node of the group is deleted."""
    names = nodes("atomic-2", 2)
    pods = {names[0]: [], names[1]: removable(names[1], 1)}
    removals = [Removal(names[0], "atomic-2", True, False), Removal(names[1], "atomic-2", True, True)]
    log, events = start_deletion(pods, {"atomic-2": names}, removals, {"default/atomic-2-node-1-pod-0": -1})
    assert deleted(log) == []
    assert [(t, n) for t, n, _ in failed(events)] == [(10.0, names[1]), (10.0, names[0])]
    assert failed(events)[0][2].startswith(
        "failed to drain and delete node: Failed to drain node /atomic-2-node-1"
    )
    assert (
        failed(events)[1][2]
        == "failed to delete empty node: couldn't scale down other nodes in this node group"
    )


def not_empty(node: str) -> str:
    """Why ``deleteNodesAsync`` gives back a node chosen empty that has a pod to move (``AbortNodeDeletion``'
    result error, after ``CleanUpAndRecordFailedScaleDownEvent``'s words)."""
    return f'failed to delete empty node: failed to delete empty node "{node}", new pods scheduled'


def test_start_deletion_gives_back_nodes_with_pods_passed_as_empty() -> None:
    """``TestStartDeletion/nodes with pods are not deleted if the node is passed as empty``
    (``deleteNodesAsync``' second look, ``GetPodsToMove``: ``node is not empty``): node-0 and node-1, chosen
    empty, each have two pods to move: each tainted then untainted (``NodeDeleteErrorInternal``), no pod
    evicted, no node deleted nor counted."""
    names = nodes("test", 3)
    pods = {names[0]: removable(names[0], 2), names[1]: removable(names[1], 2), names[2]: []}
    cluster = HandKeptCluster(ManualClock(), pods, {"test": names})
    removals = [Removal(n, "test", False, False) for n in names[:2]]
    events, removed = actuator_run(cluster, removals, START_DELETION)
    assert cluster.log == [(0.0, "taint", names[0]), (0.0, "taint", names[1]),
                           (0.0, "untaint", names[0]), (0.0, "untaint", names[1])]  # fmt: skip
    assert failed(events) == [(0.0, names[0], not_empty(names[0])), (0.0, names[1], not_empty(names[1]))]
    assert removed == []


def test_start_deletion_gives_back_atomic_nodes_with_pods_passed_as_empty_with_their_group() -> None:
    """``TestStartDeletion/atomic nodes with pods are not deleted if the node is passed as empty``:
    test-node-1 and atomic-2-node-1, chosen empty, have pods to move: given back (``node is not empty``,
    ``NodeDeleteErrorInternal``); atomic-2-node-0, empty, is given back with its zeroOrMaxNodeScaling group
    (``failuresForGroup``: ``couldn't scale down other nodes in this node group``,
    ``NodeDeleteErrorFailedToDelete``); test-node-0, of a group deleted node by node, is deleted."""
    test, atomic = nodes("test", 3), nodes("atomic-2", 2)
    pods = {test[0]: [], test[1]: removable(test[1], 2), atomic[0]: [], atomic[1]: removable(atomic[1], 2)}
    cluster = HandKeptCluster(ManualClock(), pods, {"test": test, "atomic-2": atomic})
    removals = [*(Removal(n, "test", False, False) for n in test[:2]),
                *(Removal(n, "atomic-2", True, False) for n in atomic)]  # fmt: skip
    events, removed = actuator_run(cluster, removals, START_DELETION)
    assert deleted(cluster.log) == [(0.0, test[0])] and evicted(cluster.log) == []
    assert sorted(e[2] for e in cluster.log if e[1] == "untaint") == sorted([test[1], *atomic])
    group = "failed to delete empty node: couldn't scale down other nodes in this node group"
    assert failed(events) == [
        (0.0, test[1], not_empty(test[1])),
        (0.0, atomic[1], not_empty(atomic[1])),
        (0.0, atomic[0], group),
    ]
    assert removed == [Removed(0.0, test[0], "empty")]


# -- actuator.go: deleteNodesAsync's second look (GetPodsToMove after the delay) ---------------------------


def second_look(
    pods: Mapping[str, Sequence[Pod]],
    removals: Sequence[Removal],
    meanwhile: Callable[[HandKeptCluster], None],
    budgets: Sequence[tuple[DisruptionBudget, int]] = (),
) -> tuple[HandKeptCluster, list[ScaleEvent], list[Removed]]:
    """The actuator started at 0 s on ``removals`` with the default ``--node-delete-delay-after-taint`` (5 s),
    ``meanwhile`` changing the cluster at 2 s."""
    groups = {
        "ng": [n for n in pods if not n.startswith("atomic")],
        "atomic": [n for n in pods if n.startswith("atomic")],
    }
    cluster = HandKeptCluster(ManualClock(), pods, groups, budgets=list(budgets))
    cluster.clock.at(2.0, Priority.COMPLETION, lambda: meanwhile(cluster))
    events, removed = actuator_run(cluster, removals, LEGACY_20, DELAY_AFTER_TAINT_S)
    return cluster, events, removed


def bind(node: str, *pods: Pod) -> Callable[[HandKeptCluster], None]:
    """Pods bound to ``node`` (``spec.nodeName``, or tolerating the mark) during the delay."""

    def land(cluster: HandKeptCluster) -> None:
        for p in pods:
            cluster.state.assign(p, node, cluster.clock.now)

    return land


#: p1, a ReplicaSet's pod, and the budget that selects it (minAvailable 1)
WEB = Pod("p1", labels={"app": "web"}, owner=OwnerRef("ReplicaSet", "web"))
BUDGET = DisruptionBudget("default", "web", (("app", "web"),), min_available=1)


def used_up(cluster: HandKeptCluster) -> None:
    """The budget allows no disruption any more (a pod it selects elsewhere went unready, say)."""
    cluster.budgets = [(BUDGET, 0)]


def test_a_pod_bound_to_an_empty_node_during_the_delay_gives_it_back() -> None:
    """``deleteNodesAsync``: an empty node (``drain`` false) whose second look finds a pod to move is given
    back (``AbortNodeDeletion(..., "node is not empty", ...)``): untainted at 5 s, not deleted nor counted;
    a DaemonSet pod landing there is no pod to move (``GetPodsToMove`` returns it apart): that node goes."""
    pods: dict[str, list[Pod]] = {"e": [], "f": []}
    removals = [Removal("e", "ng", False, False), Removal("f", "ng", False, False)]

    def both(cluster: HandKeptCluster) -> None:
        bind("e", pod("late"))(cluster)
        bind("f", pod("agent", daemon=True))(cluster)

    cluster, events, removed = second_look(pods, removals, both)
    assert cluster.log == [
        (0.0, "taint", "e"),
        (0.0, "taint", "f"),
        (5.0, "untaint", "e"),
        (5.0, "delete", "f"),
    ]
    assert failed(events) == [(5.0, "e", not_empty("e"))]
    assert removed == [Removed(5.0, "f", "empty")]


def test_a_blocking_pod_bound_to_an_empty_node_during_the_delay_fails_get_pods_to_move() -> None:
    """``GetPodsToMove`` returns an error before the emptiness is judged: a pod with no controller (the
    ``replicated`` rule) bound to an empty node gives it back with ``failed to get pods to move on node``'s
    result, ``GetPodsToMove for "<node>" returned error: ...`` (gpufleet's words for the blocking pod)."""
    bare = Pod("bare")
    _, events, removed = second_look({"e": []}, [Removal("e", "ng", False, False)], bind("e", bare))
    why = (
        'failed to delete empty node: GetPodsToMove for "e" returned error: '
        "pod default/bare is not replicated (it has no controller)"
    )
    assert failed(events) == [(5.0, "e", why)]
    assert removed == []


def test_an_empty_nodes_second_look_reads_no_disruption_budget() -> None:
    """``deleteNodesAsync`` builds a ``remainingPdbTracker`` only for a drained node's group: an empty node's
    ``GetPodsToMove`` has none, so a pod landed there that a budget with no disruption left selects is a pod
    to move (``node is not empty``), not a blocking one."""
    guarded = replace(WEB, name="late")
    _, events, _ = second_look(
        {"e": []}, [Removal("e", "ng", False, False)], bind("e", guarded), [(BUDGET, 0)]
    )
    assert failed(events) == [(5.0, "e", not_empty("e"))]


def test_a_drained_nodes_budget_used_up_during_the_delay_gives_it_back() -> None:
    """A drained node's second look reads the PodDisruptionBudgets as they are after the delay
    (``remainingPdbTracker.SetPdbs`` of the lister's): p1's budget, which allowed one disruption when the node
    was chosen, allows none now: ``GetPodsToMove`` blocks (``NotEnoughPdb``), the node is given back at 5 s
    with nothing evicted, not counted scaled down."""
    cluster, events, removed = second_look(
        {"d": [WEB]}, [Removal("d", "ng", False, True)], used_up, [(BUDGET, 1)]
    )
    assert cluster.log == [(0.0, "taint", "d"), (5.0, "untaint", "d")]
    why = (
        'failed to drain and delete node: GetPodsToMove for "d" returned error: '
        "pod default/p1 is protected by PodDisruptionBudget default/web"
    )
    assert failed(events) == [(5.0, "d", why)] and removed == []


def test_a_drained_node_evicts_the_pods_bound_during_the_delay_but_the_expendable_ones() -> None:
    """The drain evicts the pods of the second look's snapshot (``ScheduleDeletion(nodeInfo, ...)``,
    ``DrainNode``), not those of the scan: p2, bound during the delay, is evicted with p1; x, bound too but
    below ``--expendable-pods-priority-cutoff`` (``createSnapshot``' ``FilterOutExpendablePods``), is not."""
    landed = bind("d", pod("p2"), pod("x", -20))
    cluster, events, removed = second_look({"d": [pod("p1")]}, [Removal("d", "ng", False, True)], landed)
    assert [e for e in cluster.log if e[1] == "evict"] == [
        (5.0, "evict", "p1", 20.0),
        (5.0, "evict", "p2", 20.0),
    ]
    assert failed(events) == [] and removed == [Removed(25.0, "d", "underutilized")]


def test_a_second_look_that_gives_back_a_drained_node_gives_back_its_atomic_group() -> None:
    """``AbortNodeDeletion`` (``failed to get pods to move on node``) sets ``failuresForGroup``: the empty
    node of a zeroOrMaxNodeScaling group, past its own second look, is given back as it comes to
    ``addToBatcher`` (``couldn't scale down other nodes in this node group``), with its sibling whose pod now
    blocks; the node of a group deleted node by node, handed to the batcher alone, is deleted."""
    pods = {"atomic-0": [], "atomic-1": [WEB], "n": []}
    removals = [Removal("atomic-0", "atomic", True, False), Removal("atomic-1", "atomic", True, True),
                Removal("n", "ng", False, False)]  # fmt: skip
    cluster, events, removed = second_look(pods, removals, used_up, [(BUDGET, 1)])
    assert deleted(cluster.log) == [(5.0, "n")] and removed == [Removed(5.0, "n", "empty")]
    assert [(t, n) for t, n, _ in failed(events)] == [(5.0, "atomic-1"), (5.0, "atomic-0")]
    assert (
        failed(events)[1][2]
        == "failed to delete empty node: couldn't scale down other nodes in this node group"
    )


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            f"TestStartDeletion/{name}", id=f"TestStartDeletion/{name}", marks=pytest.mark.skip(reason=reason)
        )
        for name, reason in (
            ("failure to taint empty node stops deletion and cleans already applied taints", TAINT_FAILS),
            (
                "failure to taint empty atomic node stops deletion and cleans already applied taints",
                TAINT_FAILS,
            ),
            (
                "failure to taint drain node stops further deletion and cleans already applied taints",
                TAINT_FAILS,
            ),
            (
                "failure to taint drain atomic node stops further deletion and cleans already applied taints",
                TAINT_FAILS,
            ),
            ("nodes that failed drain are forcefully deleted", FORCE),
            ("nodes that failed deletion are correctly reported in results", CLOUD_FAILS),
        )
    ]
    + [pytest.param("TestStartForceDeletion", marks=pytest.mark.skip(reason=FORCE))]
    + [
        pytest.param(f"TestStartDeletionInBatchBasic/{name}", marks=pytest.mark.skip(reason=CLOUD_FAILS))
        for name in (
            "Node deletion failed for one group",
            "Node deletion failed for one group two times",
            "Node deletion failed for all groups",
        )
    ],
)
def test_actuator_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)


# -- delete_in_batch_test.go, TestStartDeletionInBatchBasic -----------------------------------------------


def batches(
    log: Sequence[tuple[object, ...]], groups: Mapping[str, Sequence[str]]
) -> list[tuple[object, str, int]]:
    """The deletions by time and group: (time, group, nodes)."""
    group_of = {n: g for g, names in groups.items() for n in names}
    counts: dict[tuple[object, str], int] = {}
    for t, name in deleted(log):
        counts[(t, group_of[name])] = counts.get((t, group_of[name]), 0) + 1
    return [(t, g, n) for (t, g), n in sorted(counts.items(), key=lambda i: (str(i[0][0]), i[0][1]))]


def batched(
    pods: Mapping[str, Sequence[Pod]], groups: Mapping[str, Sequence[str]], removals: Sequence[Removal]
) -> list[tuple[object, str, int]]:
    cluster = HandKeptCluster(ManualClock(), pods, groups)
    settings = AutoscalerSettings(max_graceful_termination_s=20, node_deletion_batcher_interval_s=1.0)
    events = actuate(cluster, removals, settings)
    assert failed(events) == []
    return batches(cluster.log, groups)


@pytest.mark.parametrize(
    ("chosen", "drained", "want"),
    [
        pytest.param(["ng-1-node-0"], False, [(1.0, "ng-1", 1)], id="Add 1 node"),
        pytest.param(
            nodes("ng-1", 5), False, [(1.0, "ng-1", 5)], id="Add nodes that belong to one nodeGroup"
        ),
        pytest.param(
            ["ng-1-node-0", "ng-2-node-0", "ng-2-node-1"],
            False,
            [(1.0, "ng-1", 1), (1.0, "ng-2", 2)],
            id="Add 3 nodes that belong to 2 nodeGroups",
        ),
        pytest.param(
            ["ng-1-node-0", "ng-2-node-0", "ng-2-node-1"],
            True,
            [(21.0, "ng-1", 1), (21.0, "ng-2", 2)],
            id="Add 3 nodes that belong to 2 nodeGroups, all nodes are drained",
        ),
    ],
)
def test_add_node_to_bucket_makes_one_batch_a_group(
    chosen: list[str], drained: bool, want: list[object]
) -> None:
    """``TestAddNodeToBucket`` (``NodeDeletionBatcher.AddNodes``, ``addNodesToBucket``): with
    ``--node-deletion-batcher-interval`` 1 s, the nodes of a group due together go in one batch, deleted 1 s
    after the first (the drained ones once drained, their pods' 30 s cut to 20)."""
    groups = {"ng-1": nodes("ng-1", 5), "ng-2": nodes("ng-2", 5)}
    pods = {n: (removable(n, 1) if drained else []) for names in groups.values() for n in names}
    removals = [Removal(n, n[:4], False, drained) for n in chosen]
    assert batched(pods, groups, removals) == want


def test_a_node_due_after_the_interval_makes_a_batch_of_its_own() -> None:
    """``NodeDeletionBatcher.remove``: the bucket is emptied when its interval is over; a node of the same
    group drained later (its pod's grace period 20 s) starts a new one."""
    groups = {"ng": nodes("ng", 3)}
    pods = {"ng-node-0": [], "ng-node-1": [], "ng-node-2": removable("ng-node-2", 1)}
    removals = [Removal("ng-node-0", "ng", False, False), Removal("ng-node-1", "ng", False, False),
                Removal("ng-node-2", "ng", False, True)]  # fmt: skip
    assert batched(pods, groups, removals) == [(1.0, "ng", 2), (21.0, "ng", 1)]


def test_remove_deletes_the_whole_bucket() -> None:
    """``TestRemove/Regular successful remove``: a group's five nodes in one bucket, all deleted."""
    groups = {"ng": nodes("ng", 5)}
    removals = [Removal(n, "ng", False, False) for n in groups["ng"]]
    assert batched({n: [] for n in groups["ng"]}, groups, removals) == [(1.0, "ng", 5)]


def test_start_deletion_in_batch_deletes_every_group() -> None:
    """``TestStartDeletionInBatchBasic/Succesfull deletion for all node group``: 4, 5 and 1 empty nodes of
    three groups, interval 1 s: every one deleted, a batch a group."""
    groups = {f"test-ng-{k}": nodes(f"test-ng-{k}", n) for k, n in ((1, 4), (2, 5), (3, 1))}
    removals = [Removal(n, g, False, False) for g, names in groups.items() for n in names]
    pods = {n: [] for names in groups.values() for n in names}
    assert batched(pods, groups, removals) == [
        (1.0, "test-ng-1", 4),
        (1.0, "test-ng-2", 5),
        (1.0, "test-ng-3", 1),
    ]


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            "TestRemove/Remove NodeGroup that is not present in bucket",
            marks=pytest.mark.skip(
                reason="an internal error of the batcher's API, which gpufleet's has no call for"
            ),
        ),
        pytest.param("TestRemove/Unsuccessful remove", marks=pytest.mark.skip(reason=CLOUD_FAILS)),
    ],
)
def test_delete_in_batch_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)


# -- delay.go (TestWaitForDelayDeletion) and the node's deletion after it ------------------------------------


@pytest.mark.parametrize(
    ("annotated", "timeout", "deleted_at"),
    [
        pytest.param(False, 6.0, 0.0, id="annotation not set"),
        pytest.param(True, 6.0, 6.0, id="annotation set but not removed"),
        pytest.param(True, 0.0, 0.0, id="timeout is 0 - mechanism disable"),
    ],
)
def test_wait_for_delay_deletion(annotated: bool, timeout: float, deleted_at: float) -> None:
    """``TestWaitForDelayDeletion`` (``WaitForDelayDeletion``, in ``prepareNodeForDeletion``): a node
    annotated ``delay-deletion.cluster-autoscaler.kubernetes.io/...`` waits for the annotation to go, up to
    ``--node-deletion-delay-timeout`` (here 6 s), then is deleted all the same; 0 turns the wait off."""
    cluster = HandKeptCluster(
        ManualClock(), {"n1": []}, {"ng": ["n1"]}, delayed=frozenset({"n1"} if annotated else ())
    )
    settings = AutoscalerSettings(node_deletion_delay_timeout_s=timeout)
    events = actuate(cluster, [Removal("n1", "ng", False, False)], settings)
    assert deleted(cluster.log) == [(deleted_at, "n1")] and failed(events) == []


@pytest.mark.skip(reason="nobody takes a delay-deletion annotation off a node in a gpufleet run")
def test_wait_for_delay_deletion_annotation_set_and_removed() -> None:
    raise AssertionError("TestWaitForDelayDeletion/annotation set and removed")


def test_a_drained_node_with_a_delay_deletion_annotation_waits_the_timeout_after_its_drain() -> None:
    """``prepareNodeForDeletion``: the wait follows the drain; ``--node-deletion-delay-timeout`` 2 minutes by
    default: p1 gone at 20 s, the node deleted at 140 s; the other node, not annotated, at 20 s."""
    pods = {"n1": [pod("p1")], "n2": [pod("p2")]}
    cluster = HandKeptCluster(ManualClock(), pods, {"ng": ["n1", "n2"]}, delayed=frozenset({"n1"}))
    actuate(cluster, [Removal(n, "ng", False, True) for n in ("n1", "n2")], LEGACY_20)
    assert deleted(cluster.log) == [(20.0, "n2"), (140.0, "n1")]


def test_an_atomic_group_waits_for_its_node_with_a_delay_deletion_annotation() -> None:
    """``addToBatcher`` after ``WaitForDelayDeletion``: a zeroOrMaxNodeScaling group's batch is deleted once
    its last node is ready, the annotated one after its wait (120 s)."""
    names = nodes("atomic-2", 2)
    cluster = HandKeptCluster(
        ManualClock(), {n: [] for n in names}, {"atomic-2": names}, delayed=frozenset({names[0]})
    )
    actuate(cluster, [Removal(n, "atomic-2", True, False) for n in names], AutoscalerSettings())
    assert deleted(cluster.log) == [(120.0, names[0]), (120.0, names[1])]


# -- scaled_down_nodes_total (delete_in_batch.go, RegisterAndRecordSuccessfulScaleDownEvent) -----------------


def test_scaled_down_nodes_counts_each_node_when_deleted_by_its_scale_down_reason() -> None:
    """``RegisterAndRecordSuccessfulScaleDownEvent`` calls ``metrics.RegisterScaleDown`` once a node is
    deleted, with ``nodeScaleDownReason``: ``empty`` (deleted with no drain), ``underutilized`` (drained),
    ``unready`` (NotReady, drained or not); a node whose drain failed is not counted."""
    pods = {"e": [], "d": [pod("p1")], "u": [], "f": [pod("p2")]}
    cluster = HandKeptCluster(
        ManualClock(), pods, {"ng": list(pods)}, refuse={"default/p2": -1}, unready=frozenset({"u"})
    )
    removals = [Removal("e", "ng", False, False), Removal("d", "ng", False, True),
                Removal("u", "ng", False, False), Removal("f", "ng", False, True)]  # fmt: skip
    events, removed = actuator_run(cluster, removals, ONE_TRY_20)
    assert removed == [Removed(0.0, "e", "empty"), Removed(0.0, "u", "unready"),
                       Removed(20.0, "d", "underutilized")]  # fmt: skip
    assert [n for _, n, _ in failed(events)] == ["f"]


# -- actuator.go: deleteNodesAsync's --node-delete-delay-after-taint -----------------------------------------

#: ``--node-delete-delay-after-taint``'s default (``config/flags/flags.go``: ``5*time.Second``)
DELAY_AFTER_TAINT_S = AutoscalerSettings().node_delete_delay_after_taint_s


def test_the_drains_and_empty_deletions_start_the_delay_after_the_taint() -> None:
    """``deleteNodesAsync`` sleeps ``nodeDeleteDelayAfterTaint`` (5 s by default) after ``taintNodesSync``
    before it reads the nodes' pods and drains or deletes them, empty nodes (``deleteAsyncEmpty``) as
    drained ones (``deleteAsyncDrain``): both nodes tainted at 0 s, counted as being deleted meanwhile
    (``NodeDeletionTracker.StartDeletion``), the empty one deleted at 5 s, the other's pod evicted at 5 s
    and the node deleted once it has left (25 s)."""
    assert DELAY_AFTER_TAINT_S == 5.0
    clock = ManualClock()
    cluster = HandKeptCluster(clock, {"e": [], "d": [pod("p1")]}, {"ng": ["e", "d"]})
    removals = [Removal("e", "ng", False, False), Removal("d", "ng", False, True)]
    actuator = Actuator(cluster, clock, LEGACY_20, [], lambda: None)  # type: ignore[arg-type]
    actuator.start(removals)
    clock.run_until(4.9)
    assert cluster.log == [(0.0, "taint", "e"), (0.0, "taint", "d")]
    assert actuator.deleting == {"e", "d"} and actuator.draining == {"d"}
    clock.run_until(3600.0)
    assert cluster.log[2:] == [(5.0, "evict", "p1", 20.0), (5.0, "delete", "e"), (25.0, "delete", "d")]
    assert actuator.removed == [Removed(5.0, "e", "empty"), Removed(25.0, "d", "underutilized")]


def test_the_pods_evicted_are_those_on_the_node_after_the_delay() -> None:
    """``deleteNodesAsync`` builds its snapshot (``createSnapshot``) after its sleep, and the drain evicts
    the pods of that snapshot's node (``ScheduleDeletion``, ``DrainNode``): a pod gone from the node during
    the delay is not evicted."""
    cluster = HandKeptCluster(ManualClock(), {"d": [pod("p1"), pod("p2")]}, {"ng": ["d"]})
    cluster.clock.at(2.0, Priority.COMPLETION, lambda: cluster._leave("default/p2"))
    _, removed = actuator_run(cluster, [Removal("d", "ng", False, True)], LEGACY_20, DELAY_AFTER_TAINT_S)
    assert cluster.log == [(0.0, "taint", "d"), (5.0, "evict", "p1", 20.0), (25.0, "delete", "d")]
    assert removed == [Removed(25.0, "d", "underutilized")]


def test_a_node_gone_during_the_delay_has_no_pod_to_evict() -> None:
    """A node that went away during the delay (a spot reclaim, a lost node) is in no snapshot any more:
    nothing to evict, and its deletion ends as that of a node gone during its drain does (the wait finds
    no pod on it)."""
    clock = ManualClock()
    cluster = HandKeptCluster(clock, {"d": [pod("p1")]}, {"ng": ["d"]})

    def gone() -> None:
        cluster.state.unassign("default/p1")
        cluster.state.remove_node("d")

    clock.at(2.0, Priority.COMPLETION, gone)
    _, removed = actuator_run(cluster, [Removal("d", "ng", False, True)], LEGACY_20, DELAY_AFTER_TAINT_S)
    assert cluster.log == [(0.0, "taint", "d"), (5.0, "delete", "d")]
    assert removed == [Removed(5.0, "d", "underutilized")]


def test_a_scale_down_with_no_node_waits_for_nothing() -> None:
    """``startDeletion`` returns ``ScaleDownNoNodeDeleted`` before tainting or sleeping when no node is to
    go (and ``deleteNodesAsync`` returns at once for a group with none): a scan that deletes nothing leaves
    nothing to happen 5 s later."""
    scheduled: list[float] = []

    class WatchedClock(ManualClock):
        def at(
            self, time: float, priority: Priority, action: Callable[[], None], background: bool = False
        ) -> None:
            scheduled.append(time)
            super().at(time, priority, action, background)

    clock = WatchedClock()
    cluster = HandKeptCluster(clock, {"n": []}, {"ng": ["n"]})
    actuator = Actuator(cluster, clock, AutoscalerSettings(), [], lambda: None)  # type: ignore[arg-type]
    actuator.start([])
    assert scheduled == [] and cluster.log == []
