"""Volcano Job lifecycle policies of an ``exitCode``.

Upstream: ``volcano-sh/volcano`` (master, ed72c7c81):

- ``pkg/webhooks/admission/jobs/validate/admit_job_test.go`` ``TestValidateJobCreate``, its rows on policies
  of an exit code (``validatePolicies``): the Job ``<name>`` in namespace ``ml`` (upstream's test namespace
  is left out), ``minAvailable: 1``, one task ``task-1`` of 1 replica (container ``fake-name``), and the
  row's job policies; upstream checks that the webhook's message contains the row's, here gpufleet's
  error at the policy's field does.
- ``test/e2e/jobseq/job_error_handling.go`` "job level LifecyclePolicy, error code: 3; Action: RestartJob":
  a task ``success`` (1 replica) and a task ``fail`` whose container runs ``sleep 10s && exit 3`` under
  ``restartPolicy: Never``; upstream waits for the phases Pending, Running, Restarting. Here ``fail``
  exits 3 (``gpufleet.io/exit-code``) after 10 minutes, through the simulator; gpufleet does not tell
  Pending from Running (``volcano_job``), and the restarts go on to ``maxRetry`` (3), which fails the job.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import a10_nodes, simulated_controller, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads.volcano_job import VolcanoJobController


def job(name: str, policies: str) -> str:
    return f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
  minAvailable: 1
  queue: default
  tasks:
  - name: task-1
    replicas: 1
    template:
      metadata: {{labels: {{name: test}}}}
      spec:
        containers: [{{name: fake-name, image: "busybox:1.24"}}]
  policies: {policies}
"""


# name: (the job's policies, the error's field and message)
VALIDATE_JOB_CREATE = {
    "job-policy-withExitCode": (
        "[{event: PodFailed, action: AbortJob, exitCode: -1}]",
        "spec.policies[0]: Invalid value: ",
        "must not specify event and exitCode simultaneously",
    ),
    "policy-extcode-zero": (
        "[{action: AbortJob, exitCode: 0}]",
        "spec.policies[0].exitCode: Invalid value: 0: ",
        "0 is not a valid error code",
    ),
    "duplicate-exitcode": (
        "[{exitCode: 1}, {exitCode: 1}]",
        "spec.policies[1].exitCode: Invalid value: 1: ",
        "duplicate exitCode 1",
    ),
}


@pytest.mark.parametrize(("name", "row"), VALIDATE_JOB_CREATE.items(), ids=VALIDATE_JOB_CREATE.keys())
def test_validate_job_create(tmp_path: Path, name: str, row: tuple[str, str, str]) -> None:
    policies, field, message = row
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, a10_nodes(1), job(name.lower(), policies)))
    assert f"(Job/ml/{name.lower()}): {field}" in str(caught.value) and message in str(caught.value)


ERRORCODE_RESTART_JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: errorcode-restart-job, namespace: ml}
spec:
  policies: [{action: RestartJob, exitCode: 3}]
  tasks:
  - name: success
    replicas: 1
    minAvailable: 1
    template:
      metadata: {annotations: {gpufleet.io/duration: 2h}}
      spec:
        containers: [{name: nginx, image: nginx}]
  - name: fail
    replicas: 1
    minAvailable: 1
    template:
      metadata: {annotations: {gpufleet.io/duration: 10m, gpufleet.io/exit-code: "3"}}
      spec:
        restartPolicy: Never
        containers: [{name: nginx, image: nginx}]
"""


def test_job_level_lifecycle_policy_error_code_3_action_restart_job(tmp_path: Path) -> None:
    pods, controller, _ = simulated_controller(
        write(tmp_path, a10_nodes(1), ERRORCODE_RESTART_JOB),
        "Job.batch.volcano.sh/ml/errorcode-restart-job",
        VolcanoJobController,
        3600,
    )
    assert controller.retry_count == 3 and controller.version == 3 and controller.phase == "Failed"
    fail = pods["errorcode-restart-job-fail-0"]
    assert fail["phase"] == "Failed" and fail["reason"] == "Error"
    assert pods["errorcode-restart-job-success-0"]["reason"] == "Deleted"
