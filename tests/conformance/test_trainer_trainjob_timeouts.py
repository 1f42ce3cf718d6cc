"""Kubeflow Trainer v2's TrainJob ``activeDeadlineSeconds``.

Upstream: ``kubeflow/trainer`` at 8c0f5059 (the commit ``shared/upstream-manifests`` takes its examples from;
the deadline is there since v2.2.0), ``test/integration/controller/trainjob_controller_test.go``, context
"Integration tests for the TrainJob Timeouts", against ``TrainJobReconciler.reconcileDeadline``
(``pkg/controller/trainjob_controller.go``): past ``activeDeadlineSeconds`` from the TrainJob's creation, or
from the last transition of its ``Suspended`` condition to false, a TrainJob not finished and not suspended
gets ``Failed`` (reason ``DeadlineExceeded``) and its JobSet is deleted.

Every case, through the simulator: upstream's runtime is ``mock-mpi`` (``MakeClusterTrainingRuntimeWrapper``),
whose pods never run in envtest; here a torch runtime's one trainer Job of two 2 h pods on H100 nodes,
``gpufleet.workloads.trainjob``. The deleted JobSet shows as its pods deleted at the deadline (gone after
their 30 s grace period). "Should reset deadline timer upon resume" resumes the TrainJob by hand
(``suspend: false``); in a simulation Kueue resumes it, admitting it once a Job that holds the quota ended
(600 s): the deadline counts from then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import local_queue, resource_flavor, simulated_controller, write
from gpufleet.workloads.trainjob import TrainJobController
from shared_files import UPSTREAM

RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              metadata: {annotations: {gpufleet.io/duration: 2h}}
              spec:
                containers:
                - {name: node, image: trainer, resources: {limits: {cpu: 1, nvidia.com/gpu: 1}}}
"""

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 100}
      - {name: nvidia.com/gpu, nominalQuota: 3}
"""

BLOCKER = """
apiVersion: batch/v1
kind: Job
metadata: {name: blocker, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    metadata: {annotations: {gpufleet.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busy, resources: {limits: {cpu: 1, nvidia.com/gpu: 3}}}
"""


def train_job(deadline: int, suspend: bool = False, queued: bool = False) -> str:
    labels = (
        "labels: {kueue.x-k8s.io/queue-name: lq}, annotations: {gpufleet.io/submit-at: 10s}, "
        if queued
        else ""
    )
    return f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: deadline-job, namespace: ml, {labels}}}
spec:
  runtimeRef: {{name: torch}}
  activeDeadlineSeconds: {deadline}
  suspend: {str(suspend).lower()}
"""


# name: (activeDeadlineSeconds, suspended, queued behind a Job, its final condition and reason after 1 h, when
# its pods are gone: None while they run)
TIMEOUTS: dict[str, tuple[int, bool, bool, tuple[str, str | None], float | None]] = {
    "Should fail TrainJob with DeadlineExceeded when ActiveDeadlineSeconds expires": (
        1,
        False,
        False,
        ("Failed", "DeadlineExceeded"),
        31.0,
    ),
    "Should not fail TrainJob if ActiveDeadlineSeconds is not exceeded": (
        3600 * 3,
        False,
        False,
        ("Running", None),
        None,
    ),
    "Should not start deadline timer if TrainJob is suspended": (1, True, False, ("Suspended", None), None),
    "Should reset deadline timer upon resume": (2, False, True, ("Failed", "DeadlineExceeded"), 632.0),
}


@pytest.mark.parametrize(("name", "row"), TIMEOUTS.items(), ids=list(TIMEOUTS))
def test_trainjob_timeouts(tmp_path: Path, name: str, row: tuple[Any, ...]) -> None:
    deadline, suspend, queued, (status, reason), gone_s = row
    texts = [RUNTIME, train_job(deadline, suspend, queued)]
    if queued:
        texts += [
            "---".join([resource_flavor("default-flavor"), QUEUES, local_queue("lq", "ml", "cq")]),
            BLOCKER,
        ]
    paths = [UPSTREAM / "_clusters/h100-nodes.yaml", *write(tmp_path, *texts)]
    pods, controller, _ = simulated_controller(paths, "TrainJob/ml/deadline-job", TrainJobController, 3600)
    assert (controller.status, controller.reason) == (status, reason)
    trained = [p for n, p in pods.items() if n.startswith("deadline-job")]
    assert len(trained) == (0 if suspend else 2)
    assert {p["finished_s"] for p in trained} <= {gone_s}
    if reason is not None:
        assert controller.message == "TrainJob exceeded its active deadline"
