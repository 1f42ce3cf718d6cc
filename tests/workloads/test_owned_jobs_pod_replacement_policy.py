"""The batch/v1 Jobs other controllers run hear a pod's deletion as it begins, as a plain Job does: a JobSet's
child Jobs (jobset v0.12.0 ``constructJob`` copies the replicated Job's Job spec, ``podReplacementPolicy``
included), a TrainJob's (the JobSet the trainer builds), an MPIJob's launcher Job (mpi-operator v0.8.2
``newLauncherJob``: ``podReplacementPolicy: Failed``) and a RayJob's submitter Job (kuberay
``createNewK8sJob``: none set). Each is run by the Job controller (``pkg/controller/job/job_controller.go``
v1.34.10: ``onlyReplaceFailedPods``, ``isPodFailed``, ``manageJob``'s ``wantActive - terminating - active``;
the default, ``pkg/apis/batch/v1/defaults.go`` ``SetDefaults_Job``: ``Failed`` with a ``podFailurePolicy``,
else ``TerminatingOrFailed``).

In each scenario one 8-GPU node runs the workload's 8-GPU pod; at 300 s the urgent pod preempts it and its
30 s grace period runs to 330 s. Under ``TerminatingOrFailed`` the pod counts failed at 300 s and its
replacement comes after the pod failure backoff (10 s), at 310 s, while the old pod still terminates; under
``Failed`` it comes once the pod ended Failed and the backoff passed, at 340 s.

A child Job of ``activeDeadlineSeconds: 0`` (and a plain Job of it) fails ``DeadlineExceeded`` before it
creates any pod: ``syncJob`` sets ``status.startTime`` at the Job's first sync and checks
``pastActiveDeadline`` before ``manageJob``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, URGENT_POD, simulated_controller, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.workloads import REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED
from gpufleet.workloads.job import JobController
from gpufleet.workloads.jobset import JobSetController
from gpufleet.workloads.mpijob import MPIJobController
from gpufleet.workloads.rayjob import RayJobController
from gpufleet.workloads.trainjob import TrainJobController

SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 1h}\n"
#: the replacement's creation under each policy (unset: ``TerminatingOrFailed``, no ``podFailurePolicy``)
POLICIES = [(None, 310.0), (REPLACE_TERMINATING_OR_FAILED, 310.0), (REPLACE_FAILED, 340.0)]
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
#: a ``podFailurePolicy`` (at a JobSet Job template spec's indentation) that ignores disruptions
FAILURE_POLICY = """
        podFailurePolicy:
          rules:
          - action: Ignore
            onPodConditions: [{type: DisruptionTarget}]"""
POD_SPEC = """
restartPolicy: Never
containers:
- name: node
  image: trainer:1
  resources: {limits: {nvidia.com/gpu: 8}}"""


def pod_spec(indent: int) -> str:
    """The 8-GPU pod's spec, its lines at ``indent``."""
    return POD_SPEC.replace("\n", "\n" + " " * indent)


def _replacement(policy: str | None, indent: int) -> str:
    """A Job spec's ``podReplacementPolicy`` line at ``indent`` (none for ``policy`` None)."""
    return "" if policy is None else f"\n{' ' * indent}podReplacementPolicy: {policy}"


def jobset(policy: str | None, spec: str = "") -> str:
    """A JobSet of one Job of one 8-GPU pod of 2 h (the Job template's ``podReplacementPolicy``
    ``policy``; ``spec``: more of the Job template's spec)."""
    return f"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: train, namespace: ml}}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        parallelism: 1
        completions: 1{_replacement(policy, 8)}{spec}
        template:
          metadata: {{annotations: {{gpufleet.io/duration: 2h}}}}
          spec:{pod_spec(12)}
"""


def trainjob(policy: str | None, spec: str = "") -> tuple[str, str]:
    """A torch ClusterTrainingRuntime of one trainer Job (its ``podReplacementPolicy`` ``policy``; ``spec``:
    more of its Job spec) and a TrainJob of one node on it."""
    runtime = f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {{name: torch}}
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}
          spec:{_replacement(policy, 12)}{spec}
            template:
              metadata: {{annotations: {{gpufleet.io/duration: 2h}}}}
              spec:{pod_spec(16)}
"""
    job = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llm, namespace: ml}
spec:
  runtimeRef: {name: torch}
  trainer: {numNodes: 1}
"""
    return runtime, job


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: pi, namespace: ml}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        metadata: {annotations: {gpufleet.io/duration: 2h}}
        spec:
          containers:
          - name: mpi
            image: mpi-pi
            resources: {limits: {nvidia.com/gpu: 8}}
"""

RAYJOB = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
  namespace: ml
  annotations: {gpufleet.io/duration: 2h}
spec:
  entrypoint: python train.py
  submitterPodTemplate:
    spec:
      restartPolicy: Never
      containers:
      - name: submitter
        image: rayproject/ray:2.46.0
        resources: {limits: {cpu: "1", nvidia.com/gpu: 8}}
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0
            resources: {limits: {cpu: "2", memory: 8Gi}}
"""


def preempted(tmp_path: Path, key: str, kind: type[Any], *texts: str) -> tuple[dict[str, Any], Any]:
    """The workload of ``texts`` on the one 8-GPU node, its pod preempted at 300 s: its pods by name and its
    controller as it ended."""
    paths = write(tmp_path, NODE_N0, URGENT_POD, SIMULATION, *texts)
    pods, controller, _ = simulated_controller(paths, key, kind)
    return pods, controller


def created(pods: dict[str, Any], prefix: str) -> list[tuple[float, str | None, float | None]]:
    """Each pod of the workload (its name starting ``prefix``): when it was created, its reason, when it was
    gone."""
    ours = [p for n, p in pods.items() if n.startswith(prefix)]
    return sorted((p["created_s"], p["reason"], p["deleted_s"]) for p in ours)


@pytest.mark.parametrize(("policy", "replaced_s"), POLICIES)
def test_a_jobset_jobs_preempted_pod_is_replaced_as_its_podreplacementpolicy_says(
    tmp_path: Path, policy: str | None, replaced_s: float
) -> None:
    """jobset ``constructJob`` copies the template's ``podReplacementPolicy`` into the child Job; the Job
    controller then replaces the preempted pod at 310 s under ``TerminatingOrFailed`` (``isPodFailed``),
    at 340 s under ``Failed`` (``onlyReplaceFailedPods``); the Job counts it failed once."""
    pods, controller = preempted(tmp_path, "JobSet/ml/train", JobSetController, jobset(policy))
    assert isinstance(controller, JobSetController)
    assert created(pods, "train-workers-0-0-") == [(0.0, "Preempted", 330.0), (replaced_s, None, None)]
    child = controller.children["train-workers-0"]
    assert child.failed == 1 and child.status_counts()["terminating"] == 0
    assert controller.finished_as is None


def test_a_jobset_jobs_terminating_pod_counts_failed_at_once_and_its_replacement_runs_beside_it(
    tmp_path: Path,
) -> None:
    """At 320 s, under the default ``TerminatingOrFailed``: the Job counts the preempted pod failed and
    terminating (``status.terminating``, ``CountTerminatingPods``), its replacement is created, and both are
    the JobSet's pods until the old one is gone (Kueue's quota holds them)."""
    paths = write(tmp_path, NODE_N0, URGENT_POD, SIMULATION, jobset(None))
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController, 320.0)
    child = controller.children["train-workers-0"]
    assert child.status_counts() == {"active": 1, "succeeded": 0, "failed": 1, "terminating": 1}
    assert len(controller.active) == 2 and len(pods) == 3  # the old pod, its replacement, the urgent pod


def test_a_jobset_job_failed_by_its_terminating_pod_is_judged_once_the_pod_is_gone(tmp_path: Path) -> None:
    """``backoffLimit: 0``: the preempted pod, counted failed at 300 s (``isPodFailed``), fails the Job then
    (``FailureTarget``); the JobSet reads a Job's ``Failed`` condition (jobset ``JobFinished``), which waits
    for its terminating pods (``delayTerminalCondition``): at 320 s the JobSet still runs, and it fails once
    the pod is gone (330 s). No replacement is created."""
    text = jobset(None, "\n        backoffLimit: 0")
    paths = write(tmp_path, NODE_N0, URGENT_POD, SIMULATION, text)
    _, running, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController, 320.0)
    assert running.children["train-workers-0"].failure == ("BackoffLimitExceeded", BACKOFF_MESSAGE)
    assert running.finished_as is None
    pods, ended = preempted(tmp_path, "JobSet/ml/train", JobSetController, text)
    assert ended.finished_as == "Failed"
    assert created(pods, "train-workers-0-0-") == [(0.0, "Preempted", 330.0)]


def test_a_jobset_job_failed_by_its_terminating_pod_deletes_its_other_pods_at_once(tmp_path: Path) -> None:
    """A Job of two 4-GPU pods, ``backoffLimit: 0``; the urgent 4-GPU pod preempts one at 300 s: counted
    failed then, it fails the Job (``FailureTarget``), which deletes its other active pod at once
    (``deleteActivePods``), as a plain Job does; both are gone at 330 s, when the JobSet fails."""
    text = jobset(None, "\n        backoffLimit: 0").replace("parallelism: 1", "parallelism: 2")
    text = text.replace("completions: 1", "completions: 2").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4")
    urgent = URGENT_POD.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4")
    paths = write(tmp_path, NODE_N0, urgent, SIMULATION, text)
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController)
    ended = sorted((p["reason"], p["deleted_s"]) for n, p in pods.items() if n.startswith("train-"))
    assert ended == [("Deleted", 330.0), ("Preempted", 330.0)]
    assert controller.finished_as == "Failed"
    assert controller.children["train-workers-0"].failed == 2


@pytest.mark.parametrize(
    ("policy", "failure_policy", "message"),
    [
        (None, "", None),
        (REPLACE_FAILED, "", None),
        (REPLACE_TERMINATING_OR_FAILED, "", None),
        (REPLACE_FAILED, FAILURE_POLICY, None),
        (
            REPLACE_TERMINATING_OR_FAILED,
            FAILURE_POLICY,
            'podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
        ),
        ("Never", "", 'podReplacementPolicy: Unsupported value: "Never": supported values: "Failed", '),
    ],
)
def test_a_jobset_jobs_podreplacementpolicy_is_read_and_checked_as_a_jobs(
    tmp_path: Path, policy: str | None, failure_policy: str, message: str | None
) -> None:
    """``validatePodReplacementPolicy`` on the child Job's spec: ``Failed`` or ``TerminatingOrFailed``, only
    ``Failed`` with a ``podFailurePolicy``; read, it is no warning."""
    paths = write(tmp_path, NODE_N0, jobset(policy, failure_policy))
    if message is not None:
        with pytest.raises(ScenarioError) as caught:
            load_scenario(paths)
        assert f"spec.replicatedJobs[0].template.spec.{message}" in str(caught.value)
        return
    scenario = load_scenario(paths)
    assert not [w for w in scenario.warnings if "podReplacementPolicy" in w]
    (workload,) = scenario.other_workloads
    assert workload.replicated_jobs[0].pod_replacement_policy == policy


def test_a_training_runtimes_podreplacementpolicy_is_checked_as_a_jobs(tmp_path: Path) -> None:
    """The runtime's Job spec is checked as a Job's: ``TerminatingOrFailed`` with a ``podFailurePolicy`` is
    an error at its field."""
    runtime, job = trainjob(REPLACE_TERMINATING_OR_FAILED, FAILURE_POLICY.replace("\n", "\n    "))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, NODE_N0, runtime, job))
    assert (
        "spec.template.spec.replicatedJobs[0].template.spec.podReplacementPolicy: Unsupported value: "
        '"TerminatingOrFailed": supported values: "Failed"'
    ) in str(caught.value)


@pytest.mark.parametrize(("policy", "replaced_s"), POLICIES)
def test_a_trainjobs_preempted_pod_is_replaced_as_its_runtimes_podreplacementpolicy_says(
    tmp_path: Path, policy: str | None, replaced_s: float
) -> None:
    """The trainer's JobSet (``plugins/jobset`` ``Build``) keeps the runtime's Job spec, its
    ``podReplacementPolicy`` too: the preempted ``llm-node-0-0`` is replaced at 310 s
    (``TerminatingOrFailed``) or 340 s (``Failed``)."""
    pods, controller = preempted(tmp_path, "TrainJob/ml/llm", TrainJobController, *trainjob(policy))
    assert isinstance(controller, TrainJobController)
    assert (pods["llm-node-0-0"]["reason"], pods["llm-node-0-0"]["deleted_s"]) == ("Preempted", 330.0)
    assert pods["llm-node-0-0-r1"]["created_s"] == replaced_s
    assert controller.children["llm-node-0"].failed == 1


def test_an_mpijobs_preempted_launcher_is_replaced_once_it_failed(tmp_path: Path) -> None:
    """mpi-operator ``newLauncherJob`` sets ``podReplacementPolicy: Failed``: the preempted launcher pod is
    terminating (the launcher Job's ``status.terminating``), neither counted nor replaced while it
    terminates (``wantActive - terminating - active`` is 0), and is still one of the MPIJob's pods; once it
    ended Failed (330 s) it counts, and its replacement comes after the pod failure backoff (340 s)."""
    paths = write(tmp_path, NODE_N0, URGENT_POD, SIMULATION, MPIJOB)
    sim_pods, controller, _ = simulated_controller(paths, "MPIJob/ml/pi", MPIJobController, 320.0)
    launcher = controller.launcher
    assert launcher is not None and launcher.job.only_replace_failed_pods
    assert launcher.status_counts() == {"active": 0, "succeeded": 0, "failed": 0, "terminating": 1}
    assert controller.active == {"ml/pi-launcher-0"} and "pi-launcher-0-r1" not in sim_pods
    pods, _ = preempted(tmp_path, "MPIJob/ml/pi", MPIJobController, MPIJOB)
    assert created(pods, "pi-launcher-0") == [(0.0, "Preempted", 330.0), (340.0, None, None)]


def test_a_rayjobs_submitter_pod_is_replaced_as_it_begins_terminating(tmp_path: Path) -> None:
    """kuberay ``createNewK8sJob`` sets no ``podReplacementPolicy`` nor ``podFailurePolicy``: the submitter
    Job's default ``TerminatingOrFailed`` counts its preempted pod failed at 300 s and replaces it at 310 s,
    while the pod terminates; the RayJob runs on (``backoffLimit`` 2 not passed)."""
    pods, controller = preempted(tmp_path, "RayJob/ml/rj", RayJobController, RAYJOB)
    assert isinstance(controller, RayJobController)
    assert (pods["rj-0"]["reason"], pods["rj-0"]["deleted_s"]) == ("Preempted", 330.0)
    assert pods["rj-0-r1"]["created_s"] == 310.0
    assert controller.submitter is not None and controller.submitter.failed == 1
    assert controller.status == "Running"


# -- activeDeadlineSeconds: 0 ---------------------------------------------------------------------


def test_a_jobset_job_of_deadline_0_fails_before_it_creates_a_pod(tmp_path: Path) -> None:
    """``syncJob``: the child Job's ``startTime`` is set at its first sync and ``pastActiveDeadline`` (0 s
    since) holds before ``manageJob``: it fails ``DeadlineExceeded`` with no pod, and the JobSet, without a
    failure policy, fails at 0 s."""
    paths = write(tmp_path, NODE_N0, SIMULATION, jobset(None, "\n        activeDeadlineSeconds: 0"))
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController)
    assert pods == {}
    child = controller.children["train-workers-0"]
    assert child.failure == DEADLINE_EXCEEDED and child.failed == 0
    assert (controller.finished_as, controller.message) == (
        "Failed",
        "jobset failed due to one or more job failures (first failed job: train-workers-0)",
    )


def test_under_kueue_a_jobset_job_of_deadline_0_fails_at_the_admission(tmp_path: Path) -> None:
    """Under Kueue the Job's deadline runs from the JobSet's admission (``resumeJob``; the Job's first sync
    unsuspended sets ``startTime``); gpufleet holds a queued workload's pods gated until then (upstream the
    suspended Job has none), so the gated pod, as a plain Job's, is dropped uncounted as Kueue admits the
    JobSet (0 s, ``JobController.run_with_counts``), the Job fails, and the JobSet fails."""
    text = jobset(None, "\n        activeDeadlineSeconds: 0").replace(
        "namespace: ml}", "namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}"
    )
    paths = write(tmp_path, NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, SIMULATION, text)
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController)
    assert created(pods, "train-workers-0-0-") == [(0.0, "Deleted", 0.0)]
    assert controller.children["train-workers-0"].failure == DEADLINE_EXCEEDED
    assert controller.finished_as == "Failed"


def test_a_trainjobs_job_of_deadline_0_fails_before_it_creates_a_pod(tmp_path: Path) -> None:
    """The runtime's Job spec ``activeDeadlineSeconds: 0``: the trainer's Job fails ``DeadlineExceeded``
    at its first sync, before ``manageJob`` creates its pod; the TrainJob fails with its JobSet."""
    runtime, job = trainjob(None, "\n            activeDeadlineSeconds: 0")
    paths = write(tmp_path, NODE_N0, SIMULATION, runtime, job)
    pods, controller, _ = simulated_controller(paths, "TrainJob/ml/llm", TrainJobController)
    assert pods == {}
    assert controller.children["llm-node-0"].failure == DEADLINE_EXCEEDED
    assert controller.finished_as == "Failed"


def test_a_plain_job_of_deadline_0_fails_before_it_creates_a_pod(tmp_path: Path) -> None:
    """A plain Job of ``activeDeadlineSeconds: 0`` is failed the same way (``pastActiveDeadline`` before
    ``manageJob``): no pod, ``DeadlineExceeded``, nothing counted failed."""
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: ml}
spec:
  activeDeadlineSeconds: 0
  template:
    metadata: {annotations: {gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
"""
    paths = write(tmp_path, NODE_N0, SIMULATION, job)
    pods, controller, _ = simulated_controller(paths, "Job/ml/batch", JobController)
    assert pods == {}
    assert controller.failure == DEADLINE_EXCEEDED and controller.failed == 0
