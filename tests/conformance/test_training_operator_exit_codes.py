"""Kubeflow Training Operator v1's restart policies and exit codes.

Upstream: ``kubeflow/trainer`` v1.9.4 (the training operator v1):

- ``pkg/util/train/train_util_test.go`` ``TestIsRetryableExitCode``, against
  ``gpufleet.workloads.pytorchjob``'s ``is_retryable_exit_code``;
- ``pkg/controller.v1/common/pod_test.go`` ``TestSetRestartPolicy``: the replica's ``restartPolicy`` set on
  its pods, here a PyTorchJob's Worker as gpufleet reads it (its template says ``Always``, which the
  replica's policy overwrites);
- ``pkg/controller.v1/tensorflow/pod_test.go`` "Test Exit Code" and "Test Unretryable Exit Code": a TFJob's
  one Worker under ``ExitCode`` failing with 130 is deleted (and created again), with 1 fails the job. Both
  go through the common ``ReconcilePods``, which a PyTorchJob shares: here a PyTorchJob's one Worker
  (container ``pytorch``) exits with the code (``gpufleet.io/exit-code``) after 10 minutes, through the
  simulator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import a10_nodes, simulated_controller, write
from gpufleet.kube import load_scenario
from gpufleet.workloads import controller_for
from gpufleet.workloads.pytorchjob import PyTorchJobController, is_retryable_exit_code

# TestIsRetryableExitCode: (exit code, retryable)
RETRYABLE = [(1, False), (2, False), (3, False), (130, True), (138, True)]


@pytest.mark.parametrize(("code", "expected"), RETRYABLE)
def test_is_retryable_exit_code(code: int, expected: bool) -> None:
    assert is_retryable_exit_code(code) is expected


# TestSetRestartPolicy: name -> (the replica's restartPolicy, its pods')
SET_RESTART_POLICY = {
    "restartPolicy is ExitCode": ("ExitCode", "Never"),
    "restartPolicy is Never": ("Never", "Never"),
    "restartPolicy is Always": ("Always", "Always"),
    "restartPolicy is OnFailure": ("OnFailure", "OnFailure"),
}


def worker_job(policy: str, annotations: str = "", template_policy: str = "") -> str:
    """A PyTorchJob ``ml/mnist`` of one Worker of ``policy``, its container ``pytorch`` on 1 GPU."""
    restart = f"restartPolicy: {template_policy}" if template_policy else ""
    return f"""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: mnist, namespace: ml}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: {policy}
      template:
        metadata:
          annotations: {{gpufleet.io/duration: 10m{annotations}}}
        spec:
          {restart}
          containers:
          - name: pytorch
            image: trainer
            resources:
              limits: {{nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(("policy", "expected"), SET_RESTART_POLICY.values(), ids=SET_RESTART_POLICY.keys())
def test_set_restart_policy(tmp_path: Path, policy: str, expected: str) -> None:
    text = worker_job(policy, template_policy="Always")
    (job,) = load_scenario(write(tmp_path, a10_nodes(1), text)).other_workloads
    (pod,) = controller_for(job).wanted([])
    assert pod.restart_policy == expected


def test_exit_code_should_delete_designated_pod(tmp_path: Path) -> None:
    """ "Test Exit Code": 130 is retryable; the failed Worker is deleted and created again under its name."""
    text = worker_job("ExitCode", ', gpufleet.io/exit-code: "130"')
    pods, controller, _ = simulated_controller(
        write(tmp_path, a10_nodes(1), text), "PyTorchJob/ml/mnist", PyTorchJobController, 1500
    )
    assert controller.restarts == 2 and controller.finished_as is None  # failed at 10 and ~20 minutes
    assert pods["mnist-worker-0"]["phase"] == "Running"


def test_unretryable_exit_code_should_set_the_job_status_to_failed(tmp_path: Path) -> None:
    """ "Test Unretryable Exit Code": 1 is permanent; the job is Failed and its Worker not created again."""
    text = worker_job("ExitCode", ', gpufleet.io/exit-code: "1"')
    pods, controller, _ = simulated_controller(
        write(tmp_path, a10_nodes(1), text), "PyTorchJob/ml/mnist", PyTorchJobController, 3600
    )
    assert controller.finished_as == "Failed" and controller.restarts == 0
    assert pods["mnist-worker-0"]["phase"] == "Failed"
