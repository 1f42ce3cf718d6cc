"""The pod a controller makes again in the place of one that ended Failed resumes from the progress
its predecessor checkpointed, whatever ended it: a fault, a preemption, an eviction, a deletion, its job
restarted whole (``PodLifecycle.terminated``), as a training job reloads its last checkpoint from shared
storage (docs/faults.md). Every invariant holds after every event, ``checkpoint-kept`` among them."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import invariants_checked
from gpufleet.kube import load_scenario
from gpufleet.sim.records import PodRecord
from gpufleet.sim.simulation import Simulation

#: One 1-GPU node; a pod of priority 1000 arrives at 25 min and preempts what runs there.
CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n0, labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
status: {capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, annotations: {gpufleet.io/submit-at: 25m, gpufleet.io/duration: 10m}}
spec:
  priorityClassName: high
  restartPolicy: Never
  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 3h}
"""
#: An hour of training that checkpoints every 10 minutes.
TRAINING = """
      metadata:
        annotations: {gpufleet.io/duration: 60m, gpufleet.io/checkpoint-interval: 10m}
      spec:
        restartPolicy: Never
        containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]"""
JOB = f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  backoffLimit: 3
  template:{TRAINING}
"""
VOLCANO_JOB = f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: train}}
spec:
  minAvailable: 1
  tasks:
  - name: worker
    replicas: 1
    template:{TRAINING.replace(chr(10) + "  ", chr(10) + "    ")}
"""


def run(tmp_path: Path, workload: str) -> tuple[Simulation, list[PodRecord]]:
    """The workload on ``CLUSTER`` with every invariant checked after every event; its training pods,
    the one preempted first."""
    path = tmp_path / "scenario.yaml"
    path.write_text(CLUSTER + "---" + workload)
    sim = invariants_checked(load_scenario([path]))
    records = [r for r in sim.all_records if r.pod.name.startswith("train")]
    return sim, records


def test_a_preempted_jobs_retry_resumes_from_the_checkpoint_of_the_pod_it_replaces(tmp_path: Path) -> None:
    """Preempted at 25 min (ended at 25.5 min, after the grace period), the pod keeps the 20 min it
    checkpointed and loses 5; its retry ``train-0-r1`` runs once ``urgent`` ends at 35.5 min and needs
    the 40 min left, not the whole hour: it ends at 75.5 min."""
    _, (preempted, retry) = run(tmp_path, JOB)
    assert (preempted.pod.name, preempted.reason, preempted.done_s, preempted.work_lost_gpu_s) == (
        "train-0",
        "Preempted",
        1200,
        300,
    )
    assert (retry.pod.name, retry.phase, retry.bound_s, retry.finished_s) == (
        "train-0-r1",
        "Succeeded",
        2130,
        4530,
    )


def test_a_volcano_pod_made_again_under_its_name_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    """Volcano's job controller makes an evicted pod again under its name (no policy): the new
    ``train-worker-0`` resumes from the 20 min its predecessor checkpointed (``checkpoint-kept`` holds
    across the two pods of one name)."""
    sim, (preempted, again) = run(tmp_path, VOLCANO_JOB)
    assert preempted.pod.key == again.pod.key == "default/train-worker-0"
    assert (preempted.reason, preempted.done_s) == ("Preempted", 1200)
    assert (again.phase, again.bound_s, again.finished_s) == ("Succeeded", 2130, 4530)
    assert sim.lifecycle.replaced == [preempted]


def test_a_rank_made_again_resumes_the_same_share_of_a_task_its_ring_stretched() -> None:
    """The ring stretched the worker's 57 min to 51,642 s; killed at 5 min with 240 s of that checkpointed,
    the worker made again resumes from those 240 s. The checkpoint is kept as a share of the task: kept
    in seconds it became 240 of the unstretched 3,420 s, 3,624 s once stretched again, and the pod after
    it resumed past its end and succeeded at once."""
    sim = invariants_checked(
        load_scenario([Path(__file__).with_name("stretched_rank_made_again.yaml")]), seed=0
    )
    ranks = [r for r in sim.all_records if r.pod.name == "mpi-worker-0"]
    first, again = ranks[0], ranks[1]
    assert (first.reason, first.task_s, first.done_s) == ("Error", 51642, 240)
    assert again.task_s == 51642 and again.done_s == pytest.approx(240)
    assert not any(r.phase == "Succeeded" and r.finished_s == r.bound_s for r in ranks)  # none at once
