"""Kueue releases a Job's quota when the Job's ``Complete`` or ``Failed`` condition is set (kueue v0.19.2
``pkg/controller/jobs/job/job_controller.go`` ``Job.Finished``, read by ``jobframework``'s reconciler to
finish the Workload), and the Job controller (``pkg/controller/job`` v1.34.10, ``delayTerminalCondition``)
sets it only once none of the Job's pods is terminating: the interim ``FailureTarget`` does not finish the
Workload.

One 8-GPU node ``n0`` runs the Job's pod ``batch-0``; its second pod ``batch-1`` waits (no room). At 300 s the
urgent pod preempts ``batch-0``: under ``TerminatingOrFailed`` (no ``podFailurePolicy``) it counts failed as
it begins terminating (``isPodFailed``), past ``backoffLimit: 0``: the Job fails (``FailureTarget``) and
deletes ``batch-1`` at once (unbound). ``batch-0``'s 30 s grace period runs to 330 s. A CPU-only pod on
another node ends at 310 s, so Kueue looks at its workloads while ``batch-0`` still terminates."""

from __future__ import annotations

from pathlib import Path

from conftest import NODE_N0, URGENT_POD, simulated_controller, write
from gpufleet.workloads.job import JobController

SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 1h}\n"
KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
"""
#: a CPU-only node and a pod on it that ends at 310 s
SHORT = """
apiVersion: v1
kind: Node
metadata: {name: cpu0}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: short
  namespace: ml
  annotations: {gpufleet.io/duration: 310s}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: x, resources: {requests: {cpu: 1}}}
"""
JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 0
  template:
    metadata: {annotations: {gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
"""


def test_a_job_failed_while_its_pod_terminates_releases_its_quota_once_the_pod_is_gone_Job_Finished(
    tmp_path: Path,
) -> None:
    """``FailureTarget`` at 300 s, ``Failed`` at 330 s as ``batch-0`` is gone (``delayTerminalCondition``):
    the Workload finishes and its 16 GPUs are released at 330 s, not at 310 s when Kueue looked while the pod
    still terminated (``Job.Finished`` reads ``Failed``, not ``FailureTarget``)."""
    paths = write(tmp_path, NODE_N0, SHORT, KUEUE, URGENT_POD, SIMULATION, JOB)
    pods, controller, summary = simulated_controller(paths, "Job/ml/batch", JobController)
    assert (pods["short"]["finished_s"], pods["batch-0"]["finished_s"]) == (310.0, 330.0)
    assert (pods["batch-1"]["reason"], pods["batch-1"]["deleted_s"]) == ("Deleted", 300.0)
    status = summary["workload_status"]["Job/ml/batch"]
    assert [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", 300.0),
        ("Failed", "BackoffLimitExceeded", 330.0),
    ]
    (batch,) = summary["kueue"]["workloads"]
    assert (batch["name"], batch["finished_s"]) == ("Job/ml/batch", 330.0)
    usage = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default/nvidia.com/gpu"]["steps"]
    assert usage == [[0.0, 16.0], [330.0, 0.0]]
    assert controller.failed == 2
