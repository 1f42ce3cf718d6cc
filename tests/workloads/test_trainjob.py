"""Kubeflow Trainer v2's TrainJob and its runtimes (``gpufleet.workloads.trainjob``,
``gpufleet.kube.training_runtimes``): the JobSet the trainer builds from the runtime
(``pkg/runtime/core/trainingruntime.go`` ``newRuntimeInfo``, ``plugins/jobset/builder.go``,
``plugins/torch``, ``plugins/mpi``, ``plugins/coscheduling``), its pods as the JobSet and Job
controllers name and label them (``jobset_controller.go`` ``constructJob``,
``labelAndAnnotateObject``), ``dependsOn``, the success policy, and the published examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import local_queue, pods_by_name, resource_flavor, simulated, simulated_controller
from conftest import write as write_files
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads import controller_for
from gpufleet.workloads.trainjob import TrainJob, TrainJobController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
TRAINER = UPSTREAM / "kubeflow-trainer/v2"
H100 = UPSTREAM / "_clusters/h100-nodes.yaml"
HOUR = UPSTREAM / "_clusters/sim-1h.yaml"


def trainjob(trainer: str = "numNodes: 2", ref: str = "name: torch", extra: str = "") -> str:
    return f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: llm, namespace: ml}}
spec:
  runtimeRef: {{{ref}}}
  trainer: {{{trainer}}}
{extra}
"""


def runtime(
    jobs: str,
    policy: str = "mlPolicy: {numNodes: 1, torch: {}}",
    kind: str = "ClusterTrainingRuntime",
    extra: str = "",
) -> str:
    namespace = "\n  namespace: ml" if kind == "TrainingRuntime" else ""
    return f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: {kind}
metadata:
  name: torch{namespace}
spec:
  {policy}
  template:
    spec:
{extra}
      replicatedJobs:{jobs}
"""


def rjob(
    name: str = "node",
    ancestor: str | None = "trainer",
    duration: str | None = None,
    depends: str = "",
    gpus: int = 0,
    job_spec: str = "",
    pod_spec: str = "",
) -> str:
    labels = (
        f"\n            metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: {ancestor}}}}}"
    )
    annotations = f"\n                metadata: {{annotations: {{gpufleet.io/duration: {duration}}}}}"
    return f"""
        - name: {name}{depends}
          template:{labels if ancestor else ""}
            spec:{job_spec}
              template:{annotations if duration else ""}
                spec:{pod_spec}
                  containers:
                  - name: {"node" if ancestor == "trainer" else name}
                    image: trainer:1
                    resources:
                      limits: {{cpu: 1, nvidia.com/gpu: {gpus}}}"""


def write(tmp_path: Path, *texts: str) -> list[Path]:
    return [H100, *write_files(tmp_path, *texts)]


def run(paths: list[Path], duration_s: float = 3600) -> tuple[dict[str, Any], TrainJobController]:
    """The scenario simulated: its pods by name and the TrainJob's controller as it ended."""
    pods, controller, _ = simulated_controller(paths, "TrainJob/ml/llm", TrainJobController, duration_s)
    return pods, controller


def train_job(paths: list[Path]) -> TrainJob:
    (job,) = load_scenario(paths).other_workloads
    assert isinstance(job, TrainJob)
    return job


# -- the JobSet the trainer builds ---------------------------------------------------------------


def test_pods_are_named_and_labelled_as_the_jobset_and_job_controllers_make_them(tmp_path: Path) -> None:
    """``placement.GenJobName``: Job ``<trainjob>-<replicatedJob>-<jobIndex>``; an Indexed Job's pod is
    ``<job>-<completion index>``; ``labelAndAnnotateObject`` labels; the trainer's Job has
    ``parallelism`` = ``completions`` = ``trainer.numNodes`` (``syncParallelCount``)."""
    job = train_job(write(tmp_path, runtime(rjob()), trainjob("numNodes: 3")))
    pods = controller_for(job).wanted([])
    assert [p.name for p in pods] == ["llm-node-0-0", "llm-node-0-1", "llm-node-0-2"]
    pod = pods[1]
    assert pod.namespace == "ml" and pod.owner is not None
    assert (pod.owner.kind, pod.owner.name) == ("Job", "llm-node-0")
    labels = pod.labels
    assert labels["jobset.sigs.k8s.io/jobset-name"] == "llm"
    assert labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node"
    assert labels["jobset.sigs.k8s.io/job-index"] == "0"
    assert labels["jobset.sigs.k8s.io/job-global-index"] == "0"
    assert labels["jobset.sigs.k8s.io/replicatedjob-replicas"] == "1"
    assert labels["batch.kubernetes.io/job-name"] == "llm-node-0"
    assert labels["batch.kubernetes.io/job-completion-index"] == "1"
    # sha1("ml/llm-node-0")
    assert labels["jobset.sigs.k8s.io/job-key"] == "81852d6192ad36c64e35d31cef1f34d07ad4a3b0"
    assert pod.restart_policy == "OnFailure"  # the JobSet webhook's default
    assert pod.pod_group is None


def test_the_trainer_image_and_resources_per_node_override_the_node_container(tmp_path: Path) -> None:
    """``Builder.Trainer`` sets the image of the container named ``node``; ``resourcesPerNode`` is merged
    into its resources (``MergeResourceRequirements``): 8 GPUs a pod, one pod per H100 node."""
    text = trainjob("numNodes: 2, image: 'trainer:2', resourcesPerNode: {limits: {nvidia.com/gpu: 8}}")
    job = train_job(write(tmp_path, runtime(rjob(gpus=1)), text))
    (node,) = job.jobs
    assert (node.count, node.template.gpus, node.template.requests["cpu"]) == (2, 8, 1000)
    assert node.template.behavior.image == "trainer:2"
    pods, controller = run(write(tmp_path, runtime(rjob(gpus=1)), text), 600)
    assert {pods[f"llm-node-0-{i}"]["node"] for i in range(2)} == {"h100-0", "h100-1"}
    assert controller.status == "Running"


def test_the_torch_nodes_compute_only_once_all_of_them_have_gathered(tmp_path: Path) -> None:
    """torchrun's rendezvous waits for ``PET_NNODES`` nodes (``plugins/torch``): three nodes of 8 GPUs
    on two H100 nodes, two run and hold their GPUs idle, the third stays Pending; none computes."""
    text = trainjob("numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}")
    pods, controller = run(write(tmp_path, runtime(rjob(duration="10m")), text), 600)
    assert sorted(p["phase"] for p in pods.values()) == ["Pending", "Running", "Running"]
    assert not any(p["working"] for p in pods.values())
    assert controller.status == "Running"


def test_without_num_nodes_the_runtime_ml_policy_gives_the_count(tmp_path: Path) -> None:
    """``newRuntimeInfo``: the trainer's pod set counts ``mlPolicy.numNodes``; another replicated job
    counts its ``parallelism``, and keeps its ``replicas``."""
    other = rjob("sidecar", ancestor=None, job_spec="\n              parallelism: 2").replace(
        "        - name: sidecar", "        - name: sidecar\n          replicas: 2", 1
    )
    jobs = rjob() + other
    job = train_job(write(tmp_path, runtime(jobs, "mlPolicy: {numNodes: 4, torch: {}}"), trainjob("")))
    assert [(r.name, r.replicas, r.count) for r in job.jobs] == [("node", 1, 4), ("sidecar", 2, 2)]
    names = [p.name for p in controller_for(job).wanted([])]
    assert names[4:] == ["llm-sidecar-0-0", "llm-sidecar-0-1", "llm-sidecar-1-0", "llm-sidecar-1-1"]


def test_a_namespaced_training_runtime_is_found_in_the_trainjob_namespace(tmp_path: Path) -> None:
    text = trainjob(ref="name: torch, kind: TrainingRuntime")
    job = train_job(write(tmp_path, runtime(rjob(), kind="TrainingRuntime"), text))
    assert [r.count for r in job.jobs] == [2]


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (
            [trainjob()],
            '(TrainJob/ml/llm): spec.runtimeRef.name: Invalid value: "torch": no ClusterTrainingRuntime of '
            "that name in the scenario",
        ),
        (
            [runtime(rjob()), trainjob(ref="name: torch, kind: TrainingRuntime")],
            'spec.runtimeRef.name: Invalid value: "torch": no TrainingRuntime of that name in namespace ml',
        ),
        (
            [runtime(rjob()), trainjob(ref="name: torch, kind: Runtime")],
            'spec.runtimeRef.kind: Unsupported value: "Runtime"',
        ),
        ([runtime(rjob()), trainjob("numProcPerNode: 0")], "spec.trainer.numProcPerNode: Invalid value: 0"),
        ([runtime(rjob()), trainjob("numNodes: -1")], "spec.trainer.numNodes: Invalid value: -1"),
        (
            [runtime(rjob()), trainjob("resourcesPerNode: {limits: {cpu: lots}}")],
            "spec.trainer.resourcesPerNode.limits.cpu",
        ),
        (
            [runtime(" []"), trainjob()],
            "(ClusterTrainingRuntime/torch): spec.template.spec.replicatedJobs: Required value",
        ),
        (
            [runtime(rjob(depends="\n          dependsOn: [{name: init, status: Complete}]")), trainjob()],
            'spec.template.spec.replicatedJobs[0].dependsOn[0].name: Invalid value: "init"',
        ),
        (
            [runtime(rjob(), extra="      successPolicy: {operator: Most}"), trainjob()],
            'spec.template.spec.successPolicy.operator: Unsupported value: "Most"',
        ),
        (
            [runtime(rjob()), trainjob(extra="  activeDeadlineSeconds: 0")],
            "(TrainJob/ml/llm): spec.activeDeadlineSeconds: Invalid value: 0: should be greater than or "
            "equal to 1",
        ),
        (
            [runtime(rjob(), extra="      failurePolicy: {rules: [{action: RestartJob}]}"), trainjob()],
            "(ClusterTrainingRuntime/torch): spec.template.spec.failurePolicy.rules[0].action: Invalid "
            'value: "RestartJob": RestartJob is not allowed when the RestartJob feature gate is disabled',
        ),
        (
            [runtime(rjob(job_spec="\n              maxFailedIndexes: 1")), trainjob()],
            "(ClusterTrainingRuntime/torch): spec.template.spec.replicatedJobs[0].template.spec."
            "backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        ),
        (
            [runtime(rjob(pod_spec="\n                  restartPolicy: Always")), trainjob()],
            "spec.template.spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: "
            'Unsupported value: "Always"',
        ),
    ],
)
def test_a_bad_trainjob_or_runtime_is_an_error_at_its_field(
    tmp_path: Path, texts: list[str], message: str
) -> None:
    """The trainer's webhook refuses a TrainJob whose runtime is missing (``ValidateObjects``); the CRDs'
    bounds and enums; the JobSet's own validation (dependsOn names an earlier replicated job; a Job's
    pods restart OnFailure or Never)."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, *texts))
    assert message in str(caught.value)


def test_a_misspelt_kind_of_the_trainer_group_is_an_error(tmp_path: Path) -> None:
    text = trainjob().replace("kind: TrainJob", "kind: TrainingJob")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, runtime(rjob()), text))
    assert 'unknown kind "TrainingJob" in trainer.kubeflow.org/v1alpha1' in str(caught.value)


def test_what_is_not_modelled_is_a_warning(tmp_path: Path) -> None:
    extra = """  activeDeadlineSeconds: 600
  runtimePatches: [{manager: me}]
  initializer: {model: {storageUri: "hf://org/model"}}"""
    text = runtime(
        rjob(),
        "mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}\n"
        "  podGroupPolicy: {volcano: {networkTopology: {mode: hard}}}",
        extra="      failurePolicy: {maxRestarts: 3}\n      network: {publishNotReadyAddresses: true}",
    )
    scenario = load_scenario(write(tmp_path, text, trainjob(extra=extra)))
    warned = "\n".join(scenario.warnings)
    for field in ("spec.runtimePatches", "spec.podGroupPolicy.volcano"):
        assert f"{field} is not modelled; ignored" in warned, field
    assert "initializer" not in warned and "network" not in warned and "numProcPerNode" not in warned
    assert "activeDeadlineSeconds" not in warned and "failurePolicy" not in warned  # both modelled


# -- the gang and Kueue --------------------------------------------------------------------------


def test_coscheduling_makes_a_pod_group_of_every_pod_set(tmp_path: Path) -> None:
    """``plugins/coscheduling``: a PodGroup named after the TrainJob, minMember = the sum of the pod
    sets' counts, scheduleTimeoutSeconds defaulting to 60; every pod is labelled with it."""
    init = rjob("model-initializer", ancestor="model-initializer")
    policy = "mlPolicy: {numNodes: 1, torch: {}}\n  podGroupPolicy: {coscheduling: {}}"
    job = train_job(write(tmp_path, runtime(init + rjob(), policy), trainjob("numNodes: 3")))
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert (group.name, group.namespace, group.min_member, group.schedule_timeout_s) == ("llm", "ml", 4, 60.0)
    assert {p.pod_group for p in controller.wanted([])} == {"llm"}
    assert [(s.name, s.count) for s in controller.pod_sets()] == [("model-initializer", 1), ("node", 3)]


# -- dependsOn, success and failure -------------------------------------------------------------


def test_the_trainer_waits_for_the_initializer_to_complete(tmp_path: Path) -> None:
    """``dependencyReachedStatus``: a replicated job that dependsOn another's ``Complete`` is created
    once all that one's Jobs succeeded; the JobSet completes when every Job did (successPolicy All)."""
    init = rjob("model-initializer", ancestor="model-initializer", duration="5m")
    node = rjob(
        duration="10m", depends="\n          dependsOn: [{name: model-initializer, status: Complete}]"
    )
    pods, controller = run(write(tmp_path, runtime(init + node), trainjob()))
    initializer = pods["llm-model-initializer-0-0"]
    assert initializer["phase"] == "Succeeded"
    assert {pods[f"llm-node-0-{i}"]["created_s"] for i in range(2)} == {initializer["finished_s"]}
    assert controller.finished_as == "Complete"
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}


MPI = """mlPolicy:
    numNodes: 1
    mpi: {numProcPerNode: 1, runLauncherAsNode: true}"""


def test_an_mpi_runtime_starts_its_launcher_once_the_nodes_are_ready_and_ends_with_it(tmp_path: Path) -> None:
    """The trainer's ``deepspeed-distributed`` shape: ``node`` (sshd, never ends) and a ``launcher``
    that dependsOn ``node`` Ready; with ``runLauncherAsNode`` the node Job has numNodes - 1 pods
    (``plugins/mpi``). successPolicy All of ``launcher``: the launcher's success completes the JobSet,
    which deletes the node Job still active (``deleteJobs``)."""
    node = rjob(ancestor=None).replace(
        "                spec:",
        "                metadata: {annotations: {gpufleet.io/warmup: 1m}}\n                spec:",
        1,
    )
    launcher = rjob(
        "launcher", duration="10m", depends="\n          dependsOn: [{name: node, status: Ready}]"
    )
    success = "      successPolicy: {operator: All, targetReplicatedJobs: [launcher]}"
    pods, controller = run(
        write(tmp_path, runtime(node + launcher, MPI, extra=success), trainjob("numNodes: 3"))
    )
    assert sorted(pods) == ["llm-launcher-0-0", "llm-node-0-0", "llm-node-0-1"]
    ready = max(pods[f"llm-node-0-{i}"]["working_s"] for i in range(2))
    assert ready >= 60.0 and pods["llm-launcher-0-0"]["created_s"] == ready
    assert controller.finished_as == "Complete"
    finished = pods["llm-launcher-0-0"]["finished_s"]
    assert {(pods[f"llm-node-0-{i}"]["reason"], pods[f"llm-node-0-{i}"]["deleted_s"]) for i in range(2)} == {
        ("Deleted", finished + 30.0)  # SIGTERM and the grace period
    }


OOM = "\n                metadata: {annotations: {gpufleet.io/gpu-memory: 100GB}}"


def test_a_failed_job_fails_the_trainjob_and_its_other_jobs_are_deleted(tmp_path: Path) -> None:
    """No failurePolicy (maxRestarts 0): a Job past its ``backoffLimit`` fails the JobSet, whose
    active Jobs are deleted; the TrainJob is Failed."""
    crash = rjob(
        "crash",
        ancestor=None,
        gpus=1,
        job_spec="\n              backoffLimit: 1",
        pod_spec="\n                  restartPolicy: Never",
    )
    crash = crash.replace("              template:\n", "              template:" + OOM + "\n", 1)
    pods, controller = run(write(tmp_path, runtime(rjob() + crash), trainjob()))
    assert controller.finished_as == "Failed"
    assert (
        pods["llm-crash-0-0"]["reason"] == "OOMKilled" and pods["llm-crash-0-0-r1"]["reason"] == "OOMKilled"
    )
    assert {pods[f"llm-node-0-{i}"]["reason"] for i in range(2)} == {"Deleted"}


FAIL_ON_137 = """
              podFailurePolicy:
                rules:
                - action: FailJob
                  onExitCodes: {containerName: crash, operator: In, values: [137]}"""


def test_a_fail_job_rule_of_the_runtimes_job_template_fails_its_job_at_the_first_oom(tmp_path: Path) -> None:
    """The runtime's Job template's ``podFailurePolicy``, read without a warning and applied as a Job's
    (``matchPodFailurePolicy``): the OOM-killed container exits 137, the ``FailJob`` rule fails its Job
    (``PodFailurePolicy``) though ``backoffLimit`` is 6, and the TrainJob fails: no retry."""
    crash = rjob(
        "crash",
        ancestor=None,
        gpus=1,
        job_spec="\n              backoffLimit: 6" + FAIL_ON_137,
        pod_spec="\n                  restartPolicy: Never",
    )
    crash = crash.replace("              template:\n", "              template:" + OOM + "\n", 1)
    paths = write(tmp_path, runtime(rjob() + crash), trainjob())
    assert not [w for w in load_scenario(paths).warnings if "podFailurePolicy" in w]
    pods, controller = run(paths)
    assert controller.finished_as == "Failed"
    assert pods["llm-crash-0-0"]["reason"] == "OOMKilled" and "llm-crash-0-0-r1" not in pods
    assert controller.children["llm-crash-0"].failure == (
        "PodFailurePolicy",
        "Container crash for pod ml/llm-crash-0-0 failed with exit code 137 matching FailJob rule at index 0",
    )


def test_a_runtimes_pod_failure_policy_is_checked_as_a_jobs(tmp_path: Path) -> None:
    """Under the JobSet webhook's ``restartPolicy`` default (``OnFailure``) a ``podFailurePolicy`` is
    refused, as the API server refuses the child Job."""
    paths = write(tmp_path, runtime(rjob("crash", ancestor=None, job_spec=FAIL_ON_137)), trainjob())
    with pytest.raises(ScenarioError) as caught:
        load_scenario(paths)
    assert (
        "(ClusterTrainingRuntime/torch): spec.template.spec.replicatedJobs[0].template.spec.template.spec."
        'restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is '
        "specified"
    ) in str(caught.value)


def test_a_jobs_container_restarts_past_its_backoff_limit_fail_the_trainjob(tmp_path: Path) -> None:
    """Under the JobSet webhook's default ``OnFailure`` the kubelet restarts the OOM-killed container in place
    (at once: ``restartCount`` 1, and it is OOM-killed again at once, its next restart after a 10 s
    back-off); its Job (``backoffLimit: 1``) fails (``pastBackoffLimitOnFailure``: restarts >= 1), which
    fails the JobSet: its Jobs' pods are deleted, no pod created again, the TrainJob is Failed."""
    crash = rjob("crash", ancestor=None, gpus=1, job_spec="\n              backoffLimit: 1")
    crash = crash.replace("              template:\n", "              template:" + OOM + "\n", 1)
    pods, controller = run(write(tmp_path, runtime(rjob() + crash), trainjob()))
    assert controller.finished_as == "Failed"
    assert (pods["llm-crash-0-0"]["restarts"], pods["llm-crash-0-0"]["reason"]) == (1, "Deleted")
    assert "llm-crash-0-0-r1" not in pods
    assert {pods[f"llm-node-0-{i}"]["reason"] for i in range(2)} == {"Deleted"}


def test_a_suspended_trainjob_creates_no_pods(tmp_path: Path) -> None:
    pods, controller = run(write(tmp_path, runtime(rjob()), trainjob(extra="  suspend: true")), 600)
    assert pods == {} and controller.status == "Suspended"


# -- the published examples ----------------------------------------------------------------------


def test_the_published_multi_node_example_runs_three_torchrun_nodes_on_the_torch_runtime() -> None:
    """``examples/yaml/01-multi-node.yaml`` with ``manifests/base/runtimes/torch_distributed.yaml`` (the
    ``kubeflow-trainer`` scenario, whole directory): the trainer's Job ``multi-node-example-node-0`` runs
    ``numNodes: 3`` pods of the runtime's PyTorch image (no resources asked: no GPU), all Running as
    torchrun waits for its rendezvous; the TrainJob runs on past the hour."""
    summary = simulated([H100, HOUR, UPSTREAM / "kubeflow-trainer"])
    pods = {n: p for n, p in pods_by_name(summary).items() if n.startswith("multi-node-example")}
    assert sorted(pods) == [f"multi-node-example-node-0-{i}" for i in range(3)]
    # where the default profile scores these pods that request nothing
    assert [pods[f"multi-node-example-node-0-{i}"]["node"] for i in range(3)] == [
        "h100-0",
        "h100-0",
        "h100-1",
    ]
    assert all(p["phase"] == "Running" and p["gpus"] == 0 for p in pods.values())
    (job,) = (w for w in load_scenario([H100, TRAINER]).other_workloads if isinstance(w, TrainJob))
    (node,) = job.jobs
    assert node.template.behavior.image == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"


def test_the_published_example_completes_when_its_nodes_finish(tmp_path: Path) -> None:
    """The same runtime with a duration on its pod template: the three nodes succeed and the TrainJob
    is Complete (successPolicy All, the JobSet webhook's default), well before the hour."""
    runtime_doc = yaml.safe_load((TRAINER / "torch_distributed.yaml").read_text())
    (node,) = runtime_doc["spec"]["template"]["spec"]["replicatedJobs"]
    node["template"]["spec"]["template"]["metadata"] = {"annotations": {"gpufleet.io/duration": "20m"}}
    timed = tmp_path / "torch_distributed.yaml"
    timed.write_text(yaml.safe_dump(runtime_doc))
    summary = simulated([H100, TRAINER / "01-multi-node.yaml", timed])
    pods = pods_by_name(summary)
    assert sorted(pods) == [f"multi-node-example-node-0-{i}" for i in range(3)]
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}
    assert summary["end_time_s"] < 1300.0  # 20 minutes and the image pulls: then nothing is left to do


def test_kueue_admits_a_trainjob_as_one_workload_of_its_pod_sets(tmp_path: Path) -> None:
    """Kueue's TrainJob integration: a TrainJob labelled with a LocalQueue is one Workload of a pod set
    per replicated job (here ``node``: 2 pods of 2 cpu), admitted whole under the quick-start quota."""
    trainer = "numNodes: 2, resourcesPerNode: {requests: {cpu: 2, memory: 1Gi}}"
    text = trainjob(trainer, ref="name: torch-distributed").replace(
        "metadata: {name: llm, namespace: ml}",
        "metadata: {name: llm, namespace: default, labels: {kueue.x-k8s.io/queue-name: user-queue}}",
    )
    (path,) = write(tmp_path, text)[1:]
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "kueue/getting-started/quick-start-setup.yaml",
        TRAINER / "torch_distributed.yaml",
        path,
    ]
    summary = simulated(paths, duration_s=600)
    (workload,) = summary["kueue"]["workloads"]
    assert (workload["name"], workload["admissions"]) == ("TrainJob/default/llm", [0.0])
    usage = summary["kueue"]["cluster_queues"]["cluster-queue"]["usage"]["default-flavor/cpu"]
    assert usage["peak"] == 4000.0
    assert {p["phase"] for p in pods_by_name(summary).values()} == {"Running"}


QUEUE = """
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


def test_kueue_releases_the_quota_of_the_jobs_that_succeeded(tmp_path: Path) -> None:
    """``TrainJob.ReclaimablePods``: each replicated job's succeeded Jobs' pods (``succeeded`` x the
    JobSet's ``PodsCountPerReplica``) stop counting against the quota: the initializer's GPU is given
    back when it completes, the trainer's two hold theirs until they end."""
    init = rjob("model-initializer", ancestor="model-initializer", duration="5m", gpus=1)
    node = rjob(
        duration="10m", gpus=1, depends="\n          dependsOn: [{name: model-initializer, status: Complete}]"
    )
    queued = trainjob().replace(
        "metadata: {name: llm, namespace: ml}",
        "metadata: {name: llm, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}}",
    )
    queues = "---".join([resource_flavor("default-flavor"), QUEUE, local_queue("lq", "ml", "cq")])
    paths = write(tmp_path, runtime(init + node), queued, queues)
    summary = simulated(paths)
    pods = pods_by_name(summary)
    initialized = pods["llm-model-initializer-0-0"]["finished_s"]
    (trained,) = {pods[f"llm-node-0-{i}"]["finished_s"] for i in range(2)}
    usage = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default-flavor/nvidia.com/gpu"]
    assert usage["steps"] == [[0.0, 3.0], [initialized, 2.0], [trained, 0.0]]


# -- deadlines, failure policy, failed indexes ---------------------------------------------------

TRAINJOB_DEADLINE_EXCEEDED = ("DeadlineExceeded", "TrainJob exceeded its active deadline")


def test_past_its_active_deadline_the_trainjob_fails_and_its_jobset_is_deleted(tmp_path: Path) -> None:
    """``reconcileDeadline``: ``activeDeadlineSeconds`` after the TrainJob's start its 2 h pods still run:
    it fails (``Failed``, ``DeadlineExceeded``, "TrainJob exceeded its active deadline") and deletes its
    JobSet, whose Jobs' pods are deleted then (gone after their 30 s grace period)."""
    paths = write(tmp_path, runtime(rjob(duration="2h")), trainjob(extra="  activeDeadlineSeconds: 600"))
    pods, controller = run(paths)
    assert (controller.finished_as, controller.reason, controller.message) == (
        "Failed",
        *TRAINJOB_DEADLINE_EXCEEDED,
    )
    assert {(n, p["reason"], p["finished_s"]) for n, p in pods.items()} == {
        (f"llm-node-0-{i}", "Deleted", 630.0) for i in range(2)
    }


def test_a_trainjob_that_finishes_before_its_deadline_completes(tmp_path: Path) -> None:
    """Its deadline not passed (``Should not fail TrainJob if ActiveDeadlineSeconds is not exceeded``): the
    TrainJob completes with its JobSet."""
    paths = write(tmp_path, runtime(rjob(duration="5m")), trainjob(extra="  activeDeadlineSeconds: 600"))
    pods, controller = run(paths)
    assert (controller.finished_as, controller.reason) == ("Complete", None)
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}


def test_under_kueue_the_trainjobs_deadline_runs_from_its_admission(tmp_path: Path) -> None:
    """Kueue creates the TrainJob suspended and resumes it on admission, 600 s later once a Job holding the
    quota ended: its start is then (the ``Suspended`` condition's transition to false, ``reconcileDeadline``),
    so it fails 300 s after its admission, not after its creation."""
    blocker = """
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
    queued = trainjob(extra="  activeDeadlineSeconds: 300").replace(
        "metadata: {name: llm, namespace: ml}",
        "metadata: {name: llm, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}, "
        "annotations: {gpufleet.io/submit-at: 10s}}",
    )
    queues = "---".join([resource_flavor("default-flavor"), QUEUE, local_queue("lq", "ml", "cq")])
    paths = write(tmp_path, runtime(rjob(duration="2h", gpus=1)), queued, queues, blocker)
    pods, controller = run(paths)
    assert (controller.finished_as, controller.reason) == ("Failed", "DeadlineExceeded")
    trained = {(n, p["running_s"], p["finished_s"]) for n, p in pods.items() if n.startswith("llm")}
    assert trained == {(f"llm-node-0-{i}", 600.0, 930.0) for i in range(2)}


CRASH = rjob("crash", ancestor=None, gpus=1, pod_spec="\n                  restartPolicy: Never").replace(
    "              template:\n", "              template:" + OOM + "\n", 1
)


def test_the_runtimes_failure_policy_restarts_the_trainjobs_jobset_until_max_restarts(tmp_path: Path) -> None:
    """The trainer passes the runtime's ``failurePolicy`` into the JobSet as it is (``plugins/jobset``
    ``Build``), and the JobSet controller applies it: the crash Job fails at once (``backoffLimit: 0``), no
    rule applies, the default ``RestartJobSet`` deletes every Job and, ``BlockingRecreate``, creates them all
    again once the old pods are gone (the node pods deleted after the work queue's 5 ms retry, gone after
    their 30 s grace period), under ``restart-attempt: 1``, their pods named with the JobSet's suffix; the
    next failure, past ``maxRestarts: 1``, fails the JobSet and the TrainJob (``plugins/jobset`` ``Status``:
    its ``Failed`` condition; no restart count)."""
    crash = CRASH.replace("            spec:", "            spec:\n              backoffLimit: 0", 1)
    policy = "      failurePolicy: {maxRestarts: 1, restartStrategy: BlockingRecreate}"
    paths = write(tmp_path, runtime(rjob(duration="2h") + crash, extra=policy), trainjob())
    assert not [w for w in load_scenario(paths).warnings if "failurePolicy" in w]
    pods, controller = run(paths)
    assert (controller.finished_as, controller.message, controller.restarts) == (
        "Failed",
        "jobset failed due to reaching max number of restarts (first failed job: llm-crash-0)",
        1,
    )
    first = {"llm-crash-0-0", "llm-node-0-0", "llm-node-0-1"}
    assert {(n, pods[n]["created_s"], pods[n]["reason"]) for n in first} == {
        ("llm-crash-0-0", 0.0, "OOMKilled"),
        ("llm-node-0-0", 0.0, "Deleted"),
        ("llm-node-0-1", 0.0, "Deleted"),
    }
    again = sorted(
        (n.rsplit("-", 1)[0], p["created_s"], p["reason"]) for n, p in pods.items() if n not in first
    )
    assert again == [
        ("llm-crash-0-0", 30.005, "OOMKilled"),
        ("llm-node-0-0", 30.005, "Deleted"),
        ("llm-node-0-1", 30.005, "Deleted"),
    ]


def test_a_deadline_rule_of_the_runtimes_failure_policy_fails_the_trainjob_when_a_job_times_out(
    tmp_path: Path,
) -> None:
    """The runtime's Job template's ``activeDeadlineSeconds`` fails its Job 600 s after it started
    (``DeadlineExceeded``), and the failure policy's rule on that reason (``FailJobSet``) fails the JobSet
    with no restart, its ``maxRestarts: 3`` notwithstanding, once the Job is ``Failed`` (its pods gone at
    630 s, ``delayTerminalCondition``)."""
    node = rjob(duration="2h", job_spec="\n              activeDeadlineSeconds: 600")
    policy = (
        "      failurePolicy:\n        maxRestarts: 3\n        rules:\n"
        "        - {action: FailJobSet, onJobFailureReasons: [DeadlineExceeded]}"
    )
    pods, controller = run(write(tmp_path, runtime(node, extra=policy), trainjob()))
    assert (controller.finished_as, controller.message, controller.restarts) == (
        "Failed",
        "applying FailJobSet failure policy action (first failed job: llm-node-0)",
        0,
    )
    assert controller.children["llm-node-0"].failure == (
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
    )
    assert {(p["reason"], p["finished_s"]) for p in pods.values()} == {("Deleted", 630.0)}


def test_the_runtimes_backoff_limit_per_index_fails_each_index_on_its_own(tmp_path: Path) -> None:
    """The runtime's Job template's ``backoffLimitPerIndex: 1`` (no warning; ``backoffLimit`` then defaults
    to MaxInt32): each of the crash Job's two indexes is retried once (``-r1``), then fails; with every index
    failed the Job fails (``FailedIndexes``) and with it the TrainJob."""
    crash = CRASH.replace(
        "            spec:",
        "            spec:\n              parallelism: 2\n              backoffLimitPerIndex: 1",
        1,
    )
    paths = write(tmp_path, runtime(rjob(duration="2h") + crash), trainjob())
    assert not [w for w in load_scenario(paths).warnings if "Index" in w]
    pods, controller = run(paths)
    assert controller.finished_as == "Failed"
    job = controller.children["llm-crash-0"]
    assert (job.job.backoff_limit, job.failed_indexes, job.failure) == (
        2**31 - 1,
        {0, 1},
        ("FailedIndexes", "Job has failed indexes"),
    )
    crashed = {n for n in pods if n.startswith("llm-crash")}
    assert crashed == {"llm-crash-0-0", "llm-crash-0-0-r1", "llm-crash-0-1", "llm-crash-0-1-r1"}


def test_a_job_past_its_deadline_fails_the_trainjob_once_its_deleted_pods_are_gone(tmp_path: Path) -> None:
    """The trainer's Job fails ``DeadlineExceeded`` at 600 s and deletes its pods (``FailureTarget``,
    ``deleteActivePods``); it is ``Failed`` once they are gone, after their 30 s grace period
    (``delayTerminalCondition``): only then does the JobSet, reading that condition (jobset v0.12.0
    ``JobFinished``), fail, and the TrainJob with it; the JobSet deletes its other Job then (the ``helper``'s
    pod gone at 660 s)."""
    node = rjob(duration="2h", job_spec="\n              activeDeadlineSeconds: 600")
    helper = rjob("helper", ancestor=None, duration="2h")
    pods, controller = run(write(tmp_path, runtime(node + helper), trainjob()))
    assert (controller.finished_as, controller.message) == (
        "Failed",
        "jobset failed due to one or more job failures (first failed job: llm-node-0)",
    )
    ended = sorted((n, p["reason"], p["finished_s"]) for n, p in pods.items())
    assert ended == [
        ("llm-helper-0-0", "Deleted", 660.0),
        ("llm-node-0-0", "Deleted", 630.0),
        ("llm-node-0-1", "Deleted", 630.0),
    ]
    assert pods["llm-helper-0-0"]["disruptions"] == [630.0]
