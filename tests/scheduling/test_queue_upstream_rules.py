"""The scheduling queue's rules as kube-scheduler 1.34's ``pkg/scheduler/backend/queue`` has them: the
timestamp a pod keeps through its moves, the unschedulable and error counts apart, the 1-second backoff
window, the 30-second leftover flush."""

from __future__ import annotations

from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.queue import QueuedPod, SchedulingQueue

REJECTED = frozenset({"NodeResourcesFit"})


def fifo() -> SchedulingQueue:
    return SchedulingQueue(lambda qp: (-qp.pod.priority, qp.timestamp, qp.seq))


def popped(queue: SchedulingQueue) -> QueuedPod:
    qp = queue.pop()
    assert qp is not None
    return qp


def test_a_pod_moved_back_keeps_its_failure_time_and_goes_before_a_pod_added_after_it() -> None:
    """``moveToActiveQ`` leaves ``Timestamp`` alone: PrioritySort orders by the failure (or add) time."""
    queue = fifo()
    queue.add(Pod("failed"), 0.0)
    queue.mark_unschedulable(popped(queue), 0.0, REJECTED)
    queue.add(Pod("later"), 5.0)
    queue.move(EVERYTHING[0], 20.0, lambda qp, change: True)
    assert [popped(queue).pod.name, popped(queue).pod.name] == ["failed", "later"]


def test_an_error_after_rejections_backs_off_by_the_consecutive_errors_alone() -> None:
    """``AddUnschedulableIfNotPresent``/``getBackoffTime``: three rejections, then an error backs off 1 s
    (one consecutive error), not 8 s; a rejection after it counts the fourth (8 s), not a fifth."""
    queue = fifo()
    queue.add(Pod("p"), 0.0)
    for t in (0.0, 20.0, 40.0):
        queue.mark_unschedulable(popped(queue), t, REJECTED)
        queue.move(EVERYTHING[0], t + 15.0, lambda qp, change: True)
    qp = popped(queue)
    queue.mark_unschedulable(qp, 100.0)
    assert qp.backoff_until == 102.0  # 1 s, then the window [101, 102) is over
    queue.advance(102.0)
    qp = popped(queue)
    queue.mark_unschedulable(qp, 200.0, REJECTED)
    assert qp.backoff_until == 209.0


def test_a_backoff_ends_at_the_start_of_the_window_after_the_one_its_expiry_falls_in() -> None:
    """SchedulerPopFromBackoffQ's ``alignToWindow``: failed at 0.3 s, 1 s backoff: expiry 1.3 s, in the
    window [1, 2): tried at 2 s."""
    queue = fifo()
    queue.add(Pod("p"), 0.3)
    queue.mark_unschedulable(popped(queue), 0.3)
    assert queue.next_time() == 2.0
    queue.advance(1.3)
    assert queue.pop() is None
    queue.advance(2.0)
    assert popped(queue).pod.name == "p"


def test_the_leftover_flush_runs_every_30_s_and_moves_pods_more_than_5_minutes_after_their_failure() -> None:
    """``flushUnschedulablePodsLeftover`` (every 30 s: ``currentTime.Sub(Timestamp) > 5m``): failed at
    0 s, not moved at 300 s, moved at 330 s."""
    queue = fifo()
    queue.add(Pod("p"), 0.0)
    queue.mark_unschedulable(popped(queue), 0.0, REJECTED)
    queue.advance(300.0)
    assert queue.pop() is None
    assert queue.next_time() == 330.0
    queue.advance(330.0)
    assert popped(queue).pod.name == "p"
