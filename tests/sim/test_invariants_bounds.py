"""Replicas within their bounds for every kind that keeps a count (``kind.BoundsReplicas``): a
LeaderWorkerSet's groups within ``replicas``, an ``OrderedReady`` StatefulSet's scale-down one pod at a
time, a RayCluster worker group's workers within what KubeRay wants of it (``replicas`` clamped to
``minReplicas``/``maxReplicas``), a ScaledJob's Jobs within ``maxReplicaCount``. Each kind's example
keeps them after every event, and each count, pushed past its bound in a run's state, is reported with
the controller and what was counted."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_invariants import checked

from gpufleet.sim import invariants
from gpufleet.sim.invariants import InvariantViolation
from gpufleet.sim.simulation import Simulation
from gpufleet.workloads.leaderworkerset import LeaderWorkerSetController
from gpufleet.workloads.raycluster import RayClusterController
from gpufleet.workloads.statefulset import StatefulSetController


def violation(sim: Simulation) -> InvariantViolation:
    with pytest.raises(InvariantViolation) as caught:
        invariants.replicas_within_bounds(sim, {})
    return caught.value


def test_a_leaderworkerset_group_kept_past_its_replicas_is_reported() -> None:
    sim = checked("serving/lws-hpa.yaml")
    lws = sim.controllers["LeaderWorkerSet/default/vllm"]
    assert isinstance(lws, LeaderWorkerSetController) and len(lws.groups) >= 2
    lws._replicas = len(lws.groups) - 1  # scaled down without deleting the highest group
    broken = violation(sim)
    assert (broken.invariant, broken.subject) == ("replicas-within-bounds", "LeaderWorkerSet/default/vllm")
    assert broken.detail.endswith(f"groups, outside [0, {len(lws.groups) - 1}]")


def test_an_ordered_stateful_set_scaling_down_two_pods_at_once_is_reported() -> None:
    """``processCondemned`` under ``OrderedReady`` deletes one pod past the range and waits for it to be gone:
    two being deleted at once break the bound."""
    sim = checked("serving/statefulset-hpa.yaml", duration_s=600.0)
    sts = sim.controllers["StatefulSet/serving/triton"]
    assert isinstance(sts, StatefulSetController)
    sts.scaled_down |= {"serving/triton-8", "serving/triton-9"}
    broken = violation(sim)
    assert (broken.invariant, broken.subject) == ("replicas-within-bounds", "StatefulSet/serving/triton")
    assert broken.detail == "2 pods its scale-down is deleting, outside [0, 1]"


def test_a_ray_worker_group_with_more_workers_than_it_wants_is_reported() -> None:
    sim = checked("training/raycluster-autoscaling.yaml", duration_s=600.0)
    ray = sim.controllers["RayCluster/ml/ray-gpu"]
    assert isinstance(ray, RayClusterController)
    (group,) = ray.pods.spec.groups
    ray.pods.replicas[group.name] = group.min_replicas  # wants its minimum, holds one more
    ray.pods.active.update({f"ml/ghost-{n}": group.name for n in range(ray.pods.desired(group) + 1)})
    broken = violation(sim)
    assert f"worker group {group.name} pods" in broken.detail


def test_a_scaledjob_with_more_jobs_than_its_max_replica_count_is_reported() -> None:
    sim = checked("seed-001", duration_s=240.0)  # (items in progress, Jobs running)
    wa = sim.workload_autoscalers
    ((spec, job, state),) = wa.scaled_jobs
    running = wa.active_jobs(f"{spec.namespace}/{spec.name}")
    assert running >= 1
    wa.scaled_jobs[0] = (replace(spec, max_replica_count=running - 1, min_replica_count=0), job, state)
    broken = violation(sim)
    assert broken.subject == "the ScaledJobs"
    assert (
        broken.detail == f"{running} ScaledJob/{spec.namespace}/{spec.name} Jobs, outside [0, {running - 1}]"
    )


def test_replicas_an_hpa_set_on_a_leaderworkerset_beyond_its_max_are_reported() -> None:
    sim = checked("serving/lws-hpa.yaml")
    (hpa,) = sim.workload_autoscalers.hpas
    seen: dict[str, int] = {}
    invariants.replicas_within_bounds(sim, seen)
    lws = sim.controllers["LeaderWorkerSet/default/vllm"]
    assert isinstance(lws, LeaderWorkerSetController)
    lws._replicas = hpa.hpa.spec.max_replicas + 1
    with pytest.raises(InvariantViolation) as caught:
        invariants.replicas_within_bounds(sim, seen)
    assert caught.value.subject == hpa.target and "scaled to" in caught.value.detail
