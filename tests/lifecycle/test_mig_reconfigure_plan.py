"""The plan of a MIG configuration change on one node (``gpufleet.lifecycle.mig_reconfigure``).

Upstream: MIG Manager applies ``nvidia.com/mig.config`` to every GPU (``devices: all``) and evicts nothing;
"MIG Manager requires that no user workloads are running on the GPUs being configured" (GPU Operator docs),
so with ``drain`` the administrator evicts the pods holding the node's GPUs first, and only those.
"""

from __future__ import annotations

from gpufleet.lifecycle.mig_reconfigure import gpu_pods, plan_change, with_device_resources
from gpufleet.model.mig_configs import MigConfigChange, MigManaged
from gpufleet.model.pod import Pod

ALL_1G = ("1g.10gb",) * 7
MIG = MigManaged("H100-80GB", 1, "mixed", ALL_1G, config="all-1g.10gb")


def pod(name: str, requests: dict[str, int]) -> Pod:
    return Pod(name, requests=requests)


PODS = [
    pod("nb-1", {"nvidia.com/mig-1g.10gb": 1, "cpu": 1000}),
    pod("logger", {"cpu": 100}),
    pod("nb-0", {"nvidia.com/mig-1g.10gb": 1}),
]


def test_drain_evicts_only_the_pods_holding_the_gpus() -> None:
    plan = plan_change(MIG, ALL_1G, "all-1g.10gb", MigConfigChange(600, "all-3g.40gb"), PODS)
    assert plan.evict == ("default/nb-0", "default/nb-1")
    assert plan.layout == ("3g.40gb", "3g.40gb") and not plan.already_applied
    assert plan.resources == {"nvidia.com/mig-3g.40gb": 2}


def test_without_drain_nothing_is_evicted() -> None:
    plan = plan_change(MIG, ALL_1G, "all-1g.10gb", MigConfigChange(600, "all-3g.40gb", drain=False), PODS)
    assert plan.evict == ()
    assert gpu_pods(PODS) == ("default/nb-0", "default/nb-1")  # what MIG Manager would find busy


def test_a_layout_already_in_place_is_applied_without_draining() -> None:
    """mig-parted ``assert`` compares the devices, not the configuration's name: ``success`` at once."""
    unnamed = MigManaged("H100-80GB", 1, "mixed", ALL_1G)
    plan = plan_change(unnamed, ALL_1G, None, MigConfigChange(0, "all-1g.10gb"), PODS)
    assert plan.already_applied and plan.evict == ()
    assert plan.labels["nvidia.com/mig.config"] == "all-1g.10gb"


def test_gfd_labels_of_the_old_layout_are_dropped() -> None:
    plan = plan_change(MIG, ALL_1G, "all-1g.10gb", MigConfigChange(0, "all-3g.40gb"), ())
    assert "nvidia.com/mig-1g.10gb.count" in plan.stale_labels
    assert plan.labels["nvidia.com/mig-3g.40gb.count"] == "2"
    assert plan.labels["nvidia.com/mig.config"] == "all-3g.40gb"


def test_device_plugin_resources_are_replaced_and_the_rest_kept() -> None:
    allocatable = {"cpu": 32000, "nvidia.com/mig-1g.10gb": 7, "pods": 110}
    assert with_device_resources(allocatable, {}) == {"cpu": 32000, "pods": 110}
    assert with_device_resources(allocatable, {"nvidia.com/mig-3g.40gb": 2}) == {
        "cpu": 32000,
        "pods": 110,
        "nvidia.com/mig-3g.40gb": 2,
    }
