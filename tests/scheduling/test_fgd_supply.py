"""FGDSupply (``plugins.fgd_supply``): FGD (Weng et al., ATC '23, ``fgd_score.go``: ``int(100 sigmoid(dF /
1000))``, ties to the first node) whose fragmentation also counts free GPUs the node's cpu cannot feed at
the typical workload's cpu per GPU, with typical shapes weighted by the scarcity of the GPU models they
accept."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import gpufleet.scheduling.fragmentation as fragmentation_module
from conftest import gpu_node
from gpufleet.cluster.state import ClusterState
from gpufleet.kube import load_scenario
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.fragmentation import NodeFragmentation, NodeLeft, tasks_of
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.fgd import typical_pods
from gpufleet.scheduling.plugins.fgd_supply import SupplyFragmentation
from gpufleet.scheduling.profile import ProfileError, build_profile
from gpufleet.scheduling.scheduler import Scheduler
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: the typical workload: one GPU and 4 cpu (rho = 4 cpu per GPU)
TYPICAL = [{"gpus": 1, "cpu": "4", "percentage": 100}]


def gpu_pod(name: str) -> Pod:
    return Pod(name, requests={"cpu": 4000, "nvidia.com/gpu": 1})


def cpu_pod(name: str) -> Pod:
    return Pod(name, requests={"cpu": 8000})


def cluster() -> ClusterState:
    """a: 2 GPUs and 12 cpu (first in tie order); b: 2 GPUs and 40 cpu."""
    return ClusterState([gpu_node("a", 2, cpu=12), gpu_node("b", 2, cpu=40)])


def profile(policy: str) -> ProfileConfig:
    return ProfileConfig(
        plugins={"score": PluginSet((PluginRef(policy, 1000),), ("*",)), "postFilter": PluginSet((), ("*",))},
        plugin_args={policy: {"typicalPods": TYPICAL}},
    )


def test_free_gpus_the_cpu_left_cannot_feed_count_as_fragment() -> None:
    """a after an 8-cpu pod: 2 free GPUs, 4 cpu. One typical pod still fits, so FGD's F
    (``NodeGpuShareFragAmount``) is 0; F' adds 2000 - 4000 / 4 = 1000 thousandths."""
    state = cluster()
    state.assign(cpu_pod("cpu"), "a", 0.0)
    tasks = tasks_of(typical_pods({"typicalPods": TYPICAL}), include_cpu_pods=True)
    left = [NodeLeft.of(state, i) for i in range(2)]
    fgd, supply = NodeFragmentation(state, tasks), SupplyFragmentation(state, tasks)
    assert [fgd.of(i, left[i]) for i in range(2)] == [0.0, 0.0]
    assert [supply.of(i, left[i]) for i in range(2)] == pytest.approx([1000.0, 0.0])


def test_a_cpu_only_pod_keeps_off_the_node_whose_gpus_it_would_strand() -> None:
    """On a the 8-cpu pod raises F' by 1000: int(100 sigmoid(-1)) = 26; on b nothing changes (50).
    FGD sees no change on either (50, 50: the tie goes to a)."""
    state, pod = cluster(), cpu_pod("cpu")
    for policy, expected in (("FGD", [50, 50]), ("FGDSupply", [26, 50])):
        plugin = build_profile(profile(policy)).dynamic_scores[0][0]
        assert plugin.score(PodContext(pod, state), np.arange(2)).tolist() == expected, policy


def test_fgd_strands_a_gpu_that_fgdsupply_fills() -> None:
    """An 8-cpu pod then four 1-GPU 4-cpu pods on 4 GPUs and 52 cpu: FGD puts the CPU-only pod on a,
    whose second GPU then has no cpu, and the fourth GPU pod fails; FGDSupply places all five."""
    placed: dict[str, list[str | None]] = {}
    for policy in ("FGD", "FGDSupply"):
        state = cluster()
        config = SchedulerConfig("test", profiles=[profile(policy)])
        scheduler = Scheduler(config, state, GangView(state), tie_break="first")
        pods = [cpu_pod("cpu")] + [gpu_pod(f"g{i}") for i in range(4)]
        placed[policy] = [scheduler.place_once(p, 0.0) for p in pods]
    assert placed == {"FGD": ["a", "b", "b", "a", None], "FGDSupply": ["b", "a", "a", "b", "b"]}


def test_shapes_only_scarce_gpu_models_admit_weigh_more() -> None:
    """Two shapes of equal popularity, one any node admits, one only T4 nodes (2 of the 10 GPUs):
    weights 0.5 x (10 / 10)^2 and 0.5 x (10 / 2)^2, renormalised: 1/26 and 25/26."""
    state = ClusterState(
        [
            gpu_node("t4", 2, labels={"nvidia.com/gpu.product": "Tesla-T4"}),
            gpu_node("g2", 8, labels={"nvidia.com/gpu.product": "G2"}),
        ]
    )
    shapes = [{"gpus": 1, "percentage": 50}, {"gpus": 1, "gpuProducts": ["Tesla-T4"], "percentage": 50}]
    tasks = tasks_of(typical_pods({"typicalPods": shapes}), include_cpu_pods=True)
    weights = [t.weight for t in SupplyFragmentation(state, tasks).tasks]
    assert sorted(weights) == pytest.approx([1 / 26, 25 / 26])


def test_an_unconstrained_pod_keeps_off_the_scarce_model() -> None:
    """A T4 node with one GPU in use, two G2 nodes with two free GPUs; shapes: one GPU 60 %, two GPUs
    20 %, one T4 GPU 20 %. FGD fills the T4 node: it closes its 2-GPU fragment (-200: 54) while a G2
    node would lose its 2-GPU slot as much as it gives the T4 shape (0: 50). FGDSupply weighs the T4
    shape by (6 / 2)^2 (weights 0.6, 0.2, 1.8 over 2.6): the T4 node -77 (51), a G2 node -615 (64)."""
    product = "nvidia.com/gpu.product"
    state = ClusterState(
        [
            gpu_node("t4", 2, labels={product: "Tesla-T4"}),
            gpu_node("g2-0", 2, labels={product: "G2"}),
            gpu_node("g2-1", 2, labels={product: "G2"}),
        ]
    )
    state.assign(Pod("running", requests={"cpu": 1000, "nvidia.com/gpu": 1}), "t4", 0.0)
    shapes = [
        {"gpus": 1, "percentage": 60},
        {"gpus": 2, "percentage": 20},
        {"gpus": 1, "gpuProducts": ["Tesla-T4"], "percentage": 20},
    ]
    pod = Pod("any", requests={"cpu": 1000, "nvidia.com/gpu": 1})
    for policy, expected in (("FGD", [54, 50, 50]), ("FGDSupply", [51, 64, 64])):
        config = ProfileConfig(
            plugins={"score": PluginSet((PluginRef(policy, 1000),), ("*",))},
            plugin_args={policy: {"typicalPods": shapes}},
        )
        plugin = build_profile(config).dynamic_scores[0][0]
        assert plugin.score(PodContext(pod, state), np.arange(3)).tolist() == expected, policy
        scheduler = Scheduler(
            SchedulerConfig("test", profiles=[config]), state, GangView(state), tie_break="first"
        )
        assert scheduler.try_schedule(pod)[0] == ("t4" if policy == "FGD" else "g2-0")


def test_fgdsupply_is_configured_like_fgd() -> None:
    bad = ProfileConfig(
        plugins={"score": PluginSet((PluginRef("FGDSupply"),))},
        plugin_args={"FGDSupply": {"typicalPods": [{"gpus": -1}]}},
    )
    with pytest.raises(ProfileError, match=r"pluginConfig FGDSupply: args.typicalPods\[0\]: gpus >= 0"):
        build_profile(bad)


def scenario_yaml() -> str:
    nodes = "".join(
        f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status:
  capacity: {{cpu: "{cpu}", memory: 64Gi, pods: "110", nvidia.com/gpu: "2"}}
  allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110", nvidia.com/gpu: "2"}}
"""
        for name, cpu in (("a", 12), ("b", 40))
    )
    pods = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpufleet.io/submit-at: {at}}}}}
spec:
  containers:
  - name: c
    image: x
    resources: {{requests: {{cpu: "{cpu}"}}, limits: {{{limits}}}}}
"""
        for name, at, cpu, limits in [("cpu", "0s", 8, "")]
        + [(f"g{i}", "1s", 4, "nvidia.com/gpu: 1") for i in range(4)]
    )
    config = """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: FGDSupply, weight: 1}]
  pluginConfig:
  - name: FGDSupply
    args:
      typicalPods: [{gpus: 1, cpu: "4", percentage: 100}]
"""
    return nodes + pods + config


def test_fgdsupply_is_a_kube_scheduler_configuration_score_plugin(tmp_path: Path) -> None:
    """The same cluster as a scenario: the profile's FGDSupply keeps the CPU-only pod off a, and all four
    GPU pods run."""
    (tmp_path / "s.yaml").write_text(scenario_yaml())
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    assert pods["default/cpu"]["node"] == "b"
    assert sorted(pods[f"default/g{i}"]["node"] for i in range(4)) == ["a", "a", "b", "b"]


def test_a_supply_measure_made_shared_after_reading_its_nodes_gives_its_own_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FGDSupply's measure reads its nodes' facts while it weighs the shapes (``_by_scarcity``), before it
    is made ``shared``: a second one, on a cluster that lists the GPU models the other way round (its own
    facts numbered otherwise), gives on every node what an unshared one gives there."""

    monkeypatch.setattr(fragmentation_module, "_SHARED", OrderedDict())
    shapes = [{"gpus": 1, "percentage": 50}, {"gpus": 1, "gpuProducts": ["Tesla-T4"], "percentage": 50}]
    tasks = tasks_of(typical_pods({"typicalPods": shapes}), include_cpu_pods=True)

    def models(order: tuple[str, str]) -> ClusterState:
        return ClusterState(
            [gpu_node(f"n{k}", 4, labels={"nvidia.com/gpu.product": m}) for k, m in enumerate(order)]
        )

    first = SupplyFragmentation(models(("Tesla-T4", "G2")), tasks).shared()
    for i in range(2):
        first.of(i, NodeLeft.of(first.state, i))
    state = models(("G2", "Tesla-T4"))
    second, alone = SupplyFragmentation(state, tasks).shared(), SupplyFragmentation(state, tasks)
    assert [t.weight for t in second.tasks] == [t.weight for t in first.tasks]  # (one task set)
    assert [second.of(i, NodeLeft.of(state, i)) for i in range(2)] == [
        alone.of(i, NodeLeft.of(state, i)) for i in range(2)
    ]
