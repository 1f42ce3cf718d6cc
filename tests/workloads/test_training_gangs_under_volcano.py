"""A training operator's gang under Volcano: when the pods of a PyTorchJob or an MPIJob name the
``volcano`` scheduler (the operator run with ``--gang-scheduler-name volcano``: training-operator's
``VolcanoControl``, mpi-operator's ``VolcanoCtrl``), the job's PodGroup is a Volcano PodGroup named
after the job, its pods join it by the annotation ``scheduling.k8s.io/group-name``, and
``runPolicy.schedulingPolicy.queue`` is its queue; otherwise a scheduler-plugins PodGroup, joined
by the label ``scheduling.x-k8s.io/pod-group``, and the queue is not modelled."""

from __future__ import annotations

from pathlib import Path

from conftest import pods_by_name, simulated
from gpufleet.kube import load_scenario
from gpufleet.model.pod import POD_GROUP_LABEL, VOLCANO_GROUP_ANNOTATION
from gpufleet.workloads import controller_for

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: gpu-{i}, labels: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}}}
status: {{capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}}}
"""
    for i in range(2)
)
QUEUE = """---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {capability: {nvidia.com/gpu: 16}}
"""


def replica(replicas: int, scheduler: str, gpus: int = 8) -> str:
    return f"""
      replicas: {replicas}
      template:
        metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
        spec:
          schedulerName: {scheduler}
          containers:
          - name: pytorch
            image: trainer
            resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}"""


def pytorchjob(name: str, workers: int, scheduler: str, policy: str) -> str:
    return f"""---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: {name}, namespace: ml}}
spec:
  runPolicy:
    schedulingPolicy: {policy}
  pytorchReplicaSpecs:
    Master:{replica(1, scheduler)}
    Worker:{replica(workers, scheduler)}
"""


def write(tmp_path: Path, text: str) -> list[Path]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return [path]


def test_a_pytorchjob_naming_volcano_makes_a_volcano_pod_group_in_its_queue(tmp_path: Path) -> None:
    """``VolcanoControl``: the PodGroup's ``queue`` is ``schedulingPolicy.queue``; the pods carry the
    group's annotation, not scheduler-plugins' label."""
    text = NODES + QUEUE + pytorchjob("llm", 1, "volcano", "{minAvailable: 2, queue: research}")
    scenario = load_scenario(write(tmp_path, text))
    (job,) = scenario.other_workloads
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert (group.name, group.min_member, group.queue) == ("llm", 2, "research")
    pods = controller.wanted([])
    assert [p.annotations.get(VOLCANO_GROUP_ANNOTATION) for p in pods] == ["llm", "llm"]
    assert all(POD_GROUP_LABEL not in p.labels for p in pods)
    assert not [w for w in scenario.warnings if "schedulingPolicy.queue" in w]


def test_without_volcano_the_queue_is_not_modelled_and_the_gang_is_scheduler_plugins(tmp_path: Path) -> None:
    text = NODES + pytorchjob("llm", 1, "default-scheduler", "{minAvailable: 2, queue: research}")
    scenario = load_scenario(write(tmp_path, text))
    (job,) = scenario.other_workloads
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert group.queue is None
    assert {p.labels.get(POD_GROUP_LABEL) for p in controller.wanted([])} == {"llm"}
    assert [w for w in scenario.warnings if "spec.runPolicy.schedulingPolicy.queue is not modelled" in w]


def test_volcano_places_the_training_gangs_whole_within_the_queue_capability(tmp_path: Path) -> None:
    """The volcano scheduler's gang plugin places ``small`` (2 x 8 GPUs) whole; ``big`` (3 x 8 GPUs)
    does not fit the queue's 16-GPU capability beside it and none of its pods is bound (no partial
    gang); ``small`` ends at 1 h and ``big`` still exceeds the capability (24 > 16): it waits."""
    text = (
        NODES
        + QUEUE
        + pytorchjob("small", 1, "volcano", "{queue: research}")
        + pytorchjob("big", 2, "volcano", "{queue: research}")
    )
    pods = pods_by_name(simulated(write(tmp_path, text), duration_s=1800))
    assert {pods[f"small-{r}"]["phase"] for r in ("master-0", "worker-0")} == {"Running"}
    assert {pods[f"big-{r}"]["node"] for r in ("master-0", "worker-0", "worker-1")} == {None}
    assert "queue resource quota insufficient" in (pods["big-master-0"]["message"] or "")


def test_an_mpijob_naming_volcano_joins_its_launcher_and_workers_to_one_volcano_pod_group(
    tmp_path: Path,
) -> None:
    """mpi-operator's ``VolcanoCtrl``: the launcher and the workers are one PodGroup (minMember
    workers + 1) in ``schedulingPolicy.queue``."""
    template = """
      template:
        spec:
          schedulerName: volcano
          containers: [{name: mpi, image: mpi, resources: {limits: {nvidia.com/gpu: 1}}}]"""
    text = (
        NODES
        + QUEUE
        + f"""---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: pi, namespace: ml}}
spec:
  runPolicy: {{schedulingPolicy: {{queue: research}}}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1{template}
    Worker:
      replicas: 2{template}
"""
    )
    (job,) = load_scenario(write(tmp_path, text)).other_workloads
    controller = controller_for(job)
    (group,) = controller.pod_groups()
    assert (group.name, group.min_member, group.queue) == ("pi", 3, "research")
    pods = controller.wanted([])
    assert sorted(p.name for p in pods) == ["pi-launcher-0", "pi-worker-0", "pi-worker-1"]
    assert {p.annotations.get(VOLCANO_GROUP_ANNOTATION) for p in pods} == {"pi"}
