"""Fields the OpenAPI schema marks required that the API server defaults before it validates."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, warnings

from gpufleet.model.pod_failure_policy import OnPodCondition, PodFailurePolicy, PodFailurePolicyRule

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    metadata: {annotations: {gpufleet.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
"""


def test_pod_failure_policy_condition_without_status_is_accepted(tmp_path: Path) -> None:
    # SetDefaults_Job (pkg/apis/batch/v1/defaults.go): onPodConditions[].status defaults to True
    assert warnings(tmp_path, JOB) == []
    (train,) = load(tmp_path, JOB).jobs
    assert train.pod_failure_policy == PodFailurePolicy(
        (PodFailurePolicyRule("Ignore", on_pod_conditions=(OnPodCondition("DisruptionTarget", "True"),)),)
    )
