"""What Kueue's queue manager keeps pending and which workload heads a ClusterQueue, as upstream's does.

Upstream rules: ``kubernetes-sigs/kueue: pkg/cache/queue/cluster_queue.go`` (``RequeueIfNotPresent``:
``RequeueReasonPendingPreemption`` sets the ClusterQueue's ``preemptorWorkload``, sticky at the head of a
``BestEffortFIFO`` queue, ``baseCompareFunc``; ``delete`` clears it) and ``pkg/cache/queue/manager.go``
(``DeleteWorkload``: a deleted workload leaves its queue).
"""

from __future__ import annotations

from conftest import ManualClock, PlainPodsQueuePort, QueuedPodStatus
from gpufleet.control.kueue_queues import KueueQueues
from gpufleet.model.kueue import (
    BEST_EFFORT_FIFO,
    LOWER_PRIORITY,
    QUEUE_NAME_LABEL,
    ClusterQueue,
    FlavorQuotas,
    KueueObjects,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.pod import Pod


def _kueue(port: PlainPodsQueuePort, clock: ManualClock, cpus: int = 1) -> KueueQueues:
    quota = FlavorQuotas("default", {"cpu": ResourceQuota(cpus * 1000)})
    cq = ClusterQueue(
        "cq",
        namespace_selector=(),
        queueing_strategy=BEST_EFFORT_FIFO,
        resource_groups=(ResourceGroup(("cpu",), (quota,)),),
        within_cluster_queue=LOWER_PRIORITY,
    )
    objects = KueueObjects(
        flavors={"default": ResourceFlavor("default")},
        cluster_queues={"cq": cq},
        local_queues={"default/queue": LocalQueue("queue", "default", "cq")},
    )
    return KueueQueues(port, clock, objects)  # type: ignore[arg-type]


def _submit(
    kueue: KueueQueues, port: PlainPodsQueuePort, clock: ManualClock, name: str, at: float, priority: int = 0
) -> str:
    clock.run_until(at)
    pod = Pod(name, labels={QUEUE_NAME_LABEL: "queue"}, requests={"cpu": 1000}, priority=priority)
    port.pods[pod.key] = QueuedPodStatus(pod)
    assert kueue.gate(pod)
    clock.run_until(at)
    return pod.key


def _gone(kueue: KueueQueues, port: PlainPodsQueuePort, key: str, at: float) -> None:
    port.pods[key].deleted_s = at
    kueue.pod_finished(port.pods[key].pod)
    kueue.settle()


def test_a_best_effort_fifo_preemptor_stays_the_head_of_its_queue_until_admitted() -> None:
    """``mid`` preempts ``low``; while ``low`` terminates, ``high`` arrives with a higher priority. ``mid``
    is the sticky preemptor: it keeps the head and takes the quota ``low`` frees (``high`` then preempts it,
    as upstream's would)."""
    port, clock = PlainPodsQueuePort(grace=True), ManualClock()
    kueue = _kueue(port, clock)
    low = _submit(kueue, port, clock, "low", 0.0)
    mid = _submit(kueue, port, clock, "mid", 1.0, priority=5)
    assert port.released == [low] and port.deleted == [low]
    high = _submit(kueue, port, clock, "high", 2.0, priority=10)
    _gone(kueue, port, low, 3.0)
    clock.run_until(3.0)
    assert port.released[:2] == [low, mid]
    assert high not in port.released


def test_a_pending_workload_whose_pods_are_deleted_is_no_longer_pending() -> None:
    """Two plain pods wait for quota; one is deleted: its workload leaves the queue (not counted pending,
    no message), the other still waits."""
    port, clock = PlainPodsQueuePort(grace=True), ManualClock()
    kueue = _kueue(port, clock, cpus=0)
    first = _submit(kueue, port, clock, "first", 0.0)
    _submit(kueue, port, clock, "second", 0.0)
    assert kueue.summary()["cluster_queues"]["cq"]["pending"] == 2
    _gone(kueue, port, first, 1.0)
    clock.run_until(1.0)
    summary = kueue.summary()
    assert summary["cluster_queues"]["cq"]["pending"] == 1
    messages = {w["name"]: w["message"] for w in summary["workloads"]}
    assert messages["Pod/default/first"] is None
    assert messages["Pod/default/second"] is not None
