"""Properties of the autoscalers over random clusters and load (hypothesis).

- an HPA keeps its Deployment's replicas within [minReplicas, maxReplicas] (HPA controller
  ``normalizeDesiredReplicas``), a ScaledObject within [0, maxReplicaCount];
- cluster-autoscaler never drains a node while a pod annotated safe-to-evict "false", or a pod
  whose PodDisruptionBudget allows no disruption, runs there (FAQ "What types of pods can
  prevent CA from removing a node?");
- every pod's stages add up to its pending-to-working time.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.control.cluster_autoscaler_actuation import disruptions_allowed
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricTarget,
    PodsMetricSource,
)
from gpufleet.model.load import Traffic
from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import NodePool, SimulationSettings
from gpufleet.model.workloads import Created, Deployment, Job
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"
GI = 2**30
SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def pool(name: str, gpus: int, max_nodes: int) -> NodePool:
    template = Node(f"{name}-t", capacity={"cpu": 32_000, "memory": 128 * GI, "pods": 110, GPU: gpus})
    return NodePool(
        name,
        template,
        min=0,
        max=max_nodes,
        price_per_hour=1.0,
        provisioning=(("boot", "60s"), ("devicePlugin", "30s")),
    )


jobs_strategy = st.lists(
    st.tuples(
        st.integers(0, 3000),  # submit time
        st.sampled_from([1, 2, 4]),  # GPUs
        st.integers(300, 5000),  # duration
        st.booleans(),  # safe-to-evict "false"
        st.sampled_from(["a", "b"]),  # label for the budget
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(
    jobs=jobs_strategy,
    max_nodes=st.integers(1, 4),
    min_replicas=st.integers(1, 3),
    spread=st.integers(0, 4),
    rps=st.lists(st.integers(0, 80), min_size=1, max_size=4),
    budget_min=st.integers(0, 3),
)
def test_autoscalers_respect_bounds_and_blockers(
    jobs: list[tuple[int, int, int, bool, str]],
    max_nodes: int,
    min_replicas: int,
    spread: int,
    rps: list[int],
    budget_min: int,
) -> None:
    max_replicas = min_replicas + spread
    job_list = []
    for k, (at, gpus, duration, pinned, team) in enumerate(jobs):
        template = Pod(
            "",
            labels={"team": team},
            requests={"cpu": 2000, "memory": 8 * GI, GPU: gpus},
            annotations={SAFE: "false"} if pinned else {},
            restart_policy="Never",
            behavior=Behavior(duration_s=float(duration)),
        )
        job_list.append(Job(f"job-{k}", "default", template, created=Created(float(at), k)))
    server = Pod("", labels={"app": "srv"}, requests={"cpu": 1000, "memory": 4 * GI, GPU: 1})
    deployment = Deployment("srv", "default", server, replicas=1, created=Created(0.0, len(jobs)))
    hpa = HorizontalPodAutoscalerSpec(
        CrossVersionObjectReference("Deployment", "srv", "apps/v1"),
        max_replicas,
        min_replicas,
        (
            PodsMetricSource(
                MetricIdentifier("DCGM_FI_DEV_GPU_UTIL"), MetricTarget("AverageValue", average_value=70_000)
            ),
        ),
    )
    traffic = Traffic("t", "default", "srv", tuple((600.0 * i, float(v)) for i, v in enumerate(rps)), 10.0)
    budget = DisruptionBudget("default", "team-a", (("team", "a"),), min_available=budget_min)
    scenario = Scenario(
        node_pools=[pool("big", 4, max_nodes), pool("small", 1, max_nodes)],
        jobs=job_list,
        deployments=[deployment],
        hpas=[("default/srv", hpa)],
        traffic=[traffic],
        budgets=[budget],
        simulation=SimulationSettings(duration_s=3 * 3600.0, sample_interval_s=60.0),
    )
    sim = Simulation(scenario)
    drains: list[str] = []
    original = sim.cordon

    def checked_cordon(name: str, unschedulable: bool) -> None:
        if not unschedulable:
            return original(name, unschedulable)
        allowed = disruptions_allowed(sim.autoscaler.port)
        for a in sim.state.pods_on[sim.state.index[name]].values():
            assert a.pod.annotations.get(SAFE) != "false", f"{name} drained under {a.pod.key}"
            if budget.covers(a.pod):
                assert allowed["default/team-a"] >= 1, f"{name} drained past PDB under {a.pod.key}"
        drains.append(name)
        return original(name, unschedulable)

    sim.cordon = checked_cordon  # type: ignore[method-assign]
    sim.run()
    summary: dict[str, Any] = build_summary(sim)
    replicas = summary["timeline"]["replicas"]["Deployment/default/srv"]
    assert all(min_replicas <= r <= max_replicas for r in replicas)
    for name, series in summary["timeline"]["nodes_by_pool"].items():
        assert max(series) <= max_nodes, name
    for pod in summary["pods"]:
        if pod["working_s"] is not None:
            assert sum(pod["stages"].values()) == pytest.approx(pod["working_s"] - pod["created_s"], abs=1e-6)
