"""The MPI Operator v2's MPIJob (``gpufleet.workloads.mpijob``): its reader (``v2beta1/default.go``,
``validation/validation.go``), the workers and launcher Job the operator makes
(``mpi_job_controller.go`` ``newWorker``, ``newLauncherJob``), ``launcherCreationPolicy``,
``cleanPodPolicy``, the PodGroup, Kueue, and how the job ends (``updateMPIJobStatus``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import (
    URGENT_JOB_AT_10M_IN_KUEUE,
    URGENT_POD,
    a10_nodes,
    pods_by_name,
    simulated,
    simulated_controller,
    write,
)
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads import controller_for
from gpufleet.workloads.mpijob import MPIJobController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]


def nodes(count: int = 1) -> str:
    return a10_nodes(count)


def replica(
    replicas: int | None = 1,
    policy: str | None = None,
    duration: str | None = None,
    gpus: int = 0,
    annotations: str = "",
) -> str:
    count = f"replicas: {replicas}" if replicas is not None else ""
    restart = f"restartPolicy: {policy}" if policy else ""
    timed = f"gpufleet.io/duration: {duration}, " if duration else ""
    return f"""
      {count}
      {restart}
      template:
        metadata:
          annotations: {{{timed}gpufleet.io/image-size: 1GB{annotations}}}
        spec:
          containers:
          - name: mpi
            image: mpi-pi
            resources:
              limits: {{cpu: 1, nvidia.com/gpu: {gpus}}}"""


def mpijob(launcher: str | None, worker: str | None, extra: str = "") -> str:
    specs = ""
    if launcher is not None:
        specs += f"\n    Launcher:{launcher}"
    if worker is not None:
        specs += f"\n    Worker:{worker}"
    return f"""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: pi, namespace: ml}}
spec:
  mpiReplicaSpecs:{specs}
{extra}
"""


def run(
    paths: list[Path], duration_s: float | None = None
) -> tuple[dict[str, Any], MPIJobController, dict[str, Any]]:
    """The scenario simulated: its pods by name, the MPIJob's controller as it ended, the summary."""
    return simulated_controller(paths, "MPIJob/ml/pi", MPIJobController, duration_s)


# -- the reader ------------------------------------------------------------------------------


def test_workers_and_the_launcher_job_pod_are_named_labelled_and_owned_as_the_operator_makes_them(
    tmp_path: Path,
) -> None:
    """``workerName``: ``<job>-worker-<i>`` owned by the MPIJob; the launcher is the Job
    ``<job>-launcher`` (``newLauncherJob``), its pod owned by that Job. ``defaultLabels``: operator-name,
    job-name and job-role (no replica-type); workers carry replica-index. Restart policies default to
    OnFailure (launcher) and Never (workers)."""
    scenario = load_scenario(write(tmp_path, nodes(), mpijob(replica(), replica(2))))
    (job,) = scenario.other_workloads
    pods = controller_for(job).wanted([])
    assert [p.name for p in pods] == ["pi-worker-0", "pi-worker-1", "pi-launcher-0"]
    worker, launcher = pods[1], pods[2]
    assert worker.owner is not None and (worker.owner.kind, worker.owner.name) == ("MPIJob", "pi")
    assert launcher.owner is not None and (launcher.owner.kind, launcher.owner.name) == ("Job", "pi-launcher")
    assert worker.labels == {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": "pi",
        "training.kubeflow.org/job-role": "worker",
        "training.kubeflow.org/replica-index": "1",
    }
    assert launcher.labels["training.kubeflow.org/job-role"] == "launcher"
    assert launcher.labels["batch.kubernetes.io/job-name"] == "pi-launcher"
    assert "training.kubeflow.org/replica-index" not in launcher.labels
    assert (worker.restart_policy, launcher.restart_policy) == ("Never", "OnFailure")
    assert all(p.namespace == "ml" and p.pod_group is None for p in pods)


def test_run_launcher_as_worker_gives_the_launcher_index_0_and_shifts_the_workers(tmp_path: Path) -> None:
    """``workerReplicaIndexLabel``: with ``runLauncherAsWorker`` the workers' indexes are padded by one."""
    text = mpijob(replica(), replica(1), "  runLauncherAsWorker: true")
    (job,) = load_scenario(write(tmp_path, nodes(), text)).other_workloads
    worker, launcher = controller_for(job).wanted([])
    assert worker.labels["training.kubeflow.org/replica-index"] == "1"
    assert launcher.labels["training.kubeflow.org/replica-index"] == "0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (mpijob(replica(2), replica()), "spec.mpiReplicaSpecs.Launcher.replicas: Invalid value: 2: must be"),
        (mpijob(None, replica()), "spec.mpiReplicaSpecs.Launcher: Required value: must have Launcher"),
        (
            mpijob(replica(), replica(None)),
            "spec.mpiReplicaSpecs.Worker.replicas: Invalid value: 0: must be greater than or equal to 1",
        ),
        (
            mpijob(replica(policy="Always"), replica()),
            'spec.mpiReplicaSpecs.Launcher.restartPolicy: Unsupported value: "Always"',
        ),
        (  # v2beta1's validRestartPolicies: the training operator's ExitCode is not one
            mpijob(replica(), replica(policy="ExitCode")),
            'spec.mpiReplicaSpecs.Worker.restartPolicy: Unsupported value: "ExitCode": supported values: '
            '"Never", "OnFailure"',
        ),
        (mpijob(None, None), "spec.mpiReplicaSpecs: Required value: must have replica specs"),
        (
            mpijob(replica(), replica(), "  mpiImplementation: OpenMP"),
            'spec.mpiImplementation: Unsupported value: "OpenMP": supported values: "Intel", "MPICH"',
        ),
        (
            mpijob(replica(), replica(), "  launcherCreationPolicy: Later"),
            'spec.launcherCreationPolicy: Unsupported value: "Later"',
        ),
        (
            mpijob(replica(), replica(), "  runPolicy: {cleanPodPolicy: Some}"),
            'spec.runPolicy.cleanPodPolicy: Unsupported value: "Some"',
        ),
        (
            mpijob(replica(), replica(), "  runPolicy: {backoffLimit: -1}"),
            "spec.runPolicy.backoffLimit: Invalid value: -1",
        ),
        (mpijob(replica(), replica(), "  slotsPerWorker: -2"), "spec.slotsPerWorker: Invalid value: -2"),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """validation.go ``validateMPIJobSpec``, ``validateLauncherReplicaSpec``, ``validateWorkerReplicaSpec``,
    ``validateRunPolicy`` and the CRD's enums."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert "(MPIJob/ml/pi): " + message in str(caught.value)


def test_a_misspelt_kind_of_v2beta1_is_an_error_and_the_v1_mpijob_is_a_warning(tmp_path: Path) -> None:
    """``kubeflow.org`` is known: ``MpiJob`` is a typo; the Training Operator v1's MPIJob is a real kind
    gpufleet does not model."""
    text = mpijob(replica(), replica()).replace("kind: MPIJob", "kind: MpiJob")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert 'unknown kind "MpiJob" in kubeflow.org/v2beta1' in str(caught.value)
    v1 = mpijob(replica(), replica()).replace("kubeflow.org/v2beta1", "kubeflow.org/v1")
    scenario = load_scenario(write(tmp_path, nodes(), v1))
    assert not scenario.other_workloads
    assert any("kind kubeflow.org/v1/MPIJob is not modelled; ignored" in w for w in scenario.warnings)


def test_what_is_not_modelled_is_a_warning_and_what_changes_nothing_scheduled_is_read_silently(
    tmp_path: Path,
) -> None:
    extra = """  slotsPerWorker: 4
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiImplementation: Intel
  launcherCreationPolicy: AtStartup
  runPolicy:
    ttlSecondsAfterFinished: 60
    activeDeadlineSeconds: 3600
    managedBy: kueue.x-k8s.io/multikueue
    cleanPodPolicy: Running
    schedulingPolicy: {minAvailable: 1, queue: research}"""
    text = mpijob(replica(), replica(), extra).replace("    Worker:", "    PS:" + replica() + "\n    Worker:")
    warned = "\n".join(load_scenario(write(tmp_path, nodes(), text)).warnings)
    for field in (
        "runPolicy.ttlSecondsAfterFinished",
        "runPolicy.activeDeadlineSeconds",
        "runPolicy.managedBy",
        "runPolicy.schedulingPolicy.queue",
        "mpiReplicaSpecs.PS",
    ):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    for field in ("slotsPerWorker", "sshAuthMountPath", "mpiImplementation", "launcherCreationPolicy"):
        assert field not in warned
    assert "cleanPodPolicy" not in warned and "minAvailable" not in warned


# -- the gang and Kueue ------------------------------------------------------------------------


def test_a_scheduling_policy_makes_a_pod_group_of_the_workers_and_the_launcher(tmp_path: Path) -> None:
    """``calculateMinAvailable``: minMember = workers + 1 unless ``minAvailable``; the PodGroup is
    named after the job and every pod carries ``scheduling.x-k8s.io/pod-group``."""
    extra = "  runPolicy:\n    schedulingPolicy: {scheduleTimeoutSeconds: 120}"
    (job,) = load_scenario(write(tmp_path, nodes(), mpijob(replica(), replica(3), extra))).other_workloads
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert (group.name, group.namespace, group.min_member, group.schedule_timeout_s) == ("pi", "ml", 4, 120.0)
    assert {p.pod_group for p in controller.wanted([])} == {"pi"}


def test_the_published_kueue_sample_runs_its_launcher_and_two_workers_admitted_as_one_workload() -> None:
    """Kueue's ``site/static/examples/jobs/sample-mpijob.yaml`` under its quick-start queues (the
    ``kueue-integrations`` scenario): one workload of pod sets launcher + worker (3 cpu) is admitted
    and its three pods run."""
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "kueue/getting-started/quick-start-setup.yaml",
        UPSTREAM / "kueue/jobs/sample-mpijob.yaml",
    ]
    summary = simulated(paths, duration_s=600)
    pods = pods_by_name(summary)
    assert sorted(pods) == ["pi-launcher-0", "pi-worker-0", "pi-worker-1"]
    assert {p["phase"] for p in pods.values()} == {"Running"}
    (workload,) = summary["kueue"]["workloads"]
    assert (workload["name"], workload["admissions"]) == ("MPIJob/default/pi", [0.0])
    usage = summary["kueue"]["cluster_queues"]["cluster-queue"]["usage"]["default-flavor/cpu"]
    assert usage["peak"] == 3000.0


# -- launcherCreationPolicy ----------------------------------------------------------------------


def test_wait_for_workers_ready_creates_the_launcher_once_every_worker_is_ready(tmp_path: Path) -> None:
    """``syncHandler``: under ``WaitForWorkersReady`` the launcher Job is created only when
    ``countReadyWorkerPods`` equals the workers; under ``AtStartup`` it is created with them."""
    warm = ", gpufleet.io/warmup: 2m"
    text = mpijob(replica(duration="10m"), replica(2, annotations=warm), "  launcherCreationPolicy: POLICY")
    pods, _, _ = run(write(tmp_path, nodes(), text.replace("POLICY", "WaitForWorkersReady")), duration_s=600)
    # Ready once pulled (5 s) and warmed up (2 m)
    workers = [p for n, p in pods.items() if "worker" in n]
    ready = max(p["running_s"] + p["stages"]["warmup"] for p in workers)
    assert ready == 125.0 and pods["pi-launcher-0"]["created_s"] == ready
    # mpirun's world (launcher and workers) gathers with the launcher: then every rank computes
    assert {p["working_s"] for p in pods.values()} == {125.0}
    pods, _, _ = run(write(tmp_path, nodes(), text.replace("POLICY", "AtStartup")), duration_s=600)
    assert pods["pi-launcher-0"]["created_s"] == 0.0


# -- how it ends -----------------------------------------------------------------------------


def test_the_job_succeeds_with_its_launcher_and_clean_pod_policy_none_leaves_the_workers(
    tmp_path: Path,
) -> None:
    """``updateMPIJobStatus``: the launcher Job's Complete makes the MPIJob Succeeded; cleanPodPolicy
    None (the default) leaves the workers, which run sshd for ever, Running."""
    pods, controller, _ = run(write(tmp_path, nodes(), mpijob(replica(duration="10m"), replica(2))), 3600)
    assert controller.finished_as == "Succeeded"
    assert pods["pi-launcher-0"]["phase"] == "Succeeded"
    assert {pods[f"pi-worker-{i}"]["phase"] for i in range(2)} == {"Running"}


@pytest.mark.parametrize("policy", ["Running", "All"])
def test_clean_pod_policy_deletes_the_running_workers_once_the_launcher_succeeded(
    tmp_path: Path, policy: str
) -> None:
    """``deleteWorkerPods``: Running (Pending or Running pods) and All delete the workers once the job
    finished; the run then has nothing left to do."""
    extra = f"  runPolicy: {{cleanPodPolicy: {policy}}}"
    text = mpijob(replica(duration="10m"), replica(2), extra)
    pods, controller, summary = run(write(tmp_path, nodes(), text))
    assert controller.finished_as == "Succeeded"
    launcher_end = pods["pi-launcher-0"]["finished_s"]
    for i in range(2):
        worker = pods[f"pi-worker-{i}"]
        assert worker["reason"] == "Deleted" and worker["deleted_s"] >= launcher_end
    assert summary["end_time_s"] < 3600


OOM = ", gpufleet.io/gpu-memory: 40GB"  # more than the A10's 24 GiB: CUDA out of memory as it starts


def test_the_job_fails_when_its_launcher_job_fails_past_the_backoff_limit(tmp_path: Path) -> None:
    """The launcher Job's ``backoffLimit`` is ``runPolicy.backoffLimit``; its failed pod is replaced
    (``-r<n>``) after the Job's pod failure backoff; past the limit the Job fails and so the MPIJob
    (``updateMPIJobFailedStatus``)."""
    extra = "  runPolicy: {backoffLimit: 1}"
    launcher = replica(policy="Never", gpus=1, annotations=OOM)
    pods, controller, _ = run(write(tmp_path, nodes(), mpijob(launcher, replica(2), extra)), 3600)
    assert controller.finished_as == "Failed"
    assert {pods[n]["reason"] for n in ("pi-launcher-0", "pi-launcher-0-r1")} == {"OOMKilled"}
    assert pods["pi-launcher-0-r1"]["created_s"] >= pods["pi-launcher-0"]["finished_s"] + 10.0
    assert "pi-launcher-0-r2" not in pods


def test_a_launcher_exit_code_under_never_fails_its_pod_toward_the_launcher_jobs_backoff_limit(
    tmp_path: Path,
) -> None:
    """The launcher's replica ``restartPolicy`` (``setRestartPolicy``) is its pods': under ``Never`` a
    non-zero ``gpufleet.io/exit-code`` fails the pod, with no warning, and the launcher Job (no
    ``podFailurePolicy``, ``newLauncherJob``) counts each failure toward ``backoffLimit``."""
    extra = "  runPolicy: {backoffLimit: 1}"
    launcher = replica(policy="Never", duration="10m", annotations=', gpufleet.io/exit-code: "2"')
    paths = write(tmp_path, nodes(), mpijob(launcher, replica(1), extra))
    assert not [w for w in load_scenario(paths).warnings if "exit-code" in w]
    pods, controller, _ = run(paths, 3600)
    assert controller.finished_as == "Failed"
    assert {pods[n]["reason"] for n in ("pi-launcher-0", "pi-launcher-0-r1")} == {"Error"}


def test_a_launcher_exit_code_under_on_failure_restarts_its_container_in_place(tmp_path: Path) -> None:
    """The launcher's default ``OnFailure`` (``DefaultLauncherRestartPolicy``) overrides the template's
    (unset): the kubelet restarts the container that exits non-zero in place (``ShouldContainerBeRestarted``,
    no warning): at 600 s at once, then after 10, 20, 40, 80 s of back-off, 5 restarts within the hour; the
    pod runs on."""
    launcher = replica(duration="10m", annotations=', gpufleet.io/exit-code: "2"')
    paths = write(tmp_path, nodes(), mpijob(launcher, replica(1)))
    assert not [w for w in load_scenario(paths).warnings if "exit-code" in w]
    pods, _, _ = run(paths, 3600)
    assert (pods["pi-launcher-0"]["phase"], pods["pi-launcher-0"]["restarts"]) == ("Running", 5)


def test_a_preempted_worker_is_created_again_under_its_name(tmp_path: Path) -> None:
    """``getOrCreateWorker`` creates any worker pod that is missing: a worker preempted by an urgent
    pod comes back as ``pi-worker-0`` once the GPUs are free, and the job then succeeds."""
    text = mpijob(replica(duration="1h"), replica(1, gpus=8), "  runPolicy: {cleanPodPolicy: All}")
    pods, controller, _ = run(write(tmp_path, nodes(), text, URGENT_POD))
    assert pods["urgent"]["phase"] == "Succeeded"
    assert controller.restarts == 1 and controller.finished_as == "Succeeded"
    assert pods["pi-worker-0"]["created_s"] >= pods["urgent"]["created_s"]


FAILING_WORKER = replica(1, duration="5m", gpus=1, annotations=', gpufleet.io/exit-code: "2"')
MPIRUN_ABORTED = {"container": "mpi", "exit_code": 1, "reason": "Error"}


def test_a_worker_that_fails_in_place_is_not_created_again_and_the_launcher_restarts_until_its_job_fails(
    tmp_path: Path,
) -> None:
    """``getOrCreateWorker`` creates only the workers it cannot find by name: the worker whose process exits
    2 at 305 s (its 1 GB image pulled in 5 s) under the workers' ``Never`` stays Failed and is never made
    again. ``mpirun`` loses that rank and aborts: the launcher's process exits 1 at once, the kubelet
    restarts it in place (``OnFailure``), and the restarted ``mpirun`` exits again as it starts (the
    worker's host is gone): its second restart, after a 10 s back-off (315 s), reaches
    ``runPolicy.backoffLimit: 2`` (``pastBackoffLimitOnFailure``), the launcher Job fails and deletes its pod
    (gone after its 30 s grace period), and the MPIJob fails with it (``updateMPIJobStatus``)."""
    paths = write(
        tmp_path, nodes(), mpijob(replica(duration="1h"), FAILING_WORKER, "  runPolicy: {backoffLimit: 2}")
    )
    _, controller, summary = run(paths, 3600)
    by_name = {p["name"]: p for p in summary["pods"]}
    assert sorted(by_name) == ["ml/pi-launcher-0", "ml/pi-worker-0"]  # nothing made again
    worker, launcher = by_name["ml/pi-worker-0"], by_name["ml/pi-launcher-0"]
    assert (worker["phase"], worker["reason"], worker["finished_s"], worker["created_s"]) == (
        "Failed",
        "Error",
        305.0,
        0.0,
    )
    assert (launcher["restarts"], launcher["last_terminated"]) == (2, MPIRUN_ABORTED)
    assert (launcher["reason"], launcher["deleted_s"]) == ("Deleted", 345.0)
    assert (controller.failed, controller.restarts, controller.finished_as) == ({0}, 0, "Failed")


def test_under_a_launcher_of_never_each_new_launcher_pod_fails_as_it_starts_once_a_worker_failed(
    tmp_path: Path,
) -> None:
    """The launcher's ``restartPolicy: Never``: its pod fails (exit 1) when the worker fails at 305 s, and
    the launcher Job's pods made after its pod failure backoff (10 s, then 20 s) fail as they start; the
    third failure is past ``backoffLimit: 2`` and the MPIJob fails."""
    launcher = replica(duration="1h", policy="Never")
    paths = write(tmp_path, nodes(), mpijob(launcher, FAILING_WORKER, "  runPolicy: {backoffLimit: 2}"))
    pods, controller, _ = run(paths, 3600)
    launchers = [pods[n] for n in ("pi-launcher-0", "pi-launcher-0-r1", "pi-launcher-0-r2")]
    assert [(p["phase"], p["finished_s"], p["terminated"]) for p in launchers] == [
        ("Failed", 305.0, MPIRUN_ABORTED),
        ("Failed", 315.0, MPIRUN_ABORTED),
        ("Failed", 335.0, MPIRUN_ABORTED),
    ]
    assert "pi-launcher-0-r3" not in pods and controller.finished_as == "Failed"


def test_a_worker_oom_killed_as_it_starts_stays_failed_and_the_launchers_mpirun_exits_as_it_starts(
    tmp_path: Path,
) -> None:
    """A worker killed by CUDA out of memory as it starts (5 s, its image pulled) fails in place under
    ``Never``, ``OOMKilled``, and stays; the launcher's ``mpirun``, starting then, cannot reach it and exits
    1: its one restart reaches ``backoffLimit: 1``, the launcher Job deletes its pod (killed after its 30 s
    grace period: 137) and the MPIJob fails."""
    worker = replica(1, gpus=1, annotations=OOM)
    paths = write(tmp_path, nodes(), mpijob(replica(duration="1h"), worker, "  runPolicy: {backoffLimit: 1}"))
    _, controller, summary = run(paths, 3600)
    by_name = {p["name"]: p for p in summary["pods"]}
    assert sorted(by_name) == ["ml/pi-launcher-0", "ml/pi-worker-0"]
    assert (by_name["ml/pi-worker-0"]["phase"], by_name["ml/pi-worker-0"]["reason"]) == (
        "Failed",
        "OOMKilled",
    )
    launcher = by_name["ml/pi-launcher-0"]
    assert (launcher["restarts"], launcher["last_terminated"], launcher["deleted_s"]) == (
        1,
        MPIRUN_ABORTED,
        35.0,
    )
    assert controller.finished_as == "Failed"


REBOOT_AT_10M = """
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {name: reboot}
spec:
  faults: [{at: 10m, node: gpu-2, kind: xid-79}]
"""


def test_a_worker_that_succeeded_is_not_created_again_when_the_launcher_is_replaced(tmp_path: Path) -> None:
    """``getOrCreateWorker`` creates only the workers it cannot find by name; a Succeeded pod is still
    there. Workers that finished at 2 min stay Succeeded when XID 79 reboots the launcher's node at
    10 min and its Job makes a new launcher pod; the new launcher computes with the world they left."""
    pinned = "spec:\n          nodeSelector: {kubernetes.io/hostname: gpu-2}\n"
    launcher = replica(duration="1h", gpus=1).replace("spec:\n", pinned, 1)
    text = mpijob(launcher, replica(2, duration="2m", gpus=8))
    pods, controller, _ = run(write(tmp_path, nodes(3), text, REBOOT_AT_10M), 4 * 3600)
    workers = [pods[f"pi-worker-{i}"] for i in range(2)]
    assert [(w["phase"], w["finished_s"] < 600) for w in workers] == [("Succeeded", True)] * 2
    assert pods["pi-launcher-0"]["phase"] == "Failed" and pods["pi-launcher-0-r1"]["phase"] == "Succeeded"
    assert controller.restarts == 0 and controller.finished_as == "Succeeded"


POLICY = "  runPolicy: {cleanPodPolicy: CLEAN}"


@pytest.mark.parametrize(("policy", "made_again"), [("None", True), ("Running", False)])
def test_kueue_suspending_the_job_deletes_its_succeeded_workers_but_under_clean_pod_policy_running(
    tmp_path: Path, policy: str, made_again: bool
) -> None:
    """``syncHandler`` on a suspended MPIJob: ``deleteWorkerPods`` deletes every worker, a Succeeded one
    too, but keeps those not Pending or Running under ``cleanPodPolicy: Running``. The workers that
    succeeded at 2 min are made again when Kueue admits the job back, after the urgent Job that
    preempted it at 10 min (``withinClusterQueue: LowerPriority``), or stay."""
    labelled = "metadata: {name: pi, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}"
    text = mpijob(replica(duration="1h", gpus=1), replica(2, duration="2m", gpus=8), POLICY)
    text = text.replace("metadata: {name: pi, namespace: ml}", labelled).replace("CLEAN", policy)
    pods, controller, _ = run(write(tmp_path, nodes(3), text, URGENT_JOB_AT_10M_IN_KUEUE), 4 * 3600)
    assert pods["pi-launcher-0"]["reason"] == "Suspended" and controller.finished_as == "Succeeded"
    workers = {pods[f"pi-worker-{i}"]["created_s"] for i in range(2)}
    assert workers == ({630.0} if made_again else {0.0})
    assert pods["pi-launcher-0-r1"]["phase"] == "Succeeded"


def test_workers_that_succeeded_before_the_suspension_count_toward_pods_ready_when_readmitted(
    tmp_path: Path,
) -> None:
    """Kueue's default installation waits 30 min for PodsReady (``waitForPodsReady`` on in its v1beta2
    Configuration); an MPIJob's ``PodsReady`` counts its replicas' Ready and Succeeded pods, so the workers
    that succeeded at 2 min and stay under ``cleanPodPolicy: Running`` count once the job is readmitted: its
    new launcher Ready makes it PodsReady, and it is never evicted for a timeout."""
    labelled = "metadata: {name: pi, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}"
    text = mpijob(replica(duration="1h", gpus=1), replica(2, duration="2m", gpus=8), POLICY)
    text = text.replace("metadata: {name: pi, namespace: ml}", labelled).replace("CLEAN", "Running")
    _, _, summary = run(write(tmp_path, nodes(3), text, URGENT_JOB_AT_10M_IN_KUEUE), 4 * 3600)
    (pi,) = [w for w in summary["kueue"]["workloads"] if w["name"] == "MPIJob/ml/pi"]
    assert [e["reason"] for e in pi["evictions"]] == ["InClusterQueue"] and pi["finished_s"] is not None


def test_a_suspended_job_creates_no_pods(tmp_path: Path) -> None:
    extra = "  runPolicy: {suspend: true}"
    pods, controller, _ = run(write(tmp_path, nodes(), mpijob(replica(), replica(), extra)), duration_s=600)
    assert pods == {} and controller.status == "Suspended"


def test_a_workload_of_several_pod_sets_that_kueue_holds_names_the_one_that_does_not_fit() -> None:
    """Kueue's ``kueue-integrations`` scenario: beside the other integrations' workloads, the MPIJob's
    3 cpu do not fit the 9-cpu quota. Its pod sets are assigned in order, each seeing what the earlier
    took (``flavorassigner.go``: ``assignFlavors``): the ``launcher``'s 1 cpu fits, the ``worker``s' 2 do
    not, and the ``QuotaReserved`` message names that pod set (``Assignment.Message``), not a Job's
    ``main``."""
    scenario = [
        UPSTREAM / p
        for p in (
            "_clusters/cpu-nodes.yaml",
            "_clusters/sim-1h.yaml",
            "kueue/getting-started/quick-start-setup.yaml",
            "kueue/jobs/sample-pytorchjob.yaml",
            "kueue/jobs/sample-jobset.yaml",
            "kueue/jobs/ray-job-sample.yaml",
            "kueue/jobs/sample-mpijob.yaml",
            "kueue/serving-workloads/sample-leaderworkerset.yaml",
        )
    ]
    summary = simulated(scenario)
    workloads = {w["name"]: w for w in summary["kueue"]["workloads"]}
    held = workloads["MPIJob/default/pi"]
    assert held["admissions"] == []
    assert held["message"] == (
        "couldn't assign flavors to pod set worker: "
        "insufficient unused quota for cpu in flavor default-flavor, 1500m more needed"
    )
    assert all(w["admissions"] == [0.0] for name, w in workloads.items() if name != "MPIJob/default/pi")


def test_launcher_restarts_past_the_backoff_limit_fail_the_launcher_job_and_the_mpijob(
    tmp_path: Path,
) -> None:
    """The launcher Job (``OnFailure``, ``runPolicy.backoffLimit: 1``) fails at its pod's first container
    restart, at 605 s (its 1 GB image pulled in 5 s, then 10 min computing; ``pastBackoffLimitOnFailure``: 1
    restart >= 1) and deletes the pod (gone after its 30 s grace period); the MPIJob fails with its launcher
    Job, and no launcher pod is created again."""
    launcher = replica(duration="10m", annotations=', gpufleet.io/exit-code: "2"')
    paths = write(tmp_path, nodes(), mpijob(launcher, replica(1), "  runPolicy: {backoffLimit: 1}"))
    pods, controller, _ = run(paths, 3600)
    pod = pods["pi-launcher-0"]
    assert (pod["restarts"], pod["reason"], pod["finished_s"]) == (1, "Deleted", 635.0)
    assert "pi-launcher-0-r1" not in pods
    assert controller.finished_as == "Failed"
