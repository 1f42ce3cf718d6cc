"""Kubeflow Training Operator v1's PyTorchJob (``gpufleet.workloads.pytorchjob``): its reader, the pods
and PodGroup the operator makes, and how the job ends (``pkg/controller.v1/common/pod.go``
``ReconcilePods``, ``pytorchjob_controller.go`` ``UpdateJobStatus``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conftest import (
    SIMULATION_10M,
    URGENT_JOB_AT_10M_IN_KUEUE,
    URGENT_POD,
    a10_nodes,
    coscheduling,
    pods_by_name,
    simulated,
    simulated_controller,
    write,
)
from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads import controller_for
from gpufleet.workloads.pytorchjob import PyTorchJobController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
TRAINING_OPERATOR = UPSTREAM / "kubeflow-trainer/training-operator-v1"
EXAMPLE = ROOT / "examples/training/pytorchjob-gang.yaml"


def nodes(count: int = 1) -> str:
    return a10_nodes(count)


def replica(
    replicas: int = 1,
    policy: str | None = None,
    duration: str = "1h",
    gpus: int = 1,
    annotations: str = "",
    container: str = "pytorch",
) -> str:
    restart = f"restartPolicy: {policy}" if policy else ""
    return f"""
      replicas: {replicas}
      {restart}
      template:
        metadata:
          annotations: {{gpufleet.io/duration: {duration}{annotations}}}
        spec:
          containers:
          - name: {container}
            image: trainer
            resources:
              limits: {{nvidia.com/gpu: {gpus}}}"""


def pytorchjob(master: str | None, worker: str | None, extra: str = "") -> str:
    specs = ""
    if master is not None:
        specs += f"\n    Master:{master}"
    if worker is not None:
        specs += f"\n    Worker:{worker}"
    return f"""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: mnist, namespace: ml}}
spec:
  pytorchReplicaSpecs:{specs}
{extra}
"""


def run(paths: list[Path], duration_s: float | None = None) -> tuple[dict[str, Any], PyTorchJobController]:
    """The scenario simulated; its pods by name and the PyTorchJob's controller as it ended."""
    pods, controller, _ = simulated_controller(paths, "PyTorchJob/ml/mnist", PyTorchJobController, duration_s)
    return pods, controller


# -- the reader ------------------------------------------------------------------------------


def test_pods_are_named_labelled_and_owned_as_the_operator_creates_them(tmp_path: Path) -> None:
    """``GenGeneralName``: ``<job>-<replica type, lowercase>-<index>``; labels ``training.kubeflow.org/*``."""
    scenario = load_scenario(write(tmp_path, nodes(), pytorchjob(replica(), replica(2))))
    (job,) = scenario.other_workloads
    pods = controller_for(job).wanted([])
    assert [p.name for p in pods] == ["mnist-master-0", "mnist-worker-0", "mnist-worker-1"]
    worker = pods[2]
    assert worker.namespace == "ml" and worker.owner is not None and worker.owner.kind == "PyTorchJob"
    assert worker.owner.name == "mnist"
    assert worker.labels["training.kubeflow.org/job-name"] == "mnist"
    assert worker.labels["training.kubeflow.org/replica-type"] == "worker"
    assert worker.labels["training.kubeflow.org/replica-index"] == "1"
    assert pods[0].labels["training.kubeflow.org/job-role"] == "master"
    assert all(p.pod_group is None for p in pods)  # no schedulingPolicy: no PodGroup
    assert all(p.restart_policy == "OnFailure" for p in pods)  # PytorchJobDefaultRestartPolicy


def test_replica_types_are_read_in_any_case_and_exit_code_pods_are_never_restarted_by_the_kubelet(
    tmp_path: Path,
) -> None:
    """``setTypeNameToCamelCase``; ``core.SetRestartPolicy``: ExitCode makes the pod ``Never``."""
    text = pytorchjob(None, replica(policy="ExitCode")).replace("Worker:", "worker:")
    (job,) = load_scenario(write(tmp_path, nodes(), text)).other_workloads
    (pod,) = controller_for(job).wanted([])
    assert pod.name == "mnist-worker-0" and pod.restart_policy == "Never"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            pytorchjob(replica(2), replica()),
            "spec.pytorchReplicaSpecs.Master.replicas: Invalid value: 2: there must be only 1 master replica",
        ),
        (
            pytorchjob(replica(), replica()).replace("Worker:", "Chief:"),
            'spec.pytorchReplicaSpecs.Chief: Unsupported value: "Chief"',
        ),
        (
            pytorchjob(replica(policy="Sometimes"), None),
            'spec.pytorchReplicaSpecs.Master.restartPolicy: Unsupported value: "Sometimes"',
        ),
        (
            pytorchjob(None, replica(container="train")),
            "spec.pytorchReplicaSpecs.Worker.template.spec.containers: Invalid value",
        ),
        (pytorchjob(None, None), "spec.pytorchReplicaSpecs: Required value"),
        (
            pytorchjob(None, replica(), "  runPolicy: {backoffLimit: -1}"),
            "spec.runPolicy.backoffLimit: Invalid value: -1",
        ),
        (
            pytorchjob(None, replica(), "  runPolicy: {cleanPodPolicy: Some}"),
            'spec.runPolicy.cleanPodPolicy: Unsupported value: "Some"',
        ),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """pytorch_validation.go ``validatePyTorchReplicaSpecs``, common_types.go's enums."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert "(PyTorchJob/ml/mnist): " + message in str(caught.value)


def test_gpufleet_validate_exits_2_on_a_bad_pytorchjob(tmp_path: Path) -> None:
    (path,) = write(tmp_path, pytorchjob(replica(3), replica()))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "there must be only 1 master replica" in result.output and "Traceback" not in result.output


def test_a_misspelt_kind_of_the_kubeflow_group_is_an_error(tmp_path: Path) -> None:
    """``kubeflow.org`` is a known group once PyTorchJob is registered: a typo is not silently ignored."""
    text = pytorchjob(None, replica()).replace("kind: PyTorchJob", "kind: PytorchJob")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert 'unknown kind "PytorchJob" in kubeflow.org/v1' in str(caught.value)


def test_what_is_not_modelled_is_a_warning(tmp_path: Path) -> None:
    extra = """  elasticPolicy:
    {minReplicas: 1, maxReplicas: 4, maxRestarts: 3, metrics: [{type: Resource}], rdzvBackend: c10d}
  nprocPerNode: "2"
  runPolicy:
    cleanPodPolicy: Running
    ttlSecondsAfterFinished: 60
    activeDeadlineSeconds: 3600
    schedulingPolicy: {minAvailable: 1, queue: research, priorityClass: high}"""
    scenario = load_scenario(write(tmp_path, nodes(), pytorchjob(None, replica(), extra)))
    warned = "\n".join(scenario.warnings)
    for field in (
        "elasticPolicy.maxRestarts",
        "elasticPolicy.metrics",
        "runPolicy.cleanPodPolicy",
        "runPolicy.ttlSecondsAfterFinished",
        "runPolicy.activeDeadlineSeconds",
        "runPolicy.schedulingPolicy.queue",
        "runPolicy.schedulingPolicy.priorityClass",
    ):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    assert "nprocPerNode" not in warned and "minAvailable" not in warned and "rdzv" not in warned


@pytest.mark.parametrize(
    ("policy", "replicas", "expected"),
    [
        ("{}", 3, (3, 3)),
        ("{maxReplicas: 4}", 2, (4, 4)),
        ("{minReplicas: 2}", 5, (2, 2)),
        ("{minReplicas: 1, maxReplicas: 4}", 2, (1, 4)),
    ],
)
def test_elastic_policy_bounds_default_as_the_operator_sets_them(
    tmp_path: Path, policy: str, replicas: int, expected: tuple[int, int]
) -> None:
    """``setElasticPolicy``: min and max default to each other, or both to the Workers' replicas."""
    text = pytorchjob(None, replica(replicas), f"  elasticPolicy: {policy}")
    (job,) = load_scenario(write(tmp_path, nodes(), text)).other_workloads
    assert job.elastic == expected


@pytest.mark.parametrize(
    ("master", "worker", "extra", "message"),
    [
        (
            replica(),
            None,
            "  elasticPolicy: {}",
            "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used",
        ),
        (
            None,
            replica(),
            '  nprocPerNode: "2"\n  elasticPolicy: {nProcPerNode: 2}',
            "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode",
        ),
        (None, replica(0), "", "spec.pytorchReplicaSpecs.Worker.replicas: Forbidden: must be at least 1"),
    ],
)
def test_the_webhook_rejects_an_elastic_job_without_workers_and_an_empty_worker_set(
    tmp_path: Path, master: str | None, worker: str | None, extra: str, message: str
) -> None:
    """``pytorchjob_webhook.go`` ``validateSpec`` and ``validatePyTorchReplicaSpecs``."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), pytorchjob(master, worker, extra.replace("\\n", "\n"))))
    assert message in str(caught.value)


def test_an_elastic_job_without_a_master_succeeds_when_any_worker_succeeds(tmp_path: Path) -> None:
    """``UpdateJobStatus``: with ``ElasticPolicy`` and no Master, one succeeded Worker completes the job
    (without it, every Worker must succeed). One 8-GPU node runs the two 8-GPU Workers one after the
    other; elastic with ``minReplicas: 1``, the first trains alone (without it, it waits for the second)."""
    extra = "  elasticPolicy: {minReplicas: 1, maxReplicas: 2}"
    text = pytorchjob(None, replica(2, duration="30m", gpus=8), extra)
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=2700)
    assert controller.finished_as == "Succeeded"
    assert [pods[f"mnist-worker-{i}"]["phase"] for i in (0, 1)] == ["Succeeded", "Running"]


def test_clean_pod_policy_none_is_the_default_and_no_warning(tmp_path: Path) -> None:
    extra = "  runPolicy: {cleanPodPolicy: None, backoffLimit: 3, suspend: false}"
    scenario = load_scenario(write(tmp_path, nodes(), pytorchjob(None, replica(), extra)))
    assert not [w for w in scenario.warnings if "PyTorchJob" in w]


# -- the gang --------------------------------------------------------------------------------


def test_a_scheduling_policy_makes_a_pod_group_of_min_available(tmp_path: Path) -> None:
    """SchedulerPluginsControl: a PodGroup named after the job, minMember = minAvailable."""
    extra = "  runPolicy:\n    schedulingPolicy: {minAvailable: 2, scheduleTimeoutSeconds: 120}"
    (job,) = load_scenario(write(tmp_path, nodes(), pytorchjob(replica(), replica(2), extra))).other_workloads
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert (group.name, group.namespace, group.min_member, group.schedule_timeout_s) == (
        "mnist",
        "ml",
        2,
        120.0,
    )
    assert {p.pod_group for p in controller.wanted([])} == {"mnist"}


def test_a_scheduling_policy_without_min_available_gangs_every_replica(tmp_path: Path) -> None:
    extra = "  runPolicy:\n    schedulingPolicy: {}"
    (job,) = load_scenario(write(tmp_path, nodes(), pytorchjob(replica(), replica(3), extra))).other_workloads
    (group,) = controller_for(job).pod_groups()
    assert group.min_member == 4


# -- how it ends -----------------------------------------------------------------------------


def test_the_job_succeeds_when_its_master_succeeds_and_its_workers_run_on(tmp_path: Path) -> None:
    """``UpdateJobStatus``: the Master's ``expected == 0`` ends the job; cleanPodPolicy None (the
    PyTorchJob default) leaves the workers running."""
    text = pytorchjob(replica(duration="10m"), replica(2, duration="2h"))
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert controller.finished_as == "Succeeded"
    assert pods["mnist-master-0"]["phase"] == "Succeeded"
    assert {pods[f"mnist-worker-{i}"]["phase"] for i in range(2)} == {"Running"}


def test_without_a_master_the_job_succeeds_when_all_workers_succeed(tmp_path: Path) -> None:
    pods, controller = run(write(tmp_path, nodes(), pytorchjob(None, replica(2, duration="10m"))))
    assert controller.finished_as == "Succeeded"
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}


OOM = ", gpufleet.io/gpu-memory: 40GB"  # more than the A10's 24 GiB: CUDA out of memory as it starts


def test_a_failed_pod_under_never_fails_the_job_and_is_not_created_again(tmp_path: Path) -> None:
    text = pytorchjob(replica(duration="2h"), replica(policy="Never", annotations=OOM))
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert controller.finished_as == "Failed" and controller.restarts == 0
    assert pods["mnist-worker-0"]["phase"] == "Failed" and pods["mnist-worker-0"]["reason"] == "OOMKilled"
    assert pods["mnist-master-0"]["phase"] == "Running"  # cleanPodPolicy None


def test_a_failed_pod_under_exit_code_is_created_again_until_the_backoff_limit(tmp_path: Path) -> None:
    """``ReconcilePods``: a failed ExitCode pod (137, OOMKilled, is retryable) is deleted and created
    again under its name; each time counts toward ``backoffLimit``, past which the job fails."""
    extra = "  runPolicy: {backoffLimit: 2}"
    text = pytorchjob(replica(duration="2h"), replica(policy="ExitCode", annotations=OOM), extra)
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert controller.finished_as == "Failed" and controller.restarts == 3
    assert pods["mnist-worker-0"]["phase"] == "Failed"


def test_without_a_backoff_limit_a_pod_that_fails_at_once_is_retried_ever_more_slowly(tmp_path: Path) -> None:
    """No ``backoffLimit``: restarts are unlimited. Each re-creation waits as a work-queue retry
    (client-go's ``ItemExponentialFailureRateLimiter``, 5 ms doubling to 1000 s), so the simulation ends
    with a count of restarts, not a loop at one instant."""
    text = pytorchjob(None, replica(policy="ExitCode", annotations=OOM))
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert controller.finished_as is None and controller.status == "Restarting"
    # 5 ms * (2^n - 1) <= 3600 s: 19 re-creations within the hour (each fails as it starts)
    assert 15 <= controller.restarts <= 25
    assert pods["mnist-worker-0"]["phase"] in ("Pending", "Running", "Failed")


def exits(code: int) -> str:
    """The annotation of a container that exits with ``code`` once its work is done."""
    return f', gpufleet.io/exit-code: "{code}"'


def test_under_exit_code_a_permanent_exit_code_fails_the_job_at_once(tmp_path: Path) -> None:
    """``ReconcilePods``: under ``ExitCode`` a Worker whose container ``pytorch`` exited 1 (1-127: a
    permanent error, ``IsRetryableExitCode``) fails the job; it is not created again, and the Master runs
    on (``cleanPodPolicy`` None)."""
    worker = replica(policy="ExitCode", duration="10m", annotations=exits(1))
    pods, controller = run(write(tmp_path, nodes(), pytorchjob(replica(duration="2h"), worker)), 3600)
    assert controller.finished_as == "Failed" and controller.restarts == 0
    assert pods["mnist-worker-0"]["phase"] == "Failed" and pods["mnist-worker-0"]["reason"] == "Error"
    assert pods["mnist-master-0"]["phase"] == "Running"


def test_under_exit_code_a_retryable_exit_code_creates_the_pod_again(tmp_path: Path) -> None:
    """Exit code 130 (128 + SIGINT) is retryable: the Worker is created again under its name, each time
    toward ``backoffLimit`` (1), past which the job fails."""
    worker = replica(policy="ExitCode", duration="10m", annotations=exits(130))
    extra = "  runPolicy: {backoffLimit: 1}"
    pods, controller = run(write(tmp_path, nodes(), pytorchjob(replica(duration="2h"), worker, extra)), 3600)
    assert controller.finished_as == "Failed" and controller.restarts == 2
    assert pods["mnist-worker-0"]["phase"] == "Failed"


def test_under_never_and_on_failure_the_exit_code_is_not_read(tmp_path: Path) -> None:
    """``Never``: any failure fails the job; ``OnFailure`` (pod ``OnFailure``): the kubelet restarts the
    container in place (``ShouldContainerBeRestarted``, no warning), 5 times within the hour, and the pod
    runs on (no ``runPolicy.backoffLimit``: no limit); the operator creates no pod again."""
    worker = replica(policy="Never", duration="10m", annotations=exits(130))
    _, controller = run(write(tmp_path, nodes(), pytorchjob(None, worker)), 3600)
    assert controller.finished_as == "Failed" and controller.restarts == 0

    paths = write(tmp_path, nodes(), pytorchjob(None, replica(duration="10m", annotations=exits(1))))
    assert not [w for w in load_scenario(paths).warnings if "exit-code" in w]
    pods, controller = run(paths, 3600)
    assert (pods["mnist-worker-0"]["phase"], pods["mnist-worker-0"]["restarts"]) == ("Running", 5)
    assert (controller.finished_as, controller.restarts) == (None, 0)


def test_an_exit_code_under_exit_code_is_no_warning(tmp_path: Path) -> None:
    """``core.SetRestartPolicy`` makes an ``ExitCode`` replica's pods ``Never``, whatever its template says:
    a non-zero exit code fails the pod, which the operator reads; nothing to warn of."""
    text = pytorchjob(None, replica(policy="ExitCode", annotations=exits(1)))
    assert not [w for w in load_scenario(write(tmp_path, nodes(), text)).warnings if "exit-code" in w]


def test_only_the_pytorch_containers_exit_code_is_read(tmp_path: Path) -> None:
    """``ReconcilePods`` reads the container named ``pytorch`` (``GetDefaultContainerName``); gpufleet's
    exit code is the first container's (``sidecar`` here): the pod reads as having none (``0xbeef``),
    retryable, and a warning says so."""
    worker = replica(policy="ExitCode", duration="10m", annotations=exits(1), container="sidecar")
    worker += "\n          - {name: pytorch, image: trainer}"
    text = pytorchjob(None, worker, "  runPolicy: {backoffLimit: 1}")
    warned = "\n".join(load_scenario(write(tmp_path, nodes(), text)).warnings)
    assert (
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]: restartPolicy ExitCode reads the exit "
        "code of container pytorch; gpufleet's exit codes (gpufleet.io/exit-code, an OOM kill) are the first "
        "container's, sidecar: every failure of this replica reads as retryable"
    ) in warned
    _, controller = run(write(tmp_path, nodes(), text), 3600)
    assert controller.restarts == 2 and controller.finished_as == "Failed"  # retried: backoffLimit


def test_a_preempted_pod_under_exit_code_is_killed_with_137_and_created_again(tmp_path: Path) -> None:
    """A preemption victim's container is killed after its grace period: exit code 137, retryable."""
    worker = replica(duration="30m", gpus=4, policy="ExitCode")
    pods, controller = run(
        write(tmp_path, nodes(), pytorchjob(replica(duration="1h", gpus=4), worker), URGENT_POD)
    )
    assert pods["urgent"]["phase"] == "Succeeded"
    assert controller.restarts >= 1 and controller.finished_as == "Succeeded"


def test_a_preempted_pod_under_on_failure_is_created_again_and_the_job_succeeds(tmp_path: Path) -> None:
    """A worker preempted by a higher-priority pod is created again (OnFailure) and runs once the
    GPUs are free; the job then succeeds with its Master."""
    text = pytorchjob(replica(duration="1h", gpus=4), replica(duration="30m", gpus=4))
    pods, controller = run(write(tmp_path, nodes(), text, URGENT_POD))
    assert pods["urgent"]["phase"] == "Succeeded"
    assert controller.restarts >= 1 and controller.finished_as == "Succeeded"
    assert pods["mnist-master-0"]["phase"] == "Succeeded"


def test_a_suspended_job_creates_no_pods(tmp_path: Path) -> None:
    extra = "  runPolicy: {suspend: true}"
    pods, controller = run(write(tmp_path, nodes(), pytorchjob(replica(), replica(), extra)), duration_s=600)
    assert pods == {} and controller.status == "Suspended"


# -- the published example and the gang example ------------------------------------------------


def test_the_published_mnist_nccl_example_runs_its_two_pods_on_gpus(tmp_path: Path) -> None:
    """training-operator's ``examples/pytorch/mnist/v1/pytorch_job_mnist_nccl.yaml``, as published,
    with a GPU node and a Simulation beside it; then with durations set on its templates it ends."""
    published = TRAINING_OPERATOR / "pytorch_job_mnist_nccl.yaml"
    overlay = nodes() + "---\n" + SIMULATION_10M
    (extra,) = write(tmp_path, overlay)
    summary = simulated([published, extra])
    pods = pods_by_name(summary)
    assert sorted(pods) == ["pytorch-dist-mnist-nccl-master-0", "pytorch-dist-mnist-nccl-worker-0"]
    assert all(p["phase"] == "Running" and p["node"] == "gpu-0" and p["gpus"] == 1 for p in pods.values())

    document = yaml.safe_load(published.read_text())
    for spec in document["spec"]["pytorchReplicaSpecs"].values():
        spec["template"].setdefault("metadata", {})["annotations"] = {"gpufleet.io/duration": "5m"}
    timed = tmp_path / "timed.yaml"
    timed.write_text(yaml.safe_dump(document))
    summary = simulated([timed, extra])
    assert {p["phase"] for p in summary["pods"]} == {"Succeeded"}


def test_the_gang_example_holds_nothing_when_the_gang_cannot_fit_whole() -> None:
    """examples/training/pytorchjob-gang.yaml: 4 pods of 8 GPUs, minAvailable 4, on 3 nodes:
    Coscheduling places none, so the 3 nodes' 24 GPUs stay free."""
    summary = simulated([EXAMPLE])
    pods = pods_by_name(summary, namespaced=True)
    assert len(pods) == 4
    assert all(p["phase"] == "Pending" and p["node"] is None for p in pods.values())
    assert {p["pod_group"] for p in pods.values()} == {"research/llama-pretrain"}
    assert summary["totals"]["gpus_allocated"] == 0


def test_explain_judges_the_example_gang_together() -> None:
    explained = explain_scenario(load_scenario([EXAMPLE]))
    assert len(explained) == 4
    """Coscheduling's gang is all or nothing: 3 of the 4 members fit one after another (one per
    node), the gang does not reach minMember 4, so explain places none of them."""
    together = [e["together"] for e in explained]
    assert {t["by"] for t in together} == {"PodGroup research/llama-pretrain"}
    assert {t["gang"]["min_member"] for t in together} == {4}
    assert not any(t["gang_placed"] for t in together) and {t["placed"] for t in together} == {3}
    assert all(e["schedulable_now"] is None for e in explained)


# -- Kueue's kubeflow integration ----------------------------------------------------------------

KUEUE_EXAMPLE = ROOT / "examples/training/pytorchjob-kueue.yaml"


def test_kueue_admits_a_pytorchjob_whole_and_holds_the_second_until_quota_is_released() -> None:
    """Kueue's kubeflow integration (``pkg/controller/jobs/kubeflow``): a PyTorchJob is one Workload
    whose pod sets are its replica types; the second job waits for quota as a whole although the
    nodes have room for one of its ranks."""
    summary = simulated([KUEUE_EXAMPLE])
    pods = pods_by_name(summary)
    for name in ("finetune-a-master-0", "finetune-a-worker-0"):
        assert (pods[name]["bound_s"], pods[name]["finished_s"]) == (0.0, 7200.0)
    for name in ("finetune-b-master-0", "finetune-b-worker-0"):
        assert pods[name]["created_s"] == 600.0 and pods[name]["bound_s"] == 7200.0
        assert pods[name]["stages"] == {"queueing": 6600.0} and pods[name]["phase"] == "Succeeded"
    workloads = {w["name"]: w for w in summary["kueue"]["workloads"]}
    assert workloads["PyTorchJob/research/finetune-a"]["finished_s"] == 7200.0
    assert workloads["PyTorchJob/research/finetune-b"]["admissions"] == [7200.0]


def test_a_pytorchjob_evicted_by_kueue_is_suspended_not_restarted(tmp_path: Path) -> None:
    """Kueue preempts the lower-priority PyTorchJob (``withinClusterQueue: LowerPriority``): the
    operator deletes its pods as for ``runPolicy.suspend`` and creates them again when the job is
    admitted again; that is no restart toward ``backoffLimit``."""
    documents = list(yaml.safe_load_all(KUEUE_EXAMPLE.read_text()))
    for document in documents:
        if document["kind"] == "ClusterQueue":
            document["spec"]["preemption"] = {"withinClusterQueue": "LowerPriority"}
        if document["kind"] == "PyTorchJob" and document["metadata"]["name"] == "finetune-b":
            for spec in document["spec"]["pytorchReplicaSpecs"].values():
                spec["template"]["spec"]["priorityClassName"] = "urgent"
    urgent = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}}
    paths = write(tmp_path, yaml.safe_dump_all([*documents, {**urgent, "value": 1000}]))
    sim = Simulation(load_scenario(paths))
    sim.run()
    summary = build_summary(sim)
    controller = sim.controllers["PyTorchJob/research/finetune-a"]
    assert isinstance(controller, PyTorchJobController)
    assert controller.restarts == 0 and controller.finished_as == "Succeeded"
    # both pods of each name are in the summary: the evicted one, and the one created again later
    masters = [p for p in summary["pods"] if p["name"] == "research/finetune-a-master-0"]
    assert [(p["reason"], p["created_s"], p["finished_s"]) for p in masters] == [
        ("Suspended", 0.0, 630.0),  # evicted at 600 s, 30 s grace
        ("Completed", 630.0, 15030.0),  # gated until finetune-b ends at 7830 s
    ]
    b = pods_by_name(summary)["finetune-b-master-0"]
    assert (b["bound_s"], b["finished_s"]) == (630.0, 7830.0)


def test_kueue_suspending_the_job_deletes_its_succeeded_replicas_too(tmp_path: Path) -> None:
    """``ReconcileJobs`` on a suspended job that has not finished: ``CleanUpResources`` deletes every
    pod, a Succeeded one too, and ``ReconcilePods`` creates each replica again on resumption. The Worker
    that succeeded at 2 min is made again when Kueue admits the job back after the urgent Job."""
    labelled = "metadata: {name: mnist, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}"
    text = pytorchjob(replica(duration="1h", gpus=8), replica(duration="2m", gpus=8))
    text = text.replace("metadata: {name: mnist, namespace: ml}", labelled)
    pods, controller = run(write(tmp_path, nodes(3), text, URGENT_JOB_AT_10M_IN_KUEUE), duration_s=4 * 3600)
    assert controller.restarts == 0 and controller.finished_as == "Succeeded"
    worker = pods["mnist-worker-0"]
    assert (worker["created_s"], worker["phase"]) == (630.0, "Succeeded")


def test_a_gang_smaller_than_the_world_places_ranks_that_wait_for_the_rest_of_it(tmp_path: Path) -> None:
    """``schedulingPolicy.minAvailable: 1`` lets Coscheduling place the ranks one at a time, but torchrun's
    rendezvous still waits for the whole world (the Master and 2 Workers): the two placed ranks hold 16
    GPUs and neither computes, as without a gang. With ``minAvailable`` 3 none is placed."""
    for min_available, placed_ranks in ((1, 2), (3, 0)):
        gang = f"  runPolicy: {{schedulingPolicy: {{minAvailable: {min_available}}}}}"
        text = pytorchjob(replica(gpus=8, duration="5m"), replica(2, gpus=8, duration="5m"), gang)
        scheduler = "\n---\n" + coscheduling("default-scheduler")
        summary = simulated(write(tmp_path, nodes(2), text + scheduler), duration_s=600)
        pods = pods_by_name(summary)
        assert sum(1 for p in pods.values() if p["node"] is not None) == placed_ranks
        assert {p["phase"] for p in pods.values()} == (
            {"Running", "Pending"} if placed_ranks else {"Pending"}
        )
        totals = summary["totals"]
        assert (totals["gpus_allocated"], totals["gpus_working"]) == (8.0 * placed_ranks, 0.0)


def test_without_a_gang_placed_ranks_wait_for_the_rest_of_the_world_and_do_not_compute(
    tmp_path: Path,
) -> None:
    """No ``schedulingPolicy``: kube-scheduler places the ranks one by one; torchrun's rendezvous holds
    the placed ones until all have joined, so 16 GPUs are allocated and none computes (seed 004's
    partial gang). With ``elasticPolicy`` ``minReplicas: 1`` the two placed ranks already train."""
    for extra, working in (("", 0.0), ("  elasticPolicy: {minReplicas: 1, maxReplicas: 2}", 16.0)):
        text = pytorchjob(replica(gpus=8), replica(2, gpus=8), extra)
        paths = write(tmp_path, nodes(2), text)
        summary = simulated(paths, duration_s=600)
        pods = pods_by_name(summary)
        placed = [p for p in pods.values() if p["node"] is not None]
        assert len(placed) == 2 and sum(1 for p in pods.values() if p["phase"] == "Pending") == 1
        totals = summary["totals"]
        assert totals["gpus_allocated"] == 16.0 and totals["gpus_working"] == working


def test_container_restarts_past_the_run_policys_backoff_limit_fail_the_job(tmp_path: Path) -> None:
    """``PastBackoffLimit``: under ``OnFailure`` the kubelet restarts the Worker's container in place, each
    time it exits (600 s, at once; 1200 s, after its 10 s back-off); the restarts of the running pods, summed,
    reach ``runPolicy.backoffLimit`` (2) as the second restart starts, at 1210 s (``restartCount`` is raised
    as the new container starts): the job fails; its pod is kept (``cleanPodPolicy`` as ``None``), not
    created again."""
    text = pytorchjob(None, replica(duration="10m", annotations=exits(1)), "  runPolicy: {backoffLimit: 2}")
    pods, controller = run(write(tmp_path, nodes(), text), 1209)
    assert (pods["mnist-worker-0"]["restarts"], controller.finished_as) == (1, None)
    pods, controller = run(write(tmp_path, nodes(), text), 1211)
    assert (pods["mnist-worker-0"]["restarts"], controller.finished_as, controller.restarts) == (
        2,
        "Failed",
        0,
    )
