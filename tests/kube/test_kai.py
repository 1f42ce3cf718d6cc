"""KAI Scheduler: its ``Queue`` (``scheduling.run.ai/v2``) read strictly, its pod grouper and its queue limits
in simulation.

Rules from ``NVIDIA/KAI-Scheduler``: ``pkg/apis/scheduling/v2/{queue_types,resources}.go`` (fields),
``pkg/podgrouper`` (a PodGroup per top owner: ``pg-<owner>-<uid>``; a batch Job's pods one group each;
a PyTorchJob's group needs every replica, ``kubeflow/distributed_common.go``; the name written on the
pod as ``pod-group-name``), ``pkg/common/constants`` (label ``kai.scheduler/queue``, queue
``default-queue`` when absent), ``plugins/proportion/capacity_policy/max_allowed_check.go`` (a job
over its queue's or an ancestor's ``limit`` waits, with KAI's message) and
``actions/utils/input_jobs.go`` (jobs of a missing or non-leaf queue are skipped). The published
examples are ``docs/quickstart``, ``docs/batch`` and ``docs/gpu-sharing``.
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from conftest import pods_by_name, simulated, simulated_text
from gpufleet.control.kai import uid
from gpufleet.model.kai import KaiQuota
from gpufleet.scheduling.messages import no_scheduler
from shared_files import UPSTREAM, needs_upstream


def queue(name: str, gpu_limit: float = -1, parent: str | None = None, extra: str = "") -> str:
    parent_line = f"\n  parentQueue: {parent}" if parent else ""
    return f"""
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: {name}}}
spec:{parent_line}
  resources:
    gpu: {{quota: 0, limit: {gpu_limit}, overQuotaWeight: 1}}
    cpu: {{quota: 0, limit: -1, overQuotaWeight: 1}}
    memory: {{quota: 0, limit: -1, overQuotaWeight: 1}}{extra}
"""


NODES = "".join(
    f"""
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-{i}
  labels: {{kubernetes.io/hostname: gpu-{i}}}
status:
  capacity: {{cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}}
"""
    for i in range(2)
)


def job(name: str, pods: int, gpus: int = 1, queue_name: str = "team") -> str:
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    metadata:
      labels: {{kai.scheduler/queue: {queue_name}}}
      annotations: {{gpufleet.io/duration: 1h}}
    spec:
      schedulerName: kai-scheduler
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


def pytorchjob(workers: int) -> str:
    def spec(replicas: int) -> str:
        return f"""
      replicas: {replicas}
      template:
        metadata:
          labels: {{kai.scheduler/queue: team}}
          annotations: {{gpufleet.io/duration: 1h}}
        spec:
          schedulerName: kai-scheduler
          containers:
          - name: pytorch
            image: trainer
            resources: {{limits: {{nvidia.com/gpu: 1}}}}"""

    return f"""
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: mnist}}
spec:
  pytorchReplicaSpecs:
    Master:{spec(1)}
    Worker:{spec(workers)}
"""


# -- the reader ------------------------------------------------------------------------------


def test_queue_reads_parent_priority_and_resources(tmp_path: Path) -> None:
    scenario = load(tmp_path, queue("root") + queue("team", 2, "root", "\n  priority: 50"))
    team = scenario.kai_queues["team"]
    assert (team.parent, team.priority) == ("root", 50)
    assert team.quota("gpu") == KaiQuota(0, 2, 1)
    assert scenario.kai_queues["root"].quota("cpu").limit == -1


def test_queue_errors_misspelt_field_and_limit_below_minus_one(tmp_path: Path) -> None:
    text = queue("team", -2) + queue("other").replace("parentQueue", "parent").replace(
        "spec:", "spec:\n  parent: x"
    )
    lines = problems(tmp_path, text)
    assert lines[0].startswith(
        "scenario.yaml: document 1 (Queue/team): spec.resources.gpu.limit: Invalid value: -2"
    )
    assert lines[1].startswith("scenario.yaml: document 2 (Queue/other): spec.parent:")


def test_queue_warnings_quota_siblings_weights_and_a_missing_parent(tmp_path: Path) -> None:
    """A deserved quota is not reclaimed, over-quota weights and priorities between siblings do not
    divide anything in gpufleet, and a queue whose parent is missing takes no jobs."""
    text = (
        queue("a", extra="\n  priority: 200").replace("gpu: {quota: 0", "gpu: {quota: 4")
        + queue("b")
        + queue("c", parent="nobody").replace("overQuotaWeight: 1", "overQuotaWeight: 0")
    )
    note = "not modelled (over-quota resources are not divided among queues); ignored"
    a, b, c = (f"scenario.yaml: document {n} (Queue/{q})" for n, q in ((1, "a"), (2, "b"), (3, "c")))
    assert warnings(tmp_path, text) == [
        f"{a}: spec.resources.gpu.quota is not modelled "
        "(a deserved quota is not reclaimed from other queues; only limit is enforced); ignored",
        f"{a}: spec.priority is {note}",
        *(f"{a}: spec.resources.{r}.overQuotaWeight is {note}" for r in ("cpu", "gpu", "memory")),
        *(f"{b}: spec.resources.{r}.overQuotaWeight is {note}" for r in ("cpu", "gpu", "memory")),
        f'{c}: spec.parentQueue: no Queue "nobody": KAI Scheduler skips the jobs of this queue',
    ]


# -- in simulation ---------------------------------------------------------------------------


def test_without_a_kai_queue_kai_pods_stay_pending(tmp_path: Path) -> None:
    """KAI installed means a KAI Queue in the scenario; without one no scheduler serves the pods."""
    pods = pods_by_name(simulated_text(tmp_path, NODES + job("batch", 1)))
    assert (pods["batch-0"]["phase"], pods["batch-0"]["message"]) == (
        "Pending",
        no_scheduler("kai-scheduler"),
    )


def test_a_queue_limit_holds_the_job_beyond_it_with_kais_message(tmp_path: Path) -> None:
    """gpu limit 2: a batch Job's pods are one group each, so two run and the third waits, with the
    proportion plugin's message, until one ends."""
    text = NODES + queue("root") + queue("team", 2, "root") + job("batch", 3)
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert [pods[f"batch-{i}"]["bound_s"] for i in range(3)] == [0.0, 0.0, 3600.0]
    path = tmp_path / "scenario.yaml"
    waiting = pods_by_name(simulated([path], duration_s=60))["batch-2"]
    assert waiting["phase"] == "Pending"
    assert (
        "team quota has reached the allowable limit of GPUs. Limit is 2 GPUs, currently 2 GPUs allocated "
        "and workload requested 1 GPUs" in waiting["message"]
    )


def test_a_parents_limit_applies_to_its_children_together(tmp_path: Path) -> None:
    """``resultsOverLimit`` walks up the parents: root's limit 3 caps team and other together."""
    text = NODES + queue("root", 3) + queue("team", -1, "root") + queue("other", -1, "root") + job("a", 2)
    text += job("b", 2, queue_name="other")
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert sorted(p["bound_s"] for p in pods.values()) == [0.0, 0.0, 0.0, 3600.0]


def test_a_pytorchjobs_pods_form_one_gang_of_every_replica(tmp_path: Path) -> None:
    """``calcJobNumOfPods``: minMember = 1 master + 3 workers; with a limit of 3 GPUs none run
    (all or nothing), with 4 all do. The group is named ``pg-mnist-<uid>``."""
    pods = pods_by_name(
        simulated_text(tmp_path, NODES + queue("root") + queue("team", 3, "root") + pytorchjob(3))
    )
    assert all(p["phase"] == "Pending" for p in pods.values())
    summary = simulated_text(tmp_path, NODES + queue("root") + queue("team", 4, "root") + pytorchjob(3))
    pods = pods_by_name(summary)
    assert sorted(pods) == ["mnist-master-0", "mnist-worker-0", "mnist-worker-1", "mnist-worker-2"]
    assert all(p["bound_s"] == 0.0 for p in pods.values())


def test_pod_group_names_follow_the_pod_grouper(tmp_path: Path) -> None:
    from gpufleet.kube import load_scenario
    from gpufleet.sim.simulation import Simulation

    path = tmp_path / "scenario.yaml"
    path.write_text(NODES + queue("root") + queue("team", -1, "root") + job("batch", 2) + pytorchjob(1))
    sim = Simulation(load_scenario([path]))
    sim.run()
    groups = {k: g.min_member for k, g in sim.gangs.groups.items()}
    assert groups == {
        f"default/pg-batch-0-{uid('Job', 'default', 'batch')}": 1,
        f"default/pg-batch-1-{uid('Job', 'default', 'batch')}": 1,
        f"default/pg-mnist-{uid('PyTorchJob', 'default', 'mnist')}": 2,
    }
    pod = sim.records["default/mnist-worker-0"].pod
    assert pod.annotations["pod-group-name"] == f"pg-mnist-{uid('PyTorchJob', 'default', 'mnist')}"


def test_a_missing_or_parent_queue_takes_no_jobs(tmp_path: Path) -> None:
    text = NODES + queue("root") + queue("team", -1, "root") + job("lost", 1, queue_name="nobody")
    text += job("parent", 1, queue_name="root")
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert pods["lost-0"]["phase"] == pods["parent-0"]["phase"] == "Pending"
    assert 'queue "nobody" does not exist: KAI Scheduler skips the job' in pods["lost-0"]["message"]
    assert 'queue "root" is not a leaf queue: KAI Scheduler skips the job' in pods["parent-0"]["message"]


@needs_upstream
def test_kai_scheduler_docs_run_every_pod_and_share_a_gpu() -> None:
    """Scenario ``kai-scheduler-docs``: the default queues (no limits), the batch Job (2 pods of one
    GPU), the GPU pod and the ``gpu-fraction: 0.5`` pod all run on the two H100 nodes."""
    summary = simulated(
        [
            UPSTREAM / "_clusters/h100-nodes.yaml",
            UPSTREAM / "_clusters/sim-1h.yaml",
            UPSTREAM / "kai-scheduler",
        ]
    )
    pods = pods_by_name(summary)
    assert sorted(pods) == ["batch-job-0", "batch-job-1", "gpu-pod", "gpu-sharing"]
    assert all(p["phase"] == "Running" and p["bound_s"] == 0.0 for p in pods.values())


def test_a_misspelt_kai_kind_is_an_error(tmp_path: Path) -> None:
    """``scheduling.run.ai`` is a known group once its Queue is read: a typo is refused."""
    lines = problems(tmp_path, queue("team").replace("kind: Queue", "kind: Queeu"))
    assert len(lines) == 1 and 'unknown kind "Queeu" in scheduling.run.ai/v2' in lines[0]


def test_explain_judges_a_jobs_pods_one_after_another_against_the_queue_limit(tmp_path: Path) -> None:
    """``explain``: a batch Job's pods are one KAI group each, judged in queue order: the third is over
    the queue's limit once the first two are placed."""
    from gpufleet.kube import load_scenario
    from gpufleet.kube.explain import explain_scenario

    path = tmp_path / "scenario.yaml"
    path.write_text(NODES + queue("root") + queue("team", 2, "root") + job("batch", 3))
    verdicts = {v["pod"]: v for v in explain_scenario(load_scenario([path]))}
    assert "team quota has reached the allowable limit of GPUs" in str(verdicts["default/batch-2"])
    assert "allowable limit" not in str(verdicts["default/batch-0"])


def test_the_older_runai_queue_label_is_a_warning(tmp_path: Path) -> None:
    """Today's pod grouper reads ``kai.scheduler/queue`` only: a pod labelled ``runai/queue`` goes to
    ``default-queue``."""
    text = job("batch", 1).replace("kai.scheduler/queue: team", "runai/queue: team")
    assert warnings(tmp_path, text) == [
        "scenario.yaml: document 1 (Job/default/batch): spec.template.metadata.labels.runai/queue: "
        'KAI Scheduler reads the label kai.scheduler/queue: this pod goes to queue "default-queue"'
    ]
