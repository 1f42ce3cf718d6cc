"""A new workload kind is one module: its object, its controller and its manifest reader, registered
with ``@register_kind``. This module is that module, for a kind of its own (``TrainingJob``: N
worker pods that form one gang): the manifest reader, ``explain`` and the simulator handle it with
no other file touched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from conftest import coscheduling, pods_by_name, simulated, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.model.node import Node
from gpufleet.model.pod import POD_GROUP_LABEL, OwnerRef, Pod
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import COMPLETING_RESTART_POLICIES, ManifestReader

API = ("training.example.com", "v1", "TrainingJob")


@dataclass
class TrainingJob:
    name: str
    namespace: str
    template: Pod
    workers: int
    created: Created

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_training_job(manifest: ManifestReader) -> TrainingJob:
    manifest.unmodelled(["ttlSecondsAfterFinished"])
    template, created = manifest.template("template", COMPLETING_RESTART_POLICIES)
    workers = manifest.count("workers", 1)
    return TrainingJob(manifest.name, manifest.namespace, template, workers, created)


@register_kind(TrainingJob, api=API, read=read_training_job)
class TrainingJobController:
    kind: ClassVar[str] = "TrainingJob"
    per_node: ClassVar[bool] = False

    def __init__(self, job: TrainingJob) -> None:
        self.job = job
        self.created = False

    @property
    def key(self) -> str:
        return self.job.key

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        if self.created:
            return []
        self.created = True
        job, gang = self.job, {POD_GROUP_LABEL: self.job.name}
        owner = OwnerRef(self.kind, job.name)
        return [job.template.stamped(f"{job.name}-worker-{i}", owner, gang) for i in range(job.workers)]

    def pod_groups(self) -> list[PodGroup]:
        return [PodGroup(self.job.name, self.job.namespace, min_member=self.job.workers)]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        return False

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        return None


NODES = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 2
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def training_job(workers: object, extra: str = "") -> str:
    return f"""
apiVersion: training.example.com/v1
kind: TrainingJob
metadata: {{name: llm, namespace: research}}
spec:
  workers: {workers}
  {extra}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: trainer
        resources:
          requests: {{cpu: "32", memory: 256Gi}}
          limits: {{nvidia.com/gpu: 8}}
"""


def test_the_simulator_runs_a_registered_kind_read_from_its_manifest(tmp_path: Path) -> None:
    summary = simulated(write(tmp_path, NODES, training_job(2)))
    pods = pods_by_name(summary)
    assert sorted(pods) == ["llm-worker-0", "llm-worker-1"]
    assert {p["pod_group"] for p in pods.values()} == {"research/llm"}
    assert all(p["phase"] == "Succeeded" for p in pods.values())
    assert {p["node"] for p in pods.values()} == {"h100-0", "h100-1"}


def test_the_gang_a_kind_declares_holds_its_pods_together_under_coscheduling(tmp_path: Path) -> None:
    """Coscheduling's PreFilter: three 8-GPU workers cannot all fit on two nodes, so none is bound."""
    summary = simulated(write(tmp_path, NODES, coscheduling(), training_job(3)), duration_s=600.0)
    pods = pods_by_name(summary)
    assert len(pods) == 3 and all(p["phase"] == "Pending" and p["node"] is None for p in pods.values())


def test_explain_sees_the_pods_a_registered_kind_would_create(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, NODES, training_job(1)))
    explained = explain_scenario(scenario)
    assert [e["pod"] for e in explained] == ["research/llm-worker-0"]


def test_a_field_its_reader_does_not_read_is_a_warning(tmp_path: Path) -> None:
    extra = "ttlSecondsAfterFinished: 60\n  elasticPolicy: {maxReplicas: 4}"
    scenario = load_scenario(write(tmp_path, NODES, training_job(2, extra)))
    assert any("spec.ttlSecondsAfterFinished is not modelled; ignored" in w for w in scenario.warnings)
    assert any("spec.elasticPolicy is not modelled; ignored" in w for w in scenario.warnings)


def test_a_bad_count_is_an_error_at_its_field(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, NODES, training_job('"two"')))
    assert '(TrainingJob/research/llm): spec.workers: Invalid value: "two": must be an integer' in str(
        caught.value
    )
