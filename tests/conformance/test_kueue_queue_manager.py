"""Kueue's queue manager and ClusterQueue heaps, ``kubernetes-sigs/kueue:
pkg/cache/queue/manager_test.go`` and ``pkg/cache/queue/cluster_queue_test.go`` (at commit ``ff69552e79ad``),
case by case: each pytest id is ``<upstream test>/<case>`` (or the test's name where it has no table).

gpufleet keeps no heap per ClusterQueue. Its queue code is:

* ``gpufleet.scheduling.kueue.admission._heads`` (upstream's ``Manager.Heads`` / ``ClusterQueue.Pop``): each
  ClusterQueue's first pending workload in queue order (``Workload.queue_order``: higher priority, then the
  older creation time) that is not set aside as inadmissible, a ``BestEffortFIFO`` queue's sticky
  preemptor first (``CycleResult.preemptors``). A ClusterQueue's pop order here is its heads taken one after
  another (``pop_order``, upstream's ``popNamesFromCQ``);
* ``admission._set_aside`` (``RequeueIfNotPresent``): which heads a cycle sets aside as inadmissible
  (``BestEffortFIFO``: those that do not fit, find no preemption candidates, or whose namespace the queue
  does not select; ``StrictFIFO``: only the last), run here through one cycle of ``admission.schedule`` that
  gives its head each requeue reason;
* ``gpufleet.control.kueue_queues.KueueQueues`` (the manager): which LocalQueue and ClusterQueue a workload's
  pods are queued in (``LocalQueue <name> doesn't exist``), what is pending (its ``summary``), and the set
  of inadmissible workloads, moved back to the heads (``QueueInadmissibleWorkloads``) when quota is
  released (in any ClusterQueue: upstream requeues those of the cohort tree whose quota changed, a subset;
  the others, tried again, are set aside again). It runs here on plain pods labelled
  ``kueue.x-k8s.io/queue-name`` over a hand-kept ``QueuePort`` (``conftest.PlainPodsQueuePort``) and a
  manual clock; a pod's creation is its workload's creation time.

What gpufleet does not model is skipped with its reason: Kueue objects changing during a run (ClusterQueue,
LocalQueue and Workload add/update/delete events: a scenario's objects are fixed), Prometheus metrics, the
manager's goroutines (blocking ``Heads``, cancellation), ``waitForPodsReady``'s ``Requeued`` condition
(gpufleet requeues a workload the moment its backoff ends: the workload controller's ``Requeued=true`` step
is folded into it), Admission Fair Sharing, the visibility API's snapshots, scheduling equivalence hashing,
flavor scan progress (``LastAssignment``), the TAS second pass, the unadmitted-workloads observability, and
workload ``spec.active`` set by a user.

``waitForPodsReady``'s queue side (``backoffWaitingTimeExpired``, ``GetQueueOrderTimestamp``) is
``gpufleet.scheduling.kueue.pods_ready`` (``backoff_expired``, ``queue_order_time``); the manager keeps a
workload whose ``requeueAt`` is to come out of every cycle (upstream: in its queue's inadmissible workloads),
here set on the manager's workload as upstream's tests set ``RequeueState`` (``in_backoff``).
``inadmissible_workloads_test.go`` and ``scheduling_hash_counts_test.go`` test containers gpufleet does not
have and are not ported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from builders import Skip, cases
from kueue_builders import admitted, cluster_queue, flavor_quotas

from conftest import ManualClock, PlainPodsQueuePort, QueuedPodStatus
from gpufleet.control.kueue_queues import LOCAL_QUEUE_MISSING, KueueQueues
from gpufleet.model.kueue import (
    BEST_EFFORT_FIFO,
    CREATION_TIMESTAMP,
    LOWER_PRIORITY,
    NAMESPACE_NAME_LABEL,
    PODS_READY_TIMEOUT,
    QUEUE_NAME_LABEL,
    STRICT_FIFO,
    ClusterQueue,
    Cohort,
    KueueObjects,
    LocalQueue,
    ResourceFlavor,
    WaitForPodsReady,
)
from gpufleet.model.pod import Pod, Requirement
from gpufleet.scheduling.kueue.admission import (
    CLUSTER_QUEUE_INACTIVE,
    CLUSTER_QUEUE_MISSING,
    NAMESPACE_MISMATCH,
    NO_LONGER_FITS,
    _heads,
    schedule,
)
from gpufleet.scheduling.kueue.pods_ready import backoff_expired, queue_order_time
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload

FLAVORS = {"default": ResourceFlavor("default"), "second": ResourceFlavor("second")}

# -- reasons for the skips --------------------------------------------------------------------------------
FIXED_OBJECTS = (
    "a scenario's Kueue objects are fixed for the run: gpufleet has no ClusterQueue/LocalQueue/Cohort add, "
    "update or delete events to move workloads between queues"
)
WORKLOAD_UPDATES = (
    "a workload's spec (queue name, creation time) is fixed once its pods exist: gpufleet has no Workload "
    "update events"
)
METRICS = "Kueue's Prometheus metrics (pending, finished, pending resources, custom labels) are not modelled"
CONCURRENCY = (
    "the manager's goroutines (Heads blocking until a queue fills, context cancellation, inflight "
    "workloads during a cycle) do not exist: gpufleet runs a cycle synchronously on its virtual clock"
)
REQUEUED_CONDITION = (
    "waitForPodsReady's Requeued condition is not modelled apart: gpufleet requeues a workload the moment "
    "its requeueAt passes (the workload controller's Requeued=true step folded in), so Requeued=false "
    "without a requeueAt cannot arise"
)
AFS = "Admission Fair Sharing (LocalQueue usage and weights ordering a ClusterQueue) is not modelled"
VISIBILITY = "the visibility API's pending-workloads snapshots are not modelled"
HASHING = "scheduling equivalence hashing (SchedulingEquivalenceHashing) is not modelled"
SCAN_PROGRESS = (
    "flavor scan progress across cycles (LastAssignment, LastTriedFlavorIdx) is not modelled: gpufleet's "
    "flavor assigner tries a ClusterQueue's flavors from the first every cycle"
)
SECOND_PASS = (
    "the TAS second pass queue is not modelled: gpufleet runs ProvisioningRequest admission checks "
    "(control.kueue_queues) but has no delayed topology requests -- it assigns a TAS pod set's topology at "
    "quota reservation, so no workload waits for a second pass once its check is Ready"
)
UNADMITTED = "the unadmitted-workloads observability (UnadmittedWorkloadsObservability) is not modelled"
INACTIVE_SPEC = (
    "a Workload given as inactive (spec.active: false) does not arise: gpufleet makes Workloads from their "
    "pods, and deactivates one only itself (waitForPodsReady's backoffLimitCount, a Rejected admission "
    "check), when it leaves the queue (tests/kueue)"
)
INTERNAL = (
    "tests a heap-internal lookup or bookkeeping (Info, AddFromLocalQueue, requeue of a workload already "
    "present); gpufleet recomputes the pending workloads from its pods every cycle"
)
COHORT_CYCLE = (
    "gpufleet rejects a scenario whose Cohort parents form a cycle (kube/kueue.py: 'the Cohort tree has a "
    "cycle'), so no ClusterQueue ever sits in one"
)
API_FAILURE = "an API patch failure while issuing preemptions (PreemptionFailed) cannot happen in gpufleet"
DRA_CHANNEL = "the KueueDRAIntegration reconcile channel is controller plumbing, not modelled"


# -- workloads as the cycle sees them ----------------------------------------------------------------------
def wl(
    name: str,
    cq: str,
    *,
    created: float = 0.0,
    priority: int = 0,
    namespace: str = "",
    cpu: int = 1000,
) -> Workload:
    """``MakeWorkload(name, namespace).Queue(...).Creation(created).Priority(priority).Request(cpu, ...)``,
    its LocalQueue resolved to ``cq``."""
    pod = Pod(name, namespace=namespace)
    main = PodSetResources("main", 1, {"cpu": cpu}, pod)
    return Workload(f"Job/{namespace}/{name}", cq, priority, created, 0, (main,))


def name_of(key: str) -> str:
    """``<ns>/<name>`` of a gpufleet key, as upstream's ``workload.Reference``."""
    return key.split("/", 1)[1]


def pop_order(pending: Sequence[Workload], set_aside: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """``popNamesFromCQ`` of every ClusterQueue: its heads, taken one after another."""
    popped = set(set_aside)
    out: dict[str, list[str]] = {}
    while heads := _heads(pending, popped):
        for head in heads:
            out.setdefault(head.cluster_queue, []).append(name_of(head.key))
            popped.add(head.key)
    return out


def cpu_queue(name: str, nominal: str = "1", **kw: Any) -> ClusterQueue:
    return cluster_queue(name, (flavor_quotas("default", ("cpu", nominal)),), **kw)


# -- the manager over a hand-kept port ---------------------------------------------------------------------
class Manager:
    """``NewManagerForUnitTests`` with its ClusterQueues, LocalQueues and Cohorts added."""

    def __init__(
        self,
        cqs: Sequence[ClusterQueue],
        lqs: Sequence[LocalQueue],
        cohorts: Sequence[Cohort] = (),
        pods_ready: WaitForPodsReady | None = None,
    ) -> None:
        objects = KueueObjects(
            flavors=dict(FLAVORS),
            cluster_queues={cq.name: cq for cq in cqs},
            local_queues={lq.key: lq for lq in lqs},
            cohorts={c.name: c for c in cohorts},
            wait_for_pods_ready=pods_ready,
        )
        self.port = PlainPodsQueuePort()
        self.clock = ManualClock()
        self.kueue = KueueQueues(self.port, self.clock, objects)  # type: ignore[arg-type]

    def add(self, name: str, namespace: str, queue: str, *, created: float = 0.0, cpu: int = 1000) -> str:
        """``AddOrUpdateWorkload`` of ``MakeWorkload(name, namespace).Queue(queue).Creation(created)``: its
        pod appears at ``created``; the manager's cycles run up to then."""
        self.clock.run_until(created)
        pod = Pod(name, namespace=namespace, labels={QUEUE_NAME_LABEL: queue}, requests={"cpu": cpu})
        self.port.pods[pod.key] = QueuedPodStatus(pod)
        assert self.kueue.gate(pod)
        return pod.key

    def run(self) -> None:
        self.clock.run_until(self.clock.now)

    def finish(self, pod_key: str) -> None:
        """The workload's pod succeeds (its quota is released: the workload finished in the cohort)."""
        status = self.port.pods[pod_key]
        status.phase = "Succeeded"
        self.kueue.pod_finished(status.pod)
        self.kueue.settle()

    def delete(self, pod_key: str) -> None:
        """``DeleteWorkload``: the workload's pod is deleted."""
        status = self.port.pods[pod_key]
        status.deleted_s = self.clock.now
        self.kueue.pod_finished(status.pod)
        self.kueue.settle()

    def pending(self) -> dict[str, int]:
        """Each ClusterQueue's pending workloads (``PendingWorkloads`` of a LocalQueue that is the only one of
        its ClusterQueue)."""
        return {name: q["pending"] for name, q in self.kueue.summary()["cluster_queues"].items()}

    def message(self, pod_key: str) -> str | None:
        return self.port.pods[pod_key].message

    def in_backoff(self, pod_key: str, requeue_at: float | None, count: int = 10) -> None:
        """``RequeueState(count, requeueAt)`` with an ``Evicted`` condition of reason ``PodsReadyTimeout``:
        the pod's workload was evicted by the PodsReady timeout at 0 s and may be queued again at
        ``requeue_at``."""
        wl = self.kueue.workloads[f"Pod/{pod_key}"]
        wl.requeue_count, wl.requeue_at = count, requeue_at
        wl.evictions.append({"t_s": 0.0, "reason": PODS_READY_TIMEOUT, "by": None, "underlying_cause": None})

    def inadmissible(self) -> set[str]:
        """``DumpInadmissible``: the workloads set aside, as ``<ns>/<name>``."""
        return {key.split("/", 1)[1] for key in self.kueue.set_aside}


# == manager_test.go ======================================================================================
def test_TestAddLocalQueueOrphans() -> None:
    """Workloads of LocalQueue ``earth/foo`` are queued in its ClusterQueue; those of a LocalQueue that does
    not exist (``earth/bar``, ``moon/foo``) are in none. (``d`` reserved, ``e`` inactive and ``f`` finished
    before Kueue saw them: gpufleet's workloads enter Kueue as their pods appear, so they are left out.)"""
    m = Manager([cpu_queue("cq", "0")], [LocalQueue("foo", "earth", "cq")])
    a = m.add("a", "earth", "foo")
    b = m.add("b", "earth", "bar")
    c = m.add("c", "earth", "foo")
    moon = m.add("a", "moon", "foo")
    m.run()
    assert m.pending() == {"cq": 2}
    assert (m.message(b), m.message(moon)) == (
        LOCAL_QUEUE_MISSING.format("bar"),
        LOCAL_QUEUE_MISSING.format("foo"),
    )
    assert m.message(a) is not None and m.message(c) is not None
    assert not m.port.released


def test_TestAddClusterQueueOrphans() -> None:
    """The workloads of two LocalQueues of ``cq`` pop in creation order, ``/b`` before ``/a`` (the deletion
    and recreation of the ClusterQueue in between is not modelled: fixed objects)."""
    pending = [wl("a", "cq", created=1.0), wl("b", "cq", created=0.0), wl("d", "baz-missing", created=0.0)]
    assert pop_order(pending)["cq"] == ["/b", "/a"]


QUEUE_INADMISSIBLE: list[Any] = [
    (
        "deduplication with shared root",
        {"cq1": "child1", "cq2": "child2"},
        {"foo": "cq1", "bar": "cq2"},
        [("a", "foo", 0.0), ("b", "bar", 1.0)],
    ),
    (
        "cohort subtree aggregates count across multiple cluster queues",
        {"cq1": "child1", "cq2": "child1", "cq3": "child2"},
        {"q1": "cq1", "q2": "cq2", "q3": "cq3"},
        [("a", "q1", 0.0), ("b", "q2", 1.0), ("c", "q3", 2.0), ("d", "q3", 3.0)],
    ),
    ("cohort cycle", Skip(COHORT_CYCLE)),
]


@pytest.mark.parametrize(
    ("parents", "lqs", "workloads"), cases("TestQueueInadmissibleWorkloads", QUEUE_INADMISSIBLE, 3)
)
def test_queue_inadmissible_workloads(
    parents: dict[str, str], lqs: dict[str, str], workloads: list[tuple[str, str, float]]
) -> None:
    """Workloads set aside in the ClusterQueues of a cohort tree (``root`` over ``child1`` and ``child2``) all
    move back to the heads when quota is released in the tree (upstream: ``NotifyRetryInadmissible`` and
    ``ProcessRequeues`` over the tree's root). They are set aside here because a workload of ClusterQueue
    ``holder`` (under ``root``, no quota of its own) borrows every cpu the tree lends; it finishes."""
    cohorts = [Cohort("root"), Cohort("child1", "root"), Cohort("child2", "root")]
    queues = [cpu_queue(name, "1", cohort=parent) for name, parent in parents.items()]
    queues.append(cpu_queue("holder", "0", cohort="root"))
    local = [LocalQueue(lq, "default", cq) for lq, cq in {**lqs, "run": "holder"}.items()]
    m = Manager(queues, local, cohorts)
    runner = m.add("runner", "default", "run", cpu=1000 * len(parents))
    m.run()
    assert m.port.released == [runner]
    for name, lq, created in workloads:
        m.add(name, "default", lq, created=created)
    m.run()
    assert m.inadmissible() == {f"default/{name}" for name, _, _ in workloads}
    m.finish(runner)
    assert m.inadmissible() == set()  # wantInadmissible: none; wantActive: all of them


def test_TestRequeueWorkloadsCohortCycle() -> None:
    pytest.skip(COHORT_CYCLE)


ADD_WORKLOAD: list[Any] = [
    (
        "finished",
        Skip("a workload finished before Kueue saw it does not arise: its pods enter Kueue as created"),
    ),
    ("inactive", Skip(INACTIVE_SPEC)),
    (
        "quota_already_reserved",
        Skip("a workload holding quota before Kueue saw it does not arise: its pods enter Kueue as created"),
    ),
    ("existing_queue", "earth", "foo", None),
    ("non_existing_queue", "earth", "baz", LOCAL_QUEUE_MISSING.format("baz")),
    ("non_existing_cluster_queue", "mars", "bar", CLUSTER_QUEUE_MISSING.format("")),
    ("wrong_namespace", "mars", "foo", LOCAL_QUEUE_MISSING.format("foo")),
    ("non_existing_local_queue", "earth", "baz", LOCAL_QUEUE_MISSING.format("baz")),
]


@pytest.mark.parametrize(("namespace", "queue", "message"), cases("TestAddWorkload", ADD_WORKLOAD, 3))
def test_add_workload(namespace: str, queue: str, message: str | None) -> None:
    """``ErrLocalQueueDoesNotExistOrInactive`` is gpufleet's ``LocalQueue <name> doesn't exist``;
    ``ErrClusterQueueDoesNotExist`` (LocalQueue ``mars/bar`` names no ClusterQueue) the cycle's ``ClusterQueue
    <name> doesn't exist``; a workload that is added is pending in ``cq``."""
    m = Manager([cpu_queue("cq", "0")], [LocalQueue("foo", "earth", "cq"), LocalQueue("bar", "mars", "")])
    key = m.add("w", namespace, queue)
    m.run()
    if message is None:
        assert m.pending() == {"cq": 1}
    else:
        assert m.pending() == {"cq": 0}
        assert m.message(key) == message


@pytest.mark.parametrize("test", ["TestDeleteWorkload", "TestDeleteAndForgetWorkload"])
def test_delete_workload(test: str) -> None:
    """Of two pending workloads of ``earth/foo``, the deleted one is no longer pending (the
    ``workloadAssignedQueues`` bookkeeping that tells the two upstream tests apart is not modelled)."""
    m = Manager([cpu_queue("cq", "0")], [LocalQueue("foo", "earth", "cq"), LocalQueue("bar", "mars", "")])
    wl1 = m.add("wl1", "earth", "foo")
    m.add("wl2", "earth", "foo")
    m.run()
    assert m.pending() == {"cq": 2}
    m.delete(wl1)
    m.run()
    assert m.pending() == {"cq": 1}


STATUS: list[Any] = [
    ("foo", "fooCq", 3),
    ("bar", "barCq", 1),
    (
        "fake",
        Skip("LocalQueue status (PendingWorkloads of a LocalQueue that does not exist) is not modelled"),
    ),
]


@pytest.mark.parametrize(("cq", "want"), cases("TestStatus", STATUS, 2))
def test_status(cq: str, want: int) -> None:
    """A LocalQueue's pending workloads, as its ClusterQueue's (each LocalQueue here is the only one of its
    ClusterQueue; upstream creates no ClusterQueue, gpufleet counts per ClusterQueue so both exist, without
    quota)."""
    m = Manager(
        [cpu_queue("fooCq", "0"), cpu_queue("barCq", "0")],
        [LocalQueue("foo", "default", "fooCq"), LocalQueue("bar", "default", "barCq")],
    )
    m.add("a", "default", "foo", created=3600.0)
    for name, queue in (("b", "bar"), ("c", "foo"), ("d", "foo")):
        m.add(name, "default", queue, created=3600.0)
    m.run()
    assert m.pending()[cq] == want


REQUEUE_STRICT: list[Any] = [
    ("existing queue and obj", "cq", True),
    ("non existing queue", "missing-lq", False),
    ("non existing cluster queue", "", False),
    ("not in client", Skip("a workload missing from the API server cannot be queued in gpufleet")),
    ("has no quota reservation", Skip(INTERNAL)),
    ("finished", Skip(INTERNAL)),
    ("deactivated", Skip(INACTIVE_SPEC)),
    ("already in queue", Skip(INTERNAL)),
    ("already admitted", Skip(INTERNAL)),
]


@pytest.mark.parametrize(("cq", "want"), cases("TestRequeueWorkloadStrictFIFO", REQUEUE_STRICT, 2))
def test_requeue_workload_strict_fifo(cq: str, want: bool) -> None:
    """A StrictFIFO ClusterQueue keeps a workload it cannot admit as its head (requeued), one whose LocalQueue
    does not exist is in no ClusterQueue, one whose ClusterQueue does not exist is set aside."""
    strict = cpu_queue("cq", "0", strategy=STRICT_FIFO)
    queues = {"cq": strict}
    w = wl("wl", cq)
    if cq == "missing-lq":  # no LocalQueue: the manager never offers it to a cycle
        m = Manager([strict], [LocalQueue("foo", "", "cq")])
        key = m.add("wl", "", "baz")
        m.run()
        assert m.message(key) == LOCAL_QUEUE_MISSING.format("baz")
        assert m.pending() == {"cq": 0}
        return
    result = schedule([w], [], queues, FLAVORS, set())
    assert (w.key not in result.inadmissible) is want
    assert [h.key for h in _heads([w], set(result.inadmissible))] == ([w.key] if want else [])


HEADS_CQS = {
    "active-fooCq": cpu_queue("active-fooCq", "10"),
    "active-barCq": cpu_queue("active-barCq", "10"),
    # upstream's status checker reports it inactive; gpufleet's inactive queue names a missing flavor
    "pending-bazCq": cluster_queue("pending-bazCq", (flavor_quotas("missing", ("cpu", "10")),)),
}
HEADS: list[Any] = [
    ("empty clusterQueues", [], set()),
    ("active clusterQueues", [wl("a", "active-fooCq"), wl("b", "active-barCq")], {"a", "b"}),
    (
        "active clusterQueues with multiple workloads",
        [wl("a1", "active-fooCq"), wl("a2", "active-fooCq", created=3600.0), wl("b", "active-barCq")],
        {"a1", "b"},
    ),
    (
        "inactive clusterQueues",
        [wl("a", "active-fooCq"), wl("b", "active-barCq"), wl("c", "pending-bazCq", created=3600.0)],
        {"a", "b"},
    ),
]


@pytest.mark.parametrize(("pending", "want"), cases("TestHeads", HEADS, 2))
def test_heads(pending: list[Workload], want: set[str]) -> None:
    """The heads a cycle takes: one per active ClusterQueue; an inactive ClusterQueue's head is refused
    (``ClusterQueue pending-bazCq is inactive``) and is not nominated."""
    result = schedule(pending, [], HEADS_CQS, FLAVORS, set())
    assert {w.key.rsplit("/", 1)[1] for w, _ in result.admitted} == want
    for w in pending:
        if w.cluster_queue == "pending-bazCq":
            assert result.messages[w.key] == CLUSTER_QUEUE_INACTIVE.format("pending-bazCq")


@pytest.mark.parametrize("case", ["TestHeadsCancelled", "TestHeadsCancelledNoLostWakeup"])
def test_heads_cancelled(case: str) -> None:
    pytest.skip(CONCURRENCY)


PENDING_INFO: list[Any] = [
    ("Invalid ClusterQueue name", "invalid", []),
    ("ClusterQueue with 2 pending workloads", "cq", ["/a", "/b"]),
]


@pytest.mark.parametrize(("cq", "want"), cases("TestGetPendingWorkloadsInfo", PENDING_INFO, 2))
def test_get_pending_workloads_info(cq: str, want: list[str]) -> None:
    """A ClusterQueue's pending workloads in queue order (their positions)."""
    pending = [wl("a", "cq", created=0.0), wl("b", "cq", created=1.0)]
    assert pop_order(pending).get(cq, []) == want


WHOLE_SKIPS: list[Any] = [
    ("TestAddLocalQueue_DRAReconcileChannelGuaranteedDelivery", Skip(DRA_CHANNEL)),
    ("TestUpdateClusterQueue", Skip(FIXED_OBJECTS)),
    ("TestResyncClusterQueueGaugeMetrics", Skip(METRICS)),
    ("TestResyncLocalQueueGaugeMetrics", Skip(METRICS)),
    ("TestClusterQueueToActive", Skip(FIXED_OBJECTS)),
    ("TestUpdateLocalQueue", Skip(FIXED_OBJECTS)),
    ("TestDeleteLocalQueue", Skip(FIXED_OBJECTS)),
    ("TestUpdateUnadmittedWorkload_IgnoreVariantWorkload", Skip(UNADMITTED)),
    ("TestUpdateUnadmittedWorkload_LQMetricsDisabled", Skip(UNADMITTED)),
    ("TestDeleteLocalQueue_UnadmittedWorkloads", Skip(UNADMITTED)),
    ("TestHeadsRespectLocalQueueWeightForPreexistingWorkloads", Skip(AFS)),
    ("TestUpdateLocalQueueWeightReheapifies", Skip(AFS)),
    ("TestUpdateLocalQueueWeightReheapifiesMultipleWorkloads", Skip(AFS)),
    ("TestUpdateLocalQueueWeightZeroReheapifies", Skip(AFS)),
    # cluster_queue_test.go
    ("TestPushOrUpdateSkipsInflightWorkload", Skip(CONCURRENCY)),
    ("Test_Info", Skip(INTERNAL)),
    ("Test_AddFromLocalQueue", Skip(INTERNAL)),
    ("TestSnapshotFallsBackToBaseOrderingOnLocalQueueLookupError", Skip(AFS)),
    ("TestSnapshotStableWithConcurrentFSUpdates", Skip(AFS)),
    ("TestSnapshotUsesDefaultWeightForMissingLocalQueue", Skip(AFS)),
    ("TestHeapOrderingStableOnLocalQueueLookupError", Skip(AFS)),
    ("TestSnapshotConcurrentWithRequeueNoDataRace", Skip(CONCURRENCY)),
    ("TestSnapshotConsistentUnderConcurrentStickyChange", Skip(CONCURRENCY)),
    (
        "TestClusterQueueIsPreemptor",
        Skip("tests the preemptor's generation match (a Workload's metadata.generation), not modelled"),
    ),
    ("TestPendingResources", Skip(METRICS)),
    ("TestPendingInLocalQueueCountsInflight", Skip(CONCURRENCY)),
    ("Test_DeleteFromLocalQueue", Skip(FIXED_OBJECTS)),
    ("TestQueueInadmissibleWorkloadsDuringScheduling", Skip(CONCURRENCY)),
    ("TestQueueInadmissibleWorkloadsClearsHashes", Skip(HASHING)),
]


@pytest.mark.parametrize(
    "unused", [pytest.param(None, id=n, marks=pytest.mark.skip(reason=s.reason)) for n, s in WHOLE_SKIPS]
)
def test_not_modelled(unused: None) -> None:
    """Upstream tests without a table that gpufleet does not model (each id is the test's name)."""


def _skipped(test: str, reason: str, *names: str) -> list[Any]:
    return cases(test, [(n, Skip(reason)) for n in names], 1)


SKIPPED_TABLES: list[Any] = [
    *_skipped(
        "TestHeadsAsync",
        CONCURRENCY,
        "AddClusterQueue",
        "AddLocalQueue",
        "AddWorkload",
        "UpdateWorkload",
        "RequeueWorkload",
        "RequeueWithOutOfDateWorkload",
        "RequeueWithQueueChangedWorkload",
    ),
    *_skipped(
        "TestPendingResourceMetrics",
        METRICS,
        "add single workload",
        "add two workloads accumulates resources",
        "delete one of two workloads reduces resources",
        "delete all workloads keeps configured series at zero",
    ),
    *_skipped(
        "TestUpdateWorkload",
        WORKLOAD_UPDATES,
        "in queue",
        "between queues",
        "between cluster queues",
        "to non existent queue",
        "from non existing queue",
    ),
    *_skipped(
        "TestQueueSecondPassIfNeeded",
        SECOND_PASS,
        "single queued workload checked immediately",
        "single queued workload checked after 1s",
        "workload is evicted after being queued",
        "two queued workloads, one evicted before second pass",
        "one workload gets queued twice, don't queue if already in present in queue",
    ),
    *_skipped(
        "TestUpdateUnadmittedWorkload",
        UNADMITTED,
        "workload with empty status conditions (fresh / disabled explicit status FG)",
        "workload pending with QuotaReserved=False/WaitingForQuota and missing Admitted condition",
        "workload unadmitted due to unsatisfied checks",
        "workload unadmitted due to pending delayed topology requests",
    ),
    *_skipped(
        "TestAddOrUpdateWorkloadCarriesLastAssignment",
        SCAN_PROGRESS,
        "tracked in the heap",
        "tracked in inadmissibleWorkloads",
        "without the gate the progress is dropped",
        "without the gate the progress is dropped for an inadmissible workload",
        "tracked as inflight",
        "without the gate the progress is dropped for an inflight workload",
        "a changed scheduling shape is not carried",
    ),
    *_skipped(
        "Test_PushOrUpdate",
        REQUEUED_CONDITION,
        "should wait for Requeued=true after backoff waiting time before push to heap",
    ),
    *_skipped(
        "TestPushOrUpdateGenerationChanged",
        "a Workload's generation (spec changes after it was evaluated) is not modelled: its spec is fixed "
        "once its pods exist",
        "moves to heap when generation changed",
    ),
    *_skipped("TestSnapshotDeterministicOrder", VISIBILITY, "heap only", "heap and inadmissible"),
    *_skipped(
        "TestPendingResourcesAfterLocalQueueResync",
        METRICS,
        "the workload stays tracked as inadmissible",
        "requeuing all inadmissible workloads moves it to the heap",
        "deleting the workload removes it and its resources",
        "the workload stays tracked as inflight",
    ),
    *_skipped("TestBackoffWaitingTimeExpired", REQUEUED_CONDITION, "workload still have Requeued=false"),
    *_skipped(
        "TestFsAdmission",
        AFS,
        "workloads are ordered by LQ usage, instead of priorities",
        "workloads are ordered by LQ usage with respect to resource weights",
        "workloads are ordered by LQ usage with respect to LQs' fair sharing weights",
        "workloads with the same LQ usage are ordered by priority",
        "workloads with NoFairSharing CQ are ordered by priority",
        "workloads with no FS config are ordered by priority",
    ),
    *_skipped(
        "TestRecordInadmissibleHash",
        HASHING,
        "bulk-moves matching workloads",
        "no-op for empty hash",
        "no-op when no workloads match",
    ),
    *_skipped(
        "TestPushOrUpdateRespectsInadmissibleHashes",
        HASHING,
        "workload with blocked hash goes to inadmissible",
        "workload with non-blocked hash goes to heap",
    ),
    *_skipped(
        "TestRequeueHashTriggerByReason",
        HASHING,
        "nofit triggers hash",
        "preempt no candidates triggers hash",
        "namespace mismatch does not trigger hash",
        "preemption gated does not trigger hash",
        "generic does not trigger hash",
    ),
    *_skipped(
        "TestGetNoFitReason",
        "the QuotaReserved reason kept with an inadmissible workload (GetNoFitReason) is not modelled",
        "records status reason when requeued as NoFit",
        "records status reason when requeued as PreemptionNoCandidates",
        "falls back to PendingEvaluation if no status condition is present",
        "returns false if workload is not in inadmissibleWorkloads",
        "returns false if requeued with non-capacity reason",
    ),
    *_skipped(
        "TestClusterQueuePendingTrackers",
        METRICS,
        "no custom labels defined",
        "only ClusterQueue custom label defined",
        "Workload custom label defined: Push operation",
        "Workload custom label defined: Pop operation",
        "Workload custom label defined: ClearInflight and Delete",
        "Workload custom label defined: Requeue to inadmissible and QueueInadmissibleWorkloads",
        "Workload custom label defined: Update workload in queue with modified label",
        "Workload custom label defined: Delete workload from inadmissible",
        "Both ClusterQueue and Workload custom labels defined",
        "Workload custom label using undefined label values",
    ),
]


@pytest.mark.parametrize("unused", SKIPPED_TABLES)
def test_skipped_tables(unused: None) -> None:
    """Upstream table cases of tests gpufleet does not model (each id ``<test>/<case>``)."""


# == cluster_queue_test.go ================================================================================
def test_Test_PushOrUpdate_workload_without_requeue_state() -> None:
    """``Test_PushOrUpdate/workload doesn't have re-queue state``: the workload pushed (and pushed again,
    updated) is the one popped."""
    w = wl("workload-1", "cq", namespace="default")
    assert pop_order([w, w]) == {"cq": ["default/workload-1"]}


def test_Test_Pop() -> None:
    pending = [wl("workload-1", "cq", created=0.0), wl("workload-2", "cq", created=1.0)]
    assert pop_order(pending) == {"cq": ["/workload-1", "/workload-2"]}
    assert pop_order([]) == {}


def test_Test_Delete() -> None:
    """Of two pending workloads, each deleted one is no longer pending (``PendingTotal``)."""
    m = Manager([cpu_queue("cq", "0")], [LocalQueue("default", "default", "cq")])
    w1 = m.add("workload-1", "default", "default")
    w2 = m.add("workload-2", "default", "default")
    m.run()
    assert m.pending() == {"cq": 2}
    m.delete(w1)
    assert m.pending() == {"cq": 1}
    m.delete(w2)
    assert m.pending() == {"cq": 0}


NS_SELECTOR = (Requirement(NAMESPACE_NAME_LABEL, "In", ("ns1", "ns2")),)  # dep In (eng, sales)
CQ_IMPL: list[Any] = [
    ("add, update, delete workload", Skip(WORKLOAD_UPDATES)),
    ("re-queue multiple inadmissible workloads and count", ["w1", "w2"], ["ns1/w1", "ns2/w2"]),
    ("count only workloads that actually moved", ["w1", "w2", "w3"], ["ns1/w1", "ns2/w2"]),
    ("workload already on heap is not made inadmissible", Skip(INTERNAL)),
    ("avoid re-queueing inadmissible workloads not matching namespace selector", ["w1", "w3"], ["ns1/w1"]),
    ("update inadmissible workload", Skip(WORKLOAD_UPDATES)),
    ("delete inadmissible workload", Skip(INTERNAL)),
    ("update inadmissible workload without changes", Skip(WORKLOAD_UPDATES)),
    ("requeue inadmissible workload twice", Skip(INTERNAL)),
    ("update reclaimable pods in inadmissible", Skip(WORKLOAD_UPDATES)),
]


@pytest.mark.parametrize(("names", "want"), cases("TestClusterQueueImpl", CQ_IMPL, 2))
def test_cluster_queue_impl(names: list[str], want: list[str]) -> None:
    """Workloads set aside in a BestEffortFIFO ClusterQueue selecting namespaces ``ns1`` and ``ns2`` (its
    quota held by ``holder``), then requeued as ``holder`` finishes (``QueueInadmissibleWorkloads``): those
    of a selected namespace go back to the heap and are admitted (``wantActiveWorkloads``), the one of ``ns3``
    is set aside again with the namespace mismatch."""
    namespaces = {"w1": "ns1", "w2": "ns2", "w3": "ns3"}
    queues = {"cq": cpu_queue("cq", "10", namespaces=NS_SELECTOR)}
    holder = admitted("holder", "cq", {"cpu": "10"}, namespace="ns1")
    pending = [wl(n, "cq", namespace=namespaces[n], created=float(i)) for i, n in enumerate(names)]
    set_aside: set[str] = set()
    for _ in pending:  # cycles until each is set aside
        set_aside |= set(schedule(pending, [holder], queues, FLAVORS, set_aside).inadmissible)
    assert set_aside == {w.key for w in pending}
    # holder finishes: the inadmissible workloads are queued again
    set_aside, running, left, moved = set(), [], list(pending), []
    while (result := schedule(left, running, queues, FLAVORS, set_aside)).changed():
        set_aside |= set(result.inadmissible)
        for w, assignment in result.admitted:
            running.append(Admitted(w, assignment.flavors, dict(assignment.usage), 0.0))
            left.remove(w)
            moved.append(name_of(w.key))
    assert moved == want
    assert set_aside == {w.key for w in left}
    for w in left:
        assert schedule([w], running, queues, FLAVORS, set()).messages[w.key] == NAMESPACE_MISMATCH


# -- requeue reasons: one cycle gives the head each reason ---------------------------------------------------
def _reason(reason: str, strategy: str) -> tuple[Workload, Any]:
    """A cycle in which the head ``w`` of ClusterQueue ``cq`` (``strategy``) is requeued for ``reason``."""
    queues: dict[str, ClusterQueue]
    running: list[Admitted] = []
    w = wl("workload-1", "cq", namespace="default", priority=5)
    if reason == "NoFit":
        queues = {"cq": cpu_queue("cq", "1", strategy=strategy)}
        w = wl("workload-1", "cq", namespace="default", cpu=2000)
    elif reason == "NoFitAllFlavors":
        two = (flavor_quotas("default", ("cpu", "1")), flavor_quotas("second", ("cpu", "1")))
        queues = {"cq": cluster_queue("cq", two, strategy=strategy)}
        w = wl("workload-1", "cq", namespace="default", cpu=2000)
    elif reason == "PreemptionNoCandidates":
        queues = {"cq": cpu_queue("cq", "1", strategy=strategy, within=LOWER_PRIORITY)}
        running = [admitted("higher", "cq", {"cpu": "1"}, priority=10, namespace="default")]
    elif reason == "PendingPreemption":
        queues = {"cq": cpu_queue("cq", "1", strategy=strategy, within=LOWER_PRIORITY)}
        running = [admitted("lower", "cq", {"cpu": "1"}, priority=0, namespace="default")]
    elif reason == "NamespaceMismatch":
        only = (Requirement(NAMESPACE_NAME_LABEL, "In", ("other",)),)
        queues = {"cq": cpu_queue("cq", "1", strategy=strategy, namespaces=only)}
    else:  # FailedAfterNomination: the cohort's one free cpu goes to another queue's head first
        assert reason == "FailedAfterNomination"
        queues = {
            "first": cpu_queue("first", "1", cohort="c", strategy=strategy),
            "cq": cpu_queue("cq", "0", cohort="c", strategy=strategy),
        }
        other = wl("other", "first", namespace="default")
        return w, schedule([other, w], running, queues, FLAVORS, set())
    return w, schedule([w], running, queues, FLAVORS, set())


BEST_EFFORT_REQUEUE: list[Any] = [
    ("failure after nomination", "FailedAfterNomination", False),
    ("pending preemption", "PendingPreemption", False),
    ("preemption failed", Skip(API_FAILURE)),
    ("namespace doesn't match", "NamespaceMismatch", True),
    ("didn't fit and no pending flavors", "NoFitAllFlavors", True),
    ("didn't fit but pending flavors", Skip(SCAN_PROGRESS)),
    ("nofit", "NoFit", True),
    ("preempt no candidates", "PreemptionNoCandidates", True),
]


@pytest.mark.parametrize(
    ("reason", "want_inadmissible"), cases("TestBestEffortFIFORequeueIfNotPresent", BEST_EFFORT_REQUEUE, 2)
)
def test_best_effort_fifo_requeue_if_not_present(reason: str, want_inadmissible: bool) -> None:
    """Whether a BestEffortFIFO ClusterQueue sets its head aside as inadmissible, by the reason the cycle
    requeues it for, and whether it keeps it as its sticky head (``wantSticky``: only the preemptor,
    ``CycleResult.preemptors``). (The second requeue of a workload already present is internal.)"""
    w, result = _reason(reason, BEST_EFFORT_FIFO)
    assert (w.key in result.inadmissible) is want_inadmissible
    assert (result.preemptors.get("cq") == w.key) is (reason == "PendingPreemption")
    if reason == "FailedAfterNomination":
        assert result.messages[w.key] == NO_LONGER_FITS
    if reason == "PendingPreemption":
        assert [t.key for _, t in result.preemptions] == ["Job/default/lower"]


def test_TestFIFOClusterQueue() -> None:
    """StrictFIFO pops the oldest; a workload whose creation time moved earlier pops next; a deleted one is
    gone."""
    now = 100.0
    pending = [
        wl("now", "cq", created=now),
        wl("before", "cq", created=now - 1),
        wl("after", "cq", created=now + 1),
    ]
    assert pop_order(pending)["cq"][0] == "/before"
    popped = {pending[1].key}
    pending[2] = wl("after", "cq", created=now - 60)
    assert [h.key for h in _heads(pending, popped)] == ["Job//after"]
    popped.add(pending[2].key)
    remaining = [w for w in pending if w.key != "Job//now"]
    assert _heads(remaining, popped) == []


T1, T2, T3 = 0.0, 1.0, 2.0
STRICT_FIFO_ORDER: list[Any] = [
    (
        "w1.priority is higher than w2.priority",
        wl("w1", "cq", created=T1, priority=1000),
        wl("w2", "cq", created=T2, priority=0),
        "w1",
    ),
    (
        "w1.priority equals w2.priority and w1.create time is earlier than w2.create time",
        wl("w1", "cq", created=T1),
        wl("w2", "cq", created=T2),
        "w1",
    ),
    (
        "w1.priority equals w2.priority and w1.create time is earlier than w2.create time but w1 was evicted",
        wl("w1", "cq", created=queue_order_time(WaitForPodsReady(), T1, (T3, PODS_READY_TIMEOUT))),
        wl("w2", "cq", created=T2),
        "w2",
    ),
    (
        "w1.priority equals w2.priority and w1.create time is earlier than w2.create time and w1 was evicted "
        "but kueue is configured to always use the creation timestamp",
        wl(
            "w1",
            "cq",
            created=queue_order_time(
                WaitForPodsReady(timestamp=CREATION_TIMESTAMP), T1, (T3, PODS_READY_TIMEOUT)
            ),
        ),
        wl("w2", "cq", created=T2),
        "w1",
    ),
    (
        "p1.priority is lower than p2.priority and w1.create time is earlier than w2.create time",
        wl("w1", "cq", created=T1, priority=0),
        wl("w2", "cq", created=T2, priority=1000),
        "w2",
    ),
]


@pytest.mark.parametrize(("w1", "w2", "expected"), cases("TestStrictFIFO", STRICT_FIFO_ORDER, 3))
def test_strict_fifo(w1: Workload, w2: Workload, expected: str) -> None:
    """Queue order; a workload evicted by the PodsReady timeout (at ``T3``) is ordered by its eviction time
    with the default ``requeuingStrategy.timestamp: Eviction`` (``GetQueueOrderTimestamp``:
    ``queue_order_time``) and by its creation time with ``Creation``."""
    (head,) = _heads([w1, w2], set())
    assert head.key == f"Job//{expected}"


STRICT_REQUEUE: list[Any] = [
    ("FailedAfterNomination", "FailedAfterNomination", False),
    ("NamespaceMismatch", "NamespaceMismatch", True),
    ("Generic", "NoFit", False),
]


@pytest.mark.parametrize(
    ("reason", "want_inadmissible"), cases("TestStrictFIFORequeueIfNotPresent", STRICT_REQUEUE, 2)
)
def test_strict_fifo_requeue_if_not_present(reason: str, want_inadmissible: bool) -> None:
    """A StrictFIFO ClusterQueue keeps its head whatever the reason, except a namespace it does not select."""
    w, result = _reason(reason, STRICT_FIFO)
    assert (w.key in result.inadmissible) is want_inadmissible
    assert result.preemptors == {}  # a StrictFIFO queue's preemptor is not sticky


# == waitForPodsReady: the queue side =====================================================================
#: waitForPodsReady without blockAdmission (its defaults otherwise): the queue tests admit several workloads
NO_BLOCK = WaitForPodsReady(block_admission=False)

PUSH_OR_UPDATE: list[Any] = [
    ("workload is still under the backoff waiting time", 60.0, False),
    ("should push workload to heap after Requeued=true", None, True),
]


@pytest.mark.parametrize(("requeue_at", "popped"), cases("Test_PushOrUpdate", PUSH_OR_UPDATE, 2))
def test_push_or_update_backoff(requeue_at: float | None, popped: bool) -> None:
    """A workload evicted by the PodsReady timeout, pushed: with a ``requeueAt`` a minute ahead it stays out
    of the heap (inadmissible) and is not popped, though it is pending and fits; once requeued (no
    ``requeueAt`` left) it is popped (admitted)."""
    m = Manager([cpu_queue("cq", "1")], [LocalQueue("default", "default", "cq")], pods_ready=NO_BLOCK)
    key = m.add("workload-1", "default", "default")
    m.in_backoff(key, requeue_at)
    m.run()
    assert (key in m.port.released) is popped
    assert m.pending() == {"cq": 0 if popped else 1}


def test_TestPushOrUpdateGenerationChanged_stays_inadmissible_when_backoff_unexpired() -> None:
    """``TestPushOrUpdateGenerationChanged/stays inadmissible when generation changed but backoff
    unexpired``: a workload whose ``requeueAt`` is an hour ahead is not moved to the heap by what would move
    it otherwise (the generation change is not modelled; here quota released,
    ``QueueInadmissibleWorkloads``)."""
    m = Manager([cpu_queue("cq", "1")], [LocalQueue("default", "default", "cq")], pods_ready=NO_BLOCK)
    holder = m.add("holder", "default", "default")
    key = m.add("workload-1", "default", "default")
    m.in_backoff(key, 3600.0, count=1)
    m.run()
    m.finish(holder)
    m.run()
    assert key not in m.port.released and m.pending() == {"cq": 1}


BACKOFF_EXPIRED: list[Any] = [
    ("workload doesn't have requeueState", None, True),
    ("workload doesn't have an evicted condition with reason=PodsReadyTimeout", None, True),
    ("now already has exceeded requeueAt", -60.0, True),
    ("now hasn't yet exceeded requeueAt", 60.0, False),
]


@pytest.mark.parametrize(("requeue_at", "want"), cases("TestBackoffWaitingTimeExpired", BACKOFF_EXPIRED, 2))
def test_backoff_waiting_time_expired(requeue_at: float | None, want: bool) -> None:
    """``backoffWaitingTimeExpired`` at ``now`` = 0: ``requeueAt`` relative to it (None: a requeue state
    without ``requeueAt``, or none)."""
    assert backoff_expired(requeue_at, 0.0) is want


CQ_IMPL_BACKOFF: list[Any] = [
    ("re-queue inadmissible workload; workloads with requeueState can't re-queue", False),
    ("re-queue admissible workload that was inadmissible", True),
    ("re-queue inadmissible workload and flush", True),
]


@pytest.mark.parametrize("requeued", cases("TestClusterQueueImpl", CQ_IMPL_BACKOFF, 1))
def test_cluster_queue_impl_backoff(requeued: bool) -> None:
    """``w1`` (ns1) and ``w2`` (ns2) set aside as inadmissible while ``holder`` holds the quota, and
    ``w4-requeue-state`` (ns1) evicted by the PodsReady timeout with ``requeueAt`` a minute ahead: it is never
    considered (not even set aside). Once the inadmissible workloads are queued again (``requeued``:
    ``holder`` finishes, quota released; upstream also by an admissible requeue) ``w1`` and ``w2`` are
    admitted and
    ``w4-requeue-state`` stays out until its backoff ends: 3 pending before, the one in backoff after."""
    queue = cpu_queue("cq", "10", namespaces=NS_SELECTOR)
    local = [LocalQueue("q1", "ns1", "cq"), LocalQueue("q2", "ns2", "cq")]
    m = Manager([queue], local, pods_ready=NO_BLOCK)
    holder = m.add("holder", "ns1", "q1", cpu=10000)
    m.run()
    w1 = m.add("w1", "ns1", "q1", created=1.0)
    w2 = m.add("w2", "ns2", "q2", created=1.0)
    w4 = m.add("w4-requeue-state", "ns1", "q1", created=1.0)
    m.in_backoff(w4, 61.0, count=1)
    m.run()
    assert m.pending() == {"cq": 3}
    assert m.inadmissible() == {"ns1/w1", "ns2/w2"}  # w4 in backoff: out of every cycle
    if requeued:
        m.finish(holder)
        m.run()
        assert m.port.released == [holder, w1, w2]
        assert m.pending() == {"cq": 1}
