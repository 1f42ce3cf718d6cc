"""cluster-autoscaler's decisions request in, reply out (``autoscaling.cluster_autoscaler``), without a
simulator: what ``RunOnce`` decides from the cluster as it is (``core/static_autoscaler.go``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from conftest import gpu_node, gpu_pod, scale_down_with
from conftest import scale_up_reply as up
from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownReply,
    ScaleUpRequest,
    WarmGroup,
    keep_warm,
    scale_up,
)
from gpufleet.autoscaling.scale_down import UtilizationRule
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.host_ports import HostPort
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())
TEMPLATE = gpu_node("h100-template", 8)


def test_pods_that_fit_on_existing_nodes_need_no_scale_up() -> None:
    """filterOutSchedulable: a pending pod that fits on a node now triggers nothing."""
    state = ClusterState([gpu_node("a", 8)])
    reply = up(state, [gpu_pod("p", 4)], [PoolOption("h100", TEMPLATE, room=3)])
    assert reply.scale_up is None and reply.not_triggered == ()


def test_pending_pods_grow_the_group_by_the_nodes_they_pack_into() -> None:
    """binpacking_estimator.go: two 8-GPU pods and a 4-GPU pod need three template nodes... two 8s
    and the 4 packed: first-fit decreasing."""
    state = ClusterState([])
    pods = [gpu_pod("big-0", 8), gpu_pod("big-1", 8), gpu_pod("small", 4)]
    reply = up(state, pods, [PoolOption("h100", TEMPLATE, room=5)])
    assert reply.scale_up is not None
    assert (reply.scale_up.group, reply.scale_up.nodes) == ("h100", 3)


def test_the_estimate_places_pods_in_decreasing_order_of_cpu_and_memory_not_gpus() -> None:
    """``DecreasingPodOrderer.calculatePodScore``: a pod's share of the template's cpu plus its share of
    the memory orders the estimate, GPUs not counted. Three 64-cpu 1-GPU pods go first, one per node,
    and the two 32-cpu 4-GPU pods then fit beside two of them: three nodes. (Counting GPUs put the 4-GPU
    pods first on one node and needed four.)"""
    pods = [gpu_pod(f"etl-{k}", 1, cpu=64, mem_gi=8) for k in range(3)]
    pods += [gpu_pod(f"train-{k}", 4, cpu=32, mem_gi=8) for k in range(2)]
    reply = up(ClusterState([]), pods, [PoolOption("h100", TEMPLATE, room=10)])
    assert reply.scale_up is not None and reply.scale_up.nodes == 3


def test_pods_that_ask_only_for_gpus_tie_and_the_larger_gpu_ask_goes_first() -> None:
    """Pods with no cpu or memory request all score 0 with ``DecreasingPodOrderer``, and upstream sets no
    order among them; gpufleet puts the larger share of the template first: the three 8-GPU servers get
    the pool's three nodes, the two 1-GPU pods listed before them do not."""
    pods = [Pod(f"embed-{k}", requests={"nvidia.com/gpu": 1}) for k in range(2)]
    pods += [Pod(f"llm-{k}", requests={"nvidia.com/gpu": 8}) for k in range(3)]
    reply = up(ClusterState([]), pods, [PoolOption("h100", TEMPLATE, room=3)])
    assert reply.scale_up is not None
    assert reply.scale_up.pods == ("default/llm-0", "default/llm-1", "default/llm-2")


EXPORTER_PORT = (HostPort("0.0.0.0", "TCP", 9400),)
DAEMONS = (
    Pod("dcgm-exporter", requests={"cpu": 100}, host_ports=EXPORTER_PORT),
    Pod("device-plugin", requests={"cpu": 50}),
    Pod("node-exporter", requests={"cpu": 50}),
)


def test_each_daemonset_pod_on_the_template_takes_a_pod_slot() -> None:
    """The estimate's template ``NodeInfo`` holds every DaemonSet pod that would run there
    (``simulator.BuildNodeInfoForNode``): three of them on a node of 4 pods leave room for one."""
    template = replace(TEMPLATE, capacity={**TEMPLATE.capacity, "pods": 4}, allocatable={})
    pods = [gpu_pod(f"p-{k}", 1) for k in range(2)]
    reply = up(ClusterState([]), pods, [PoolOption("h100", template, DAEMONS, room=5)])
    assert reply.scale_up is not None and reply.scale_up.nodes == 2


def test_a_pod_whose_host_port_a_daemonset_pod_binds_triggers_no_scale_up() -> None:
    """``SchedulePod`` on the template copy runs NodePorts against the DaemonSet pods already there: a
    second exporter on 9400 fits no new node, and cluster-autoscaler says why."""
    exporter = gpu_pod("exporter", 0, cpu=1, mem_gi=1, host_ports=EXPORTER_PORT)
    reply = up(ClusterState([]), [exporter], [PoolOption("h100", TEMPLATE, DAEMONS, room=5)])
    assert reply.scale_up is None
    assert reply.not_triggered == (
        ("default/exporter", "1 node(s) didn't have free ports for the requested pod ports"),
    )


def test_a_pod_no_group_can_take_gets_its_not_triggered_reason_once() -> None:
    state = ClusterState([])
    options = [PoolOption("h100", TEMPLATE, room=0)]
    reply = up(state, [gpu_pod("huge", 16)], options)
    assert reply.not_triggered == (("default/huge", "1 max node group size reached"),)
    again = up(state, [gpu_pod("huge", 16)], options, said={"default/huge": "1 max node group size reached"})
    assert again.not_triggered == ()


def test_a_group_in_backoff_at_its_max_size_says_backoff_as_upstream_checks_it_first() -> None:
    """``filterValidScaleUpNodeGroups`` asks ``IsNodeGroupReadyToScaleUp`` (backoff) before the max size."""
    request = ScaleUpRequest(
        0.0, ClusterState([]), PROFILE, [gpu_pod("huge", 16)], [PoolOption("h100", TEMPLATE, room=0)],
        frozenset({"h100"}), "least-waste", np.random.default_rng(0), frozenset(), False,
    )  # fmt: skip
    assert scale_up(request).not_triggered == (("default/huge", "1 in backoff after failed scale-up"),)


def down(state: ClusterState, **kw: Any) -> ScaleDownReply:
    candidates = [Candidate(n, "h100", 2, 0) for n in ("h100-0", "h100-1")]
    return scale_down_with(state, kw.pop("candidates", candidates), **({"now": 700.0} | kw))


def test_an_underused_node_whose_pods_fit_elsewhere_goes_after_the_unneeded_time() -> None:
    """Its pod fits on a node that stays (``h100-2``, not a candidate): upstream's planner keeps each removal
    it found possible for the next candidate's simulation (``persistSuccessfulSimulations``), so a pod that
    fit only on the empty node deleted beside it would keep its node
    (``test_a_drain_whose_pods_only_fit_on_an_empty_node_deleted_beside_it_waits``)."""
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8), gpu_node("h100-2", 8)])
    job_pod = gpu_pod("train-0", 2, owner=OwnerRef("Job", "train"))
    state.assign(job_pod, "h100-1", 0.0)
    state.assign(gpu_pod("serve-0", 6, owner=OwnerRef("Job", "serve")), "h100-2", 0.0)
    first = down(state)
    assert first.unneeded_since == {"h100-0": 700.0, "h100-1": 700.0} and first.remove == ()
    early = down(state, now=1300.0, unneeded_since=first.unneeded_since)  # unneeded for 600 s, not more
    assert early.remove == ()
    ripe = down(state, now=1310.0, unneeded_since=first.unneeded_since)
    # the empty node and one node to drain (its pod fits on another node), as RunOnce removes them
    assert [c.node for c in ripe.remove] == ["h100-0", "h100-1"]


@pytest.mark.parametrize(
    ("rule", "unneeded"),
    [
        (UtilizationRule(), {"cpu-0"}),  # GPU 5/8 = 0.625 above 0.5; cpu 40/96 = 0.42 below
        (UtilizationRule(gpu_threshold=0.7), {"cpu-0", "h100-0"}),
        (UtilizationRule(threshold=0.4, gpu_threshold=0.7), {"h100-0"}),
    ],
)
def test_a_gpu_node_is_judged_by_the_gpu_threshold_and_its_gpus_alone(
    rule: UtilizationRule, unneeded: set[str]
) -> None:
    """``isNodeAtOrBelowUtilizationThreshold``: a node with a GPU config takes
    ``--scale-down-gpu-utilization-threshold`` and ``utilization.Calculate`` its GPU share alone; the
    others ``--scale-down-utilization-threshold`` and the larger of cpu and memory."""
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8), gpu_node("cpu-0", 0)])
    state.assign(gpu_pod("train-0", 5, cpu=90, owner=OwnerRef("Job", "train")), "h100-0", 0.0)
    state.assign(gpu_pod("etl-0", 0, cpu=40, mem_gi=64, owner=OwnerRef("Job", "etl")), "cpu-0", 0.0)
    candidates = [Candidate(n, "pool", 3, 0) for n in ("cpu-0", "h100-0")]
    reply = down(state, candidates=candidates, utilization=rule)
    assert set(reply.unneeded_since) == unneeded


def test_a_group_at_its_min_keeps_its_nodes() -> None:
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    reply = down(
        state, now=1300.0, unneeded_since={"h100-0": 0.0, "h100-1": 0.0},
        candidates=[Candidate(n, "h100", 2, 1) for n in ("h100-0", "h100-1")],
    )  # fmt: skip
    assert [c.node for c in reply.remove] == ["h100-0"]


def test_no_scale_down_within_the_delay_after_a_scale_up() -> None:
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    reply = down(state, now=1300.0, last_scale_up_s=1000.0, unneeded_since={"h100-0": 0.0})
    assert reply.remove == ()


def test_warm_groups_start_what_their_warm_pool_lacks_within_their_max() -> None:
    state = ClusterState([gpu_node("l4-0", 1)])
    state.assign(gpu_pod("serve-0", 1, owner=OwnerRef("Deployment", "serve")), "l4-0", 0.0)
    reply = keep_warm(
        [WarmGroup("l4", warm=2, limit=3, nodes=2, warm_nodes=("l4-0", "l4-9"), coming=0)], state
    )
    assert reply.used == ("l4-0", "l4-9")  # a pod took l4-0; l4-9 is gone
    assert reply.launch == (("l4", 1),)  # two wanted, room for one under max


def test_an_unhealthy_group_is_not_ready_for_scale_up_before_its_backoff_is_asked() -> None:
    """``NodeGroupScaleUpSafety``: an unhealthy group (``IsNodeGroupHealthy``) is skipped, ``not ready for
    scale-up``, whether or not it is backed off too (health decides the reason first); the pod goes to
    the healthy group."""
    options = [PoolOption("a", TEMPLATE, room=3), PoolOption("b", TEMPLATE, room=3)]

    def request(backed_off: frozenset[str], groups: list[PoolOption]) -> ScaleUpRequest:
        return ScaleUpRequest(
            0.0, ClusterState([]), PROFILE, [gpu_pod("train", 8)], groups, backed_off, "least-waste",
            np.random.default_rng(0), frozenset(), False, unhealthy=frozenset({"a"}),
        )  # fmt: skip

    grown = scale_up(request(frozenset(), options)).scale_up
    assert grown is not None and grown.split == (("b", 1),)
    for backed_off in (frozenset(), frozenset({"a"})):
        reply = scale_up(request(backed_off, options[:1]))
        assert reply.scale_up is None
        assert reply.not_triggered == (("default/train", "1 not ready for scale-up"),)
