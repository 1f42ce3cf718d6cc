"""Kueue's reclaimable pods (``Workload.status.reclaimablePods``, the ``ReclaimablePods`` feature gate,
on by default): the pods a workload's controller will not create again stop counting against its
ClusterQueue's quota (kubernetes-sigs/kueue ``pkg/controller/jobs/job/job_controller.go``
``ReclaimablePods``; ``pkg/workload/workload.go`` ``podSetsCountsAfterReclaim``,
``totalRequestsFromAdmission``), and the workloads waiting for quota are tried again
(``pkg/controller/core/workload_controller.go``: an admitted workload's ``reclaimablePods`` changed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import GPU, a10_nodes, kueue_queues, pods_by_name, queued_job, simulated, write
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS
from gpufleet.model.workloads import Job
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload
from gpufleet.workloads.job import JobController


@pytest.mark.parametrize(
    ("parallelism", "completions", "succeeded", "reclaimable"),
    [
        (8, 12, 0, {}),
        (8, 12, 4, {}),  # 8 completions remain: every parallel pod is still needed
        (8, 12, 5, {"main": 1}),
        (8, 12, 8, {"main": 4}),
        (8, 12, 12, {"main": 8}),
        (1, 3, 2, {}),  # a single-pod Job reclaims nothing
        (4, None, 1, {"main": 1}),  # a work queue: completions default to parallelism
        (8, 4, 1, {"main": 5}),  # counted from parallelism; the workload caps it at its pod set's 4 pods
    ],
)
def test_a_job_reclaims_the_pods_its_remaining_completions_no_longer_need(
    parallelism: int, completions: int | None, succeeded: int, reclaimable: dict[str, int]
) -> None:
    """``Job.ReclaimablePods``: with more than one pod and some succeeded, once ``remaining =
    completions - succeeded`` drops below ``parallelism``, ``parallelism - remaining`` pods of ``main``."""
    controller = JobController(Job("a", "default", Pod("a", namespace="default"), parallelism, completions))
    running = controller.wanted()
    for _ in range(succeeded):
        controller.finished(running.pop(0), succeeded=True)
        running += controller.wanted()
    assert controller.reclaimable_pods() == reclaimable


def test_an_indexed_job_reclaims_the_pods_of_its_failed_indexes_too() -> None:
    """``Job.ReclaimablePods`` of an Indexed Job (``terminalIndexesCount``): its completed and failed indexes
    (``backoffLimitPerIndex``: an index that failed is not created again) are terminal; 4 completions, one
    index failed and one succeeded: 2 remain, 2 of its 4 parallel pods are reclaimable."""
    job = Job("a", "default", Pod("a", namespace="default"), 4, 4, indexed=True, backoff_limit_per_index=0)
    controller = JobController(job)
    running = {p.name: p for p in controller.wanted()}
    controller.finished(running["a-0"], succeeded=False)
    assert controller.failed_indexes == {0} and controller.reclaimable_pods() == {"main": 1}
    controller.finished(running["a-1"], succeeded=True)
    assert controller.reclaimable_pods() == {"main": 2}


def admitted(count: int) -> Admitted:
    """A workload admitted with ``count`` pods of 2 GPUs in flavor ``default``, which covers ``pods``."""
    main = PodSetResources("main", count, {GPU: 2 * count}, Pod("a", namespace="default"))
    usage = {("default", GPU): 2 * count, ("default", PODS): count}
    return Admitted(
        Workload("Job/default/a", "cq", 0, 0.0, 0, (main,)),
        {"main": {GPU: "default", PODS: "default"}},
        usage,
        0.0,
    )


@pytest.mark.parametrize(
    ("admitted_with", "reclaimable", "left"),
    [
        (4, 0, 4),
        (4, 1, 3),
        (4, 9, 0),  # never below none (``LimitReclaimablePodsToPodSetSizes``)
        (3, 1, 3),  # admitted already without the reclaimable pod: nothing more to release
        (3, 2, 2),
    ],
)
def test_an_admitted_workload_uses_only_the_quota_of_its_pods_not_reclaimable(
    admitted_with: int, reclaimable: int, left: int
) -> None:
    """``totalRequestsFromAdmission``: a pod set of 4 pods in the spec, less its reclaimable pods; where
    that is below the count it was admitted with, its requests per pod for the pods left."""
    before = admitted(admitted_with)
    after = before.reclaimed({"main": 4}, {"main": reclaimable})
    assert after.usage == {("default", GPU): 2 * left, ("default", PODS): left}
    assert after.workload.pod_sets[0].count == left
    assert (after is before) == (left == admitted_with)


JOBS = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "4"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "4"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: a
  labels: {kueue.x-k8s.io/queue-name: queue}
spec:
  parallelism: 8
  completions: 12
  template:
    metadata:
      annotations: {gpufleet.io/duration: 1h, gpufleet.io/warmup: "{min: 0s, max: 30m}"}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: trainer, resources: {limits: {nvidia.com/gpu: "1"}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: b
  labels: {kueue.x-k8s.io/queue-name: queue}
  annotations: {gpufleet.io/submit-at: 1m}
spec:
  parallelism: 4
  completions: 4
  template:
    metadata:
      annotations: {gpufleet.io/duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: trainer, resources: {limits: {nvidia.com/gpu: "1"}}}
"""


def test_a_waiting_job_is_admitted_in_the_quota_a_running_jobs_reclaimable_pods_release(
    tmp_path: Path,
) -> None:
    """A ClusterQueue of 8 GPUs; Job ``a`` runs 8 of its 12 one-GPU completions at once, each after a
    warmup of its own; Job ``b`` (4 GPUs) waits. Each of ``a``'s first four successes starts one of its
    last four pods; from the fifth on, fewer completions remain than ``a``'s parallelism, and each pod
    that ends is reclaimable (``parallelism - remaining``): ``a`` uses 7, 6, 5 GPUs, and at its eighth
    success 4 are free, and ``b`` is admitted then, onto the GPUs the fifth to eighth finished pods left
    (not when ``a`` finishes)."""
    summary = simulated(write(tmp_path, kueue_queues("default", 8, "queue", "default"), JOBS))
    pods = pods_by_name(summary)
    a = sorted((p["finished_s"], p["node"]) for name, p in pods.items() if name.startswith("a-"))
    eighth = a[7][0]
    assert eighth < a[8][0]  # its ninth pod ends later: the eighth success is an instant of its own
    b = [pods[f"b-{i}"] for i in range(4)]
    assert {p["bound_s"] for p in b} == {eighth}
    assert sorted(p["node"] for p in b) == sorted(node for _, node in a[4:8])
    workloads = {w["name"]: w for w in summary["kueue"]["workloads"]}
    assert workloads["Job/default/b"]["admissions"] == [eighth]
    assert workloads["Job/default/a"]["finished_s"] == a[-1][0] > eighth
    steps = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default/nvidia.com/gpu"]["steps"]
    # (at the eighth success a's 4 GPUs and b's 4 come at one instant: one step)
    assert steps[:5] == [[0.0, 8.0], [a[4][0], 7.0], [a[5][0], 6.0], [a[6][0], 5.0], [eighth, 8.0]]


URGENT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
"""


def test_a_requeued_job_asks_only_for_the_pods_it_will_still_create(tmp_path: Path) -> None:
    """``totalRequestsFromPodSets``: a pending workload's pod sets count without their reclaimable pods.
    A ClusterQueue of 4 GPUs: Job ``a`` (parallelism 4, 5 completions of 1 GPU) has 4 pods succeed at
    10 min and holds 1 GPU for its last; ``urgent`` (4 GPUs) evicts it at 15 min. When ``urgent`` ends,
    ``a`` is admitted again for its 1 pod, and ``c`` (3 GPUs, queued after ``a``) with it."""
    preempting = "  preemption: {withinClusterQueue: LowerPriority}\n"
    texts = [
        a10_nodes(1),
        kueue_queues("default", 4, "queue", "default", queue_spec=preempting),
        URGENT,
        queued_job(
            "a", "0s", 1, annotations="gpufleet.io/duration: 10m", spec="  parallelism: 4\n  completions: 5\n"
        ),
        queued_job(
            "urgent", "15m", 4, ", kueue.x-k8s.io/priority-class: urgent", "gpufleet.io/duration: 10m"
        ),
        queued_job("c", "16m", 3, annotations="gpufleet.io/duration: 10m"),
    ]
    summary = simulated(write(tmp_path, *texts))
    pods = pods_by_name(summary)
    assert (pods["a-4"]["reason"], pods["urgent-0"]["finished_s"]) == ("Suspended", 1530.0)
    assert pods["a-4-r1"]["bound_s"] == pods["c-0"]["bound_s"] == 1530.0
    steps = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default/nvidia.com/gpu"]["steps"]
    assert steps == [[0.0, 4.0], [600.0, 1.0], [930.0, 4.0], [1530.0, 4.0], [2130.0, 0.0]]
