"""Upstream's ``pkg/scheduler/backend/queue`` tests (Kubernetes v1.34.10): ``scheduling_queue_test.go``,
``backoff_queue_test.go``, ``active_queue_test.go`` and ``unschedulable_pods_test.go``, against gpufleet's
``SchedulingQueue`` with the PrioritySort order and the queueing hints of ``queueing_hints``.

1.34's defaults are the ones modelled: SchedulerQueueingHints (GA, locked on) and SchedulerPopFromBackoffQ
(beta, on) for its 1-second backoff window, though not for its Pop from the backoff queue
(NO_POP_FROM_BACKOFF): rows for the gates turned off are skipped, but for TestPriorityQueue_Pop's, which
is gpufleet's Pop. gpufleet's queue runs in virtual seconds: upstream's fake clock becomes a float
``now``; ``flushBackoffQCompleted`` and ``flushUnschedulablePodsLeftover`` both run in
``SchedulingQueue.advance``, at the whole seconds and the 30-second runs their tickers keep, so a test
that steps the clock and flushes advances to the next such run. ``AddUnschedulableIfNotPresent`` is
``mark_unschedulable`` (the rejector plugins its set of names), ``MoveAllToActiveOrBackoffQueue`` is
``move`` with ``worth_requeuing`` over the test's hint map, ``Activate`` is ``requeue_where``.
"""

from __future__ import annotations

import math

import pytest

from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import (
    ASSIGNED_POD_ADD,
    NODE_ADD,
    WILDCARD_EVENT,
    ActionType,
    ClusterChange,
    ClusterEvent,
    EventPod,
    HintError,
    HintFn,
    QueueingHint,
    Resource,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.priority_sort import PrioritySort
from gpufleet.scheduling.queue import QueuedPod, SchedulingQueue
from gpufleet.scheduling.queueing_hints import HintMap, interested, worth_requeuing

UPSTREAM = "backend/queue/scheduling_queue_test.go"
BACKOFF_UPSTREAM = "backend/queue/backoff_queue_test.go"
GATE_OFF = "the feature gate turned off: 1.34's default (on) is the one modelled"
NO_POP_FROM_BACKOFF = (
    "SchedulerPopFromBackoffQ's Pop from the podBackoffQ when the active queue is empty: not modelled, in "
    "virtual time a gang whose members reject each other at Permit would be tried again and again at one "
    "instant (its 1-second backoff window is modelled)"
)
NO_PENDING = "no gpufleet plugin returns Pending, so no pod has PendingPlugins (queueImmediately)"
NO_NOMINATOR = (
    "the queue's nominator (pods carrying status.nominatedNodeName on Add/Update): gpufleet's nominations "
    "are the scheduler's own (``Scheduler.nominated``), made by its preemption"
)
NO_ACTIVATE = (
    "Activate moving the pod straight to activeQ, its backoff skipped: not modelled, in virtual time a gang "
    "whose members activate each other at Permit would be tried again and again at one instant "
    "(gpufleet's Activate, ``requeue_where``, sends an unschedulable pod through its backoff)"
)
NO_UPDATE = "an Update of a queued pod's spec: gpufleet emits no update events of pending pods"
NO_IN_FLIGHT = (
    "events received while the pod is in flight (``inFlightEvents``, "
    "``determineSchedulingHintForInFlightPod``): gpufleet tries a pod from Pop to its failure in one virtual "
    "instant, and keeps no events for pods waiting at Permit"
)
NO_PRE_ENQUEUE_ON_MOVE = (
    "PreEnqueue run on a move to the active or backoff queue: gpufleet runs PreEnqueue when a pod is added "
    "(``Scheduler.add``, gated pods kept aside); its only PreEnqueue plugin, SchedulingGates, refuses "
    "nothing a pod that passed it once could meet again"
)
NO_PRE_CHECK = (
    "a PreEnqueueCheck on MoveAllToActiveOrBackoffQueue: with queueing hints on, 1.34's event handlers pass "
    "one only for a nominated pod deleted or renominated (getLEPriorityPreCheck), which gpufleet does not "
    "model"
)
LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2
QUEUE: HintFn = lambda pod, old, new: QueueingHint.QUEUE  # noqa: E731 (queueHintReturnQueue)
SKIP: HintFn = lambda pod, old, new: QueueingHint.SKIP  # noqa: E731 (queueHintReturnSkip)
TIMEOUT = ClusterChange(WILDCARD_EVENT)  # EventUnschedulableTimeout
NODE_ADDED = ClusterChange(NODE_ADD)
PV_ADD = ClusterEvent(Resource.WILDCARD, ActionType.ADD)  # a resource nothing registers for below


def new_queue(initial_backoff_s: float = 1.0, max_backoff_s: float = 10.0) -> SchedulingQueue:
    """``NewTestQueue(ctx, newDefaultQueueSort())``."""
    gangs, sorter = GangView(ClusterState()), PrioritySort()
    return SchedulingQueue(lambda qp: sorter.sort_key(qp, gangs), initial_backoff_s, max_backoff_s)


def failed(queue: SchedulingQueue, pod: Pod, now: float, *plugins: str) -> QueuedPod:
    """The pod added, popped and failed at ``now``, rejected by ``plugins`` (none: an error)."""
    queue.add(pod, now)
    qp = queue.pop()
    assert qp is not None and qp.pod is pod
    queue.mark_unschedulable(qp, now, frozenset(plugins))
    return qp


def move_all(queue: SchedulingQueue, change: ClusterChange, now: float, hints: HintMap = ()) -> None:
    """``MoveAllToActiveOrBackoffQueue``: nothing when no plugin registered for the event
    (``isEventOfInterest``), else the pods the rejectors' hints queue."""
    plugins = None if change.event.is_wildcard else interested(hints, change.event)
    if plugins is not None and not plugins:
        return
    queue.move(change, now, lambda qp, ch: worth_requeuing(hints, qp.pod, qp.rejectors, ch), plugins)


def popped(queue: SchedulingQueue) -> list[str]:
    """Every pod Pop gives, in order."""
    names = []
    while (qp := queue.pop()) is not None:
        names.append(qp.pod.name)
    return names


def where(queue: SchedulingQueue, pod: Pod) -> str:
    if pod.key in queue.unschedulable:
        return "unschedulablePods"
    return "backoffQ" if pod.key in queue.backing_off else "activeQ"


HPP = Pod("hpp", "ns1", priority=HIGH)
MPP = Pod("mpp", "ns2", priority=MEDIUM)
UP = Pod("up", "ns1", priority=LOW)


# -- backoff_queue_test.go ----------------------------------------------------------------------
T0 = 1696118400.0  # 2023-10-01T00:00:00Z


@pytest.mark.parametrize(
    ("initial", "maximum", "unschedulable", "errors", "want"),
    [
        pytest.param(1.0, 32.0, 0, 0, 0.0, id="TestBackoffQueue_getBackoffTime/no backoff"),
        pytest.param(
            1.0, 32.0, 16, 0, T0 + 32, id="TestBackoffQueue_getBackoffTime/backoff by UnschedulableCount"
        ),
        pytest.param(
            1.0,
            32.0,
            5,
            16,
            T0 + 32,
            id="TestBackoffQueue_getBackoffTime/backoff is calculated with ConsecutiveErrorsCount",
        ),
        pytest.param(
            0.0,
            0.0,
            16,
            0,
            0.0,
            id="TestBackoffQueue_getBackoffTime/zero maxBackoffDuration means no backoff",
        ),
    ],
)
def test_backoff_queue_get_backoff_time(
    initial: float, maximum: float, unschedulable: int, errors: int, want: float
) -> None:
    """gpufleet keeps when the backoff completes, one window after the expiry's window that
    ``getBackoffTime`` returns (``isPodBackingoff``); no backoff is the zero time, 0."""
    qp = QueuedPod(Pod("p"), 1, T0, T0, unschedulable_count=unschedulable, consecutive_errors=errors)
    completes = new_queue(initial, maximum).backoff_completes(qp)
    assert completes == (want + 1.0 if want else 0.0)


def test_backoff_queue_get_backoff_time_from_the_cache() -> None:
    pytest.skip(
        f"{BACKOFF_UPSTREAM} TestBackoffQueue_getBackoffTime/backoff is returned from the cache: gpufleet "
        "works the expiry out once per failure (``backoff_until``); there is no cache to preset"
    )


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        pytest.param(1.0, 32.0, 0, 0.0, id="no backoff"),
        pytest.param(3.0, 1000.0, 5, 48.0, id="normal"),
        pytest.param(1.0, 32.0, 16, 32.0, id="hitting max backoff duration"),
        pytest.param(1.0, float(2**31 - 1), 32, float(2**31 - 1), id="overflow_32bit"),
        pytest.param(1.0, float(2**63 - 1), 64, float(2**63 - 1), id="overflow_64bit"),
    ],
)
def test_backoff_queue_calculate_backoff_duration(
    initial: float, maximum: float, count: int, want: float
) -> None:
    """TestBackoffQueue_calculateBackoffDuration (nanoseconds there, any unit here: the rule is
    scale-free)."""
    assert new_queue(initial, maximum).backoff_duration(count) == want


NOW = 1000.0


def backed_off(queue: SchedulingQueue, pod: Pod, timestamp: float, rejected: bool) -> None:
    """The pod in the backoff queue with ``Timestamp`` ``timestamp`` and one failure: rejected by a plugin
    (podBackoffQ, moved there by an event) or an error (podErrorBackoffQ)."""
    failed(queue, pod, timestamp, *(("plugin",) if rejected else ()))
    if rejected:
        move_all(queue, TIMEOUT, timestamp)
    assert pod.key in queue.backing_off


POP_ALL_PODS = {
    "pod0": (NOW - 2, True),
    "pod1": (NOW + 1, True),
    "pod2": (NOW - 2, False),
    "pod3": (NOW + 1, False),
}


@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param((), set(), id="Both queues empty, no pods moved to activeQ"),
        pytest.param(("pod0", "pod1"), {"pod0"}, id="Pods only in backoffQ, some pods moved to activeQ"),
        pytest.param(("pod2", "pod3"), {"pod2"}, id="Pods only in errorBackoffQ, some pods moved to activeQ"),
        pytest.param(
            ("pod0", "pod1", "pod2", "pod3"),
            {"pod0", "pod2"},
            id="Pods in both queues, some pods moved to activeQ",
        ),
        pytest.param(("pod0", "pod2"), {"pod0", "pod2"}, id="Pods in both queues, all pods moved to activeQ"),
        pytest.param(("pod1", "pod3"), set(), id="Pods in both queues, no pods moved to activeQ"),
    ],
)
def test_backoff_queue_pop_all_backoff_completed(in_backoff: tuple[str, ...], want: set[str]) -> None:
    """TestBackoffQueue_popAllBackoffCompleted, popFromBackoffQEnabled(true) (1.34's default; the rows with
    it off are the same but for the window, which gpufleet always applies)."""
    queue = new_queue()
    for name in in_backoff:
        timestamp, rejected = POP_ALL_PODS[name]
        backed_off(queue, Pod(name), timestamp, rejected)
    queue.advance(NOW)
    moved = {name for name in in_backoff if f"default/{name}" not in queue.backing_off}
    assert moved == want


ORDERING_PODS = [  # name, priority, Timestamp
    ("pod0", 1, NOW),
    ("pod1", 1, NOW - 1),
    ("pod2", 2, NOW - 2 + 0.001),
    ("pod3", 1, NOW - 2),
    ("pod4", 2, NOW - 2),
    ("pod5", 1, NOW - 3),
]


def test_backoff_queue_ordering() -> None:
    """TestBackoffQueueOrdering/Pods with the same window are ordered by priority if PopFromBackoffQ is
    enabled: the pods whose backoff completed at ``NOW`` leave (pod5, pod4, pod2, pod3). Their order inside a
    window shows only in Pop taking the podBackoffQ's head, not modelled (``SchedulingQueue.pop``); in the
    active queue they are ordered by priority, then timestamp."""
    queue = new_queue()
    for name, priority, timestamp in ORDERING_PODS:
        backed_off(queue, Pod(name, priority=priority), timestamp, rejected=True)
    queue.advance(NOW)
    assert queue.backing_off == {"default/pod0", "default/pod1"}
    assert popped(queue) == ["pod4", "pod2", "pod5", "pod3"]


def test_backoff_queue_ordering_without_pop_from_backoff_q() -> None:
    pytest.skip(f"{BACKOFF_UPSTREAM} TestBackoffQueueOrdering/PopFromBackoffQ is disabled: {GATE_OFF}")


# -- active_queue_test.go, unschedulable_pods_test.go ------------------------------------------------
def test_close() -> None:
    pytest.skip(
        "active_queue_test.go TestClose: gpufleet's Pop never blocks, so there is no Close to wake it"
    )


@pytest.mark.parametrize(
    "row",
    [
        "create, update, delete subset of pods",
        "create, update, delete all",
        "delete non-existing and existing pods",
    ],
)
def test_unschedulable_pods(row: str) -> None:
    pytest.skip(
        f"unschedulable_pods_test.go TestUnschedulablePods/{row}: the unschedulablePods map's own API "
        "(addOrUpdate/get/delete/clear); gpufleet's is a dict"
    )


# -- scheduling_queue_test.go ----------------------------------------------------------------------
def test_priority_queue_add() -> None:
    """TestPriorityQueue_Add: Pop by priority (the nominator half is not ported: see NO_NOMINATOR)."""
    queue = new_queue()
    for pod in (MPP, UP, HPP):
        queue.add(pod, 0.0)
    assert popped(queue) == ["hpp", "mpp", "up"]


def test_priority_queue_add_with_reverse_priority_less_func() -> None:
    queue = new_queue()
    for pod in (MPP, HPP):
        queue.add(pod, 0.0)
    assert popped(queue) == ["hpp", "mpp"]


def test_pop() -> None:
    pytest.skip(f"{UPSTREAM} TestPop: {NO_PENDING}")


def test_priority_queue_add_unschedulable_if_not_present() -> None:
    """The failed pod waits in unschedulablePods; the other is popped (the nominator check: NO_NOMINATOR)."""
    queue = new_queue()
    qp = failed(queue, UP, 0.0, "plugin")
    queue.add(HPP, 0.0)
    assert popped(queue) == ["hpp"]
    assert where(queue, qp.pod) == "unschedulablePods"


def test_priority_queue_add_unschedulable_if_not_present_backoff() -> None:
    """Nine pods popped; the wildcard event (nothing unschedulable yet) moves nothing; the last popped; then
    the nine fail in that cycle and, an event having come since, go to backoffQ. gpufleet has no move
    request cycle (that is the path without queueing hints): the pods fail and the event comes after."""
    queue = new_queue()
    pods = [Pod(f"pod{i}", f"ns{i}", priority=i) for i in range(10)]
    for pod in pods:
        queue.add(pod, NOW)
    tried = [queue.pop() for _ in range(9)]
    assert [qp.pod.name for qp in tried if qp is not None] == [f"pod{i}" for i in range(9, 0, -1)]
    move_all(queue, TIMEOUT, NOW)
    assert popped(queue)[:1] == ["pod0"]
    for qp in tried:
        assert qp is not None
        queue.mark_unschedulable(qp, NOW, frozenset({"plugin"}))
    move_all(queue, TIMEOUT, NOW)
    assert all(where(queue, pod) == "backoffQ" for pod in pods[1:])


@pytest.mark.parametrize(
    ("pop_from_backoff", "want"),
    [
        pytest.param(
            True, ["mpp", "hpp"], id="Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled"
        ),
        pytest.param(False, ["mpp"], id="Pop pod only from activeQ when PopFromBackoffQ is disabled"),
    ],
)
def test_priority_queue_pop(pop_from_backoff: bool, want: list[str]) -> None:
    """A pod in the active queue, one in podBackoffQ, one in podErrorBackoffQ, one unschedulable: Pop takes
    the active one, then (the gate on) the podBackoffQ's, never the others."""
    if pop_from_backoff:
        pytest.skip(f"{UPSTREAM} TestPriorityQueue_Pop/PopFromBackoffQ enabled: {NO_POP_FROM_BACKOFF}")
    queue = new_queue()
    backed_off(queue, HPP, NOW, rejected=True)
    backed_off(queue, Pod("hpp2", "ns1", priority=HIGH), NOW, rejected=False)
    failed(queue, UP, NOW, "plugin")
    queue.add(MPP, NOW)
    assert popped(queue) == want


def test_priority_queue_update() -> None:
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_Update: {NO_UPDATE}")


def test_priority_queue_update_when_inflight() -> None:
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_UpdateWhenInflight: {NO_UPDATE}; {NO_IN_FLIGHT}")


def test_priority_queue_delete() -> None:
    """Delete drops the pod from the queue (the nominator checks: NO_NOMINATOR)."""
    queue = new_queue()
    queue.add(HPP, 0.0)
    queue.add(UP, 0.0)
    queue.remove(HPP.key)
    assert popped(queue) == ["up"]
    queue.remove(UP.key)
    assert HPP.key not in queue and UP.key not in queue


@pytest.mark.parametrize(
    ("placed", "want_active"),
    [
        pytest.param("activeQ", 1, id="pod already in activeQ"),
        pytest.param(None, 0, id="pod not in unschedulablePods/backoffQ"),
    ],
)
def test_priority_queue_activate(placed: str | None, want_active: int) -> None:
    """Activate leaves a pod already active where it is and ignores an unknown pod."""
    queue = new_queue()
    if placed == "activeQ":
        queue.add(HPP, NOW)
    queue.requeue_where(NOW, lambda qp: qp.pod.key == HPP.key)
    assert popped(queue) == ["hpp"] * want_active


@pytest.mark.parametrize("row", ["pod in unschedulablePods", "pod in backoffQ"])
def test_priority_queue_activate_skipping_backoff(row: str) -> None:
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_Activate/{row}: {NO_ACTIVATE}")


@pytest.mark.parametrize(
    "row",
    [
        "[QHint] pod not in unschedulablePods/backoffQ but in-flight",
        "[QHint] pod not in unschedulablePods/backoffQ and not in-flight",
    ],
)
def test_priority_queue_activate_in_flight(row: str) -> None:
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_Activate/{row}: {NO_IN_FLIGHT}")


@pytest.mark.parametrize(
    "test",
    [
        "TestPriorityQueue_moveToActiveQ",
        "TestPriorityQueue_moveToBackoffQ",
        "Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate",
    ],
)
def test_pre_enqueue_on_moves(test: str) -> None:
    pytest.skip(f"{UPSTREAM} {test}: {NO_PRE_ENQUEUE_ON_MOVE}")


FOO_ON_NODE_ADD: HintMap = ((NODE_ADD, "foo", QUEUE),)


@pytest.mark.parametrize(
    ("hint", "waited", "want"),
    [
        pytest.param(QUEUE, 0.0, "backoffQ", id="Queue queues pod to backoffQ if Pod is backing off"),
        pytest.param(QUEUE, 2.0, "activeQ", id="Queue queues pod to activeQ if Pod is not backing off"),
        pytest.param(SKIP, 0.0, "unschedulablePods", id="Skip queues pod to unschedulablePods"),
    ],
)
def test_priority_queue_move_all_to_active_or_backoff_queue_with_queueing_hint(
    hint: HintFn, waited: float, want: str
) -> None:
    """The pod rejected by foo, a node added ``waited`` seconds later: foo's hint decides, and backoff
    (1 s, done once its window is past: initial backoff + 1 s) where it goes."""
    queue = new_queue()
    qp = failed(queue, Pod("pod1", "ns1", labels={"foo": "bar"}), NOW, "foo")
    move_all(queue, NODE_ADDED, NOW + waited, ((NODE_ADD, "foo", hint),))
    assert where(queue, qp.pod) == want


@pytest.mark.parametrize(
    "row",
    [
        "Queue queues pod to activeQ",
        "QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event",
        "QueueHintFunction is called when Pod is gated by the plugin that is interested in the event",
    ],
)
def test_priority_queue_move_all_with_queueing_hint_not_modelled(row: str) -> None:
    reason = NO_PENDING if row == "Queue queues pod to activeQ" else NO_PRE_ENQUEUE_ON_MOVE
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint/{row}: {reason}")


FOO_PLUGIN: HintMap = ((NODE_ADD, "fooPlugin", QUEUE),)


def test_priority_queue_move_all_to_active_or_backoff_queue() -> None:
    """up and hpp rejected by fooPlugin, hpp1 by an error (backoffQ at once), hpp2 by barPlugin: a node
    added moves up and hpp to backoffQ, not hpp2; after podMaxBackoffDuration the flush makes the
    backoffQ's pods active; when they fail again, a node added once their backoff is over moves up and hpp
    to activeQ, and hpp2 stays."""
    queue = new_queue()
    hpp1, hpp2 = Pod("hpp1", "ns1", priority=HIGH), Pod("hpp2", "ns1", priority=HIGH)
    failed(queue, UP, NOW, "fooPlugin")
    failed(queue, HPP, NOW, "fooPlugin")
    failed(queue, hpp1, NOW)
    failed(queue, hpp2, NOW, "barPlugin")
    move_all(queue, NODE_ADDED, NOW, FOO_PLUGIN)
    queue.add(MPP, NOW)
    assert queue.pop() is not None  # mpp, from activeQ
    assert {where(queue, p) for p in (UP, HPP, hpp1)} == {"backoffQ"}
    assert where(queue, hpp2) == "unschedulablePods"
    later = NOW + 10.0
    queue.advance(later)
    assert not queue.backing_off
    rejectors = {"up": {"fooPlugin"}, "hpp": {"fooPlugin"}, "hpp1": set()}
    while (qp := queue.pop()) is not None:
        queue.mark_unschedulable(qp, later, frozenset(rejectors.pop(qp.pod.name)))
    assert not rejectors
    assert where(queue, hpp1) == "backoffQ"
    assert {where(queue, p) for p in (UP, HPP, hpp2)} == {"unschedulablePods"}
    latest = later + 10.0
    queue.advance(latest)
    move_all(queue, NODE_ADDED, latest, FOO_PLUGIN)
    assert {where(queue, p) for p in (UP, HPP, hpp1)} == {"activeQ"}
    assert where(queue, hpp2) == "unschedulablePods"


def test_priority_queue_move_all_to_active_or_backoff_queue_without_queueing_hint() -> None:
    pytest.skip(f"{UPSTREAM} TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithoutQueueingHint: {GATE_OFF}")


@pytest.mark.parametrize(
    "test",
    ["TestPriorityQueue_AssignedPodAdded_", "TestPriorityQueue_AssignedPodUpdated"],
)
def test_assigned_pod_events(test: str) -> None:
    reason = (
        "AssignedPodAdded's pre-filter (getUnschedulablePodsWithCrossTopologyTerm) is the path without "
        "queueing hints: with them 1.34's addPodToCache calls MoveAllToActiveOrBackoffQueue("
        "EventAssignedPodAdd), as gpufleet does (``Scheduler.schedule_one``)"
        if test.endswith("Added_")
        else "gpufleet emits no update events of assigned pods (labels, resources scaled down)"
    )
    pytest.skip(f"{UPSTREAM} {test}: {reason}")


@pytest.mark.parametrize(
    "test",
    [
        "TestPriorityQueue_NominatedPodsForNode",
        "TestPriorityQueue_NominatedPodDeleted",
        "TestPriorityQueue_UpdateNominatedPodForNode",
    ],
)
def test_nominator(test: str) -> None:
    pytest.skip(f"{UPSTREAM} {test}: {NO_NOMINATOR}")


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        ("TestPriorityQueue_PendingPods", "PendingPods' summary string for the debugger"),
        ("TestPriorityQueue_NewWithOptions", "the queue's constructor options"),
        ("TestSchedulingQueue_Close", "Close: gpufleet's Pop never blocks"),
        ("TestPendingPodsMetric", "metrics recorders"),
        ("TestPerPodSchedulingMetrics", "metrics recorders"),
        ("TestIncomingPodsMetrics", "metrics recorders"),
        ("TestPriorityQueue_GetPod", "GetPod by name: gpufleet's queue entries are a dict by key"),
    ],
)
def test_internal_apis(test: str, reason: str) -> None:
    pytest.skip(f"{UPSTREAM} {test}: {reason}, no gpufleet counterpart")


def test_recently_tried_pods_go_back() -> None:
    """Five pods of one priority; the first popped fails a microsecond later and, moved back after
    podMaxBackoffDuration, comes after the other four: its timestamp is its failure's."""
    queue = new_queue()
    for i in range(5):
        queue.add(Pod(f"test-pod-{i}", "ns1", priority=HIGH), NOW)
    first = queue.pop()
    assert first is not None
    queue.mark_unschedulable(first, NOW + 1e-6, frozenset({"plugin"}))
    move_all(queue, TIMEOUT, NOW + 1e-6 + 10.0)
    order = popped(queue)
    assert len(order) == 5 and order[-1] == first.pod.name


def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod() -> None:
    """The pod fails, comes back after its backoff and fails again; a newer pod added meanwhile is popped
    first: the twice-failed pod, moved 2 s after, is still backing off (2 s, and its window)."""
    queue = new_queue()
    t = NOW + 0.5
    pod = Pod("test-pod-unscheduled", "ns1", priority=HIGH)
    qp = failed(queue, pod, t, "plugin")
    t += 2.0
    move_all(queue, TIMEOUT, t)
    assert queue.pop() is qp
    newer = Pod("test-newer-pod", "ns1", priority=HIGH)
    queue.add(newer, t)
    queue.mark_unschedulable(qp, t, frozenset({"plugin"}))
    t += 2.0
    move_all(queue, TIMEOUT, t)
    got = queue.pop()
    assert got is not None and got.pod is newer


def test_high_priority_backoff() -> None:
    """The high-priority pod fails and, moved while backing off, waits in backoffQ: the mid one is popped."""
    queue = new_queue()
    mid, high = Pod("test-midpod", "ns1", priority=MID), Pod("test-highpod", "ns1", priority=HIGH)
    queue.add(mid, NOW)
    queue.add(high, NOW)
    qp = queue.pop()
    assert qp is not None and qp.pod is high
    queue.mark_unschedulable(qp, NOW, frozenset({"fooPlugin"}))
    move_all(queue, TIMEOUT, NOW)
    got = queue.pop()
    assert got is not None and got.pod is mid


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """Both fail; more than podMaxInUnschedulablePodsDuration later the leftover flush moves them, and Pop
    gives the higher priority first. (Upstream steps 5m1s and calls the flush; gpufleet's flush runs every
    30 s from time 0: the first run past 5 minutes after the failures at 0 is at 330 s.)"""
    queue = new_queue()
    mid, high = Pod("test-midpod", "ns1", priority=MID), Pod("test-highpod", "ns1", priority=HIGH)
    failed(queue, high, 0.0, "fakePlugin")
    failed(queue, mid, 0.0, "fakePlugin")
    queue.advance(300.0)
    assert popped(queue) == []
    queue.advance(330.0)
    assert popped(queue) == ["test-highpod", "test-midpod"]


def test_priority_queue_init_pod_max_in_unschedulable_pods_duration() -> None:
    """New priority queue by the default value of podMaxInUnschedulablePodsDuration: pods failed 1 s and
    2 s before are flushed 5 minutes later, the older first (by timestamp, kept through the move)."""
    queue = new_queue()
    t = 3000.0
    failed(queue, Pod("test-pod-1", "ns1"), t - 1.0, "plugin")
    failed(queue, Pod("test-pod-2", "ns2"), t - 2.0, "plugin")
    queue.advance(t + 300.0)
    assert popped(queue) == ["test-pod-2", "test-pod-1"]


def test_priority_queue_init_pod_max_in_unschedulable_pods_duration_user_defined() -> None:
    pytest.skip(
        f"{UPSTREAM} TestPriorityQueue_initPodMaxInUnschedulablePodsDuration/New priority queue by "
        "user-defined value of podMaxInUnschedulablePodsDuration: a queue constructor option, not in "
        "KubeSchedulerConfiguration"
    )


def test_pod_timestamp_add_two_pods_to_active_q_and_sort_them_by_the_timestamp() -> None:
    queue = new_queue()
    queue.add(Pod("test-pod-2", "ns2"), NOW + 1.0)
    queue.add(Pod("test-pod-1", "ns1"), NOW)
    assert popped(queue) == ["test-pod-1", "test-pod-2"]


def test_pod_timestamp_add_two_pods_to_unschedulable_pods_then_move_them_to_active_q() -> None:
    """Moved together, they keep their timestamps: pod 1 (the earlier) first, though failed second."""
    queue = new_queue()
    failed(queue, Pod("test-pod-2", "ns2"), NOW + 1.0, "plugin")
    failed(queue, Pod("test-pod-1", "ns1"), NOW, "plugin")
    move_all(queue, TIMEOUT, NOW + 4.0)
    assert popped(queue) == ["test-pod-1", "test-pod-2"]


def test_pod_timestamp_add_one_pod_to_backoff_q_and_move_it_to_active_q() -> None:
    """Pod 1 (timestamp NOW) leaves backoffQ after pod 2 (NOW + 1) was added: pod 1 is still first."""
    queue = new_queue()
    backed_off(queue, Pod("test-pod-1", "ns1"), NOW, rejected=False)
    queue.add(Pod("test-pod-2", "ns2"), NOW + 1.0)
    queue.advance(NOW + 3.0)
    assert popped(queue) == ["test-pod-1", "test-pod-2"]


BACKOFF_FLOW = [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]


def test_back_off_flow() -> None:
    """TestBackOffFlow, popFromBackoffQEnabled(true): each failure doubles the backoff up to 10 s; the pod
    is still in backoffQ one window later, and out after the backoff more."""
    queue = new_queue()
    t = NOW + 0.5  # upstream's clock is time.Now(), inside a window
    pod = Pod("test-pod", "test-ns")
    queue.add(pod, t)
    for i, want in enumerate(BACKOFF_FLOW):
        qp = queue.pop()
        assert qp is not None and qp.pod is pod
        queue.mark_unschedulable(qp, t, frozenset({"unsched-plugin"}))
        assert qp.unschedulable_count == i + 1
        move_all(queue, TIMEOUT, t)
        assert where(queue, pod) == "backoffQ"
        assert math.floor(qp.backoff_until - t) == want
        queue.advance(t + 1.0)
        assert where(queue, pod) == "backoffQ"
        t += 1.0 + want
        queue.advance(t)
        assert where(queue, pod) == "activeQ"


def test_back_off_flow_without_pop_from_backoff_q() -> None:
    pytest.skip(f"{UPSTREAM} TestBackOffFlow popFromBackoffQEnabled(false): {GATE_OFF}")


@pytest.mark.parametrize(
    ("event", "want"),
    [
        pytest.param(TIMEOUT, {f"p{i}" for i in range(5)}, id="nil PreEnqueueCheck"),
        pytest.param(
            ClusterChange(PV_ADD),
            set(),
            id="preCheck isn't called if the event is not interested by any plugins",
        ),
    ],
)
def test_move_all_to_active_or_backoff_queue_pre_enqueue_checks(event: ClusterChange, want: set[str]) -> None:
    queue = new_queue()
    pods = [Pod(f"p{i}", priority=i) for i in range(5)]
    for pod in pods:
        failed(queue, pod, NOW, "plugin")
    move_all(queue, event, NOW, ((NODE_ADD, "plugin", QUEUE),))
    queue.advance(NOW + 20.0)
    assert {p.name for p in pods if where(queue, p) == "activeQ"} == want


@pytest.mark.parametrize(
    "row",
    [
        "move Pods with priority greater than 2",
        "move Pods with even priority and greater than 2",
        "move Pods with even and negative priority",
    ],
)
def test_move_all_pre_enqueue_checks_with_a_check(row: str) -> None:
    pytest.skip(f"{UPSTREAM} TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks/{row}: {NO_PRE_CHECK}")


class Counted:
    """A hint that counts its calls and answers one way (``queueHintReturn*``, counting)."""

    def __init__(self) -> None:
        self.calls = 0

    def hint(self, answer: QueueingHint | None) -> HintFn:
        def fn(pod: Pod, old: object, new: object) -> QueueingHint:
            self.calls += 1
            if answer is None:
                raise HintError("unexpected error")
            return answer

        return fn


NODE_LABEL = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL)
NODE_UPDATE = ClusterEvent(Resource.NODE, ActionType.UPDATE)
ANY_ADD = ClusterEvent(Resource.WILDCARD, ActionType.ADD)
Q, S, E = QueueingHint.QUEUE, QueueingHint.SKIP, None
POD1 = Pod("pod1", "ns1")
#: rejectors, event, new object, registrations (event, plugin, answer), expected Queue, hint calls
WorthRow = tuple[
    set[str], ClusterEvent, EventPod | None, list[tuple[ClusterEvent, str, QueueingHint | None]], bool, int
]
WORTH_ROWS: dict[str, WorthRow] = {
    "return Queue when no queueing hint function is registered for the event": (
        {"fooPlugin1"},
        NODE_ADD,
        None,
        [(ASSIGNED_POD_ADD, "fooPlugin1", Q)],
        False,
        0,
    ),
    "Treat the event as Queue when QueueHintFn returns error": (
        {"fooPlugin1"},
        NODE_ADD,
        None,
        [(NODE_ADD, "fooPlugin1", E)],
        True,
        1,
    ),
    "return Queue when the event is wildcard": ({"fooPlugin1"}, WILDCARD_EVENT, None, [], True, 0),
    "return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now": (
        {"fooPlugin1"},
        WILDCARD_EVENT,
        EventPod(POD1),
        [],
        True,
        0,
    ),
    "return Skip when the event is wildcard, but the wildcard targets a different pod": (
        {"fooPlugin1"},
        WILDCARD_EVENT,
        EventPod(Pod("pod-different", "ns2")),
        [],
        False,
        0,
    ),
    "interprets Queue from the Unschedulable plugin as queueAfterBackoff": (
        {"fooPlugin1", "fooPlugin2"},
        NODE_ADD,
        None,
        [(NODE_ADD, "fooPlugin1", S), (NODE_ADD, "fooPlugin2", Q)],
        True,
        2,
    ),
    "Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored": (
        {"fooPlugin1", "fooPlugin2"},
        NODE_ADD,
        None,
        [(NODE_ADD, "fooPlugin1", S), (NODE_ADD, "fooPlugin2", S), (NODE_ADD, "fooPlugin3", Q)],
        False,
        2,
    ),
    "If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is "
    "also executed": (
        {"fooPlugin1", "fooPlugin2"},
        NODE_LABEL,
        None,
        [
            (NODE_LABEL, "fooPlugin1", Q),
            (NODE_LABEL, "fooPlugin2", Q),
            (NODE_UPDATE, "fooPlugin1", Q),
            (NODE_ADD, "fooPlugin1", Q),
        ],
        True,
        1,
    ),
    "If event with '*' Resource, queueing hint function for specified Resource is also executed": (
        {"fooPlugin1"},
        NODE_ADD,
        None,
        [(ANY_ADD, "fooPlugin1", Q)],
        True,
        1,
    ),
    "If event is a wildcard one, queueing hint function for all kinds of events is executed": (
        {"fooPlugin1"},
        ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
        None,
        [(WILDCARD_EVENT, "fooPlugin1", Q)],
        True,
        1,
    ),
}


@pytest.mark.parametrize("row", list(WORTH_ROWS))
def test_is_pod_worth_requeuing(row: str) -> None:
    """Test_isPodWorthRequeuing: Queue (queueAfterBackoff) or QueueSkip, and how many hints were called."""
    rejectors, event, new, registered, want, calls = WORTH_ROWS[row]
    counted = Counted()
    hints: HintMap = tuple((ev, name, counted.hint(answer)) for ev, name, answer in registered)
    change = ClusterChange(event, None, new)
    assert worth_requeuing(hints, POD1, frozenset(rejectors), change) is want
    assert counted.calls == calls


def test_is_pod_worth_requeuing_pending() -> None:
    pytest.skip(
        f"{UPSTREAM} Test_isPodWorthRequeuing/interprets Queue from the Pending plugin as queueImmediately: "
        f"{NO_PENDING}"
    )


# Test_InFlightPods: the rows whose outcome needs no in-flight event, then the others.
ASSIGNED_ADDED = ClusterChange(ASSIGNED_POD_ADD)


@pytest.mark.parametrize(
    ("before", "plugins", "hints", "want"),
    [
        pytest.param(
            True,
            ("fooPlugin1",),
            ((ASSIGNED_POD_ADD, "fooPlugin1", SKIP),),
            "unschedulablePods",
            id="events before popping Pod are ignored when Pod is enqueued back to queue",
        ),
        pytest.param(
            False,
            (),
            ((ASSIGNED_POD_ADD, "fooPlugin1", QUEUE),),
            "backoffQ",
            id="pod is enqueued to backoff if no failed plugin",
        ),
        pytest.param(
            False,
            ("fooPlugin1",),
            ((ASSIGNED_POD_ADD, "fooPlugin1", QUEUE),),
            "unschedulablePods",
            id="pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable",
        ),
        pytest.param(
            False,
            ("fooPlugin1",),
            ((ASSIGNED_POD_ADD, "fooPlugin1", SKIP),),
            "unschedulablePods",
            id="pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it "
            "returns Skip",
        ),
    ],
)
def test_in_flight_pods(before: bool, plugins: tuple[str, ...], hints: HintMap, want: str) -> None:
    """The failed pod goes where its rejectors say; the event the row sends while it is in flight would not
    move it (no in-flight event is kept by gpufleet: NO_IN_FLIGHT), so its place is upstream's."""
    queue = new_queue()
    pod = Pod("targetpod")
    if before:
        move_all(queue, TIMEOUT, NOW, hints)
    qp = failed(queue, pod, NOW, *plugins)
    assert where(queue, qp.pod) == want


@pytest.mark.parametrize(
    "row",
    [
        "when SchedulingQueueHint is disabled, inFlightPods and inFlightEvents should be empty",
        "Pod and interested events are registered in inFlightPods/inFlightEvents",
        "Pod, registered in inFlightPods, is enqueued back to backoffQ",
        "All Pods registered in inFlightPods are enqueued back to activeQ",
        "One intermediate Pod registered in inFlightPods is enqueued back to activeQ",
        "pod is enqueued to queue without QueueingHint when SchedulingQueueHint is disabled",
        "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue",
        "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue",
        "pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a "
        "concurrent event that was received while some other pod was in flight",
        "popped pod must have empty UnschedulablePlugins and PendingPlugins",
        "Pop is made twice for the same Pod, but the cleanup still happen correctly",
    ],
)
def test_in_flight_pods_not_modelled(row: str) -> None:
    reason = GATE_OFF if "disabled" in row else NO_PENDING if "Pending" in row else NO_IN_FLIGHT
    pytest.skip(f"{UPSTREAM} Test_InFlightPods/{row}: {reason}")
