"""cluster-autoscaler's scale-up runs on one ``ClusterSnapshot`` (``autoscaling.scale_up.ScaleUpSnapshot``):
``RunOnce`` adds a copy of the template, with its DaemonSet pods, for every upcoming node of every node
group (``core/static_autoscaler.go``, ``addUpcomingNodesToClusterSnapshot``); ``filterOutSchedulable``
tries each pending pod on the snapshot's nodes, existing and upcoming, and adds each pod that fits to
the snapshot (``core/podlistprocessor/filter_out_schedulable.go``, ``TrySchedulePods``); the
orchestrator and ``BinpackingNodeEstimator`` fork that snapshot for each node group
(``core/scaleup/orchestrator/orchestrator.go``, ``estimator/binpacking_estimator.go``), so the upcoming
nodes and the pods the filtering put are there for every estimate and every ``NotTriggerScaleUp``
check."""

from __future__ import annotations

from typing import Any

from conftest import gpu_node, gpu_pod
from conftest import scale_up_reply as up
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from gpufleet.scheduling.plugins.inter_pod_affinity import ANTI_AFFINITY_NOT_MATCH
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME, ZONE

WEB = (Requirement("app", "In", ("web",)),)


def template(name: str, zone: str, gpus: int = 8, **kw: Any) -> Node:
    return gpu_node(name, gpus, labels={ZONE: zone}, **kw)


def web_pod(name: str, gpus: int = 1, **kw: Any) -> Pod:
    return gpu_pod(name, gpus, labels={"app": "web"}, **kw)


def test_two_hostname_anti_affine_pods_one_on_the_upcoming_node_need_one_new_node() -> None:
    """``filterOutSchedulable`` puts the first pod on the upcoming node (in the snapshot since
    ``addUpcomingNodesToClusterSnapshot``) and adds it there; the second, whose required anti-affinity
    on ``kubernetes.io/hostname`` names the first, fits no node then, and the estimate puts it on one
    fresh copy (each copy a hostname of its own): one new node, not two (the first pod needs none)
    and not zero (the upcoming node cannot hold both)."""
    anti = PodAffinity(anti_required=(PodAffinityTerm(WEB, HOSTNAME),))
    pods = [web_pod(f"web-{k}", pod_affinity=anti) for k in range(2)]
    pool = PoolOption("h100", template("h100-template", "zone-a"), room=5, upcoming=1)
    reply = up(ClusterState([]), pods, [pool])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, reply.scale_up.pods) == (1, ("default/web-1",))


def test_a_pod_put_on_an_upcoming_node_keeps_a_zone_anti_affine_pod_off_that_zones_new_nodes() -> None:
    """The pod ``filterOutSchedulable`` put on the upcoming node stays in the snapshot the estimate forks
    (``InterPodAffinity``'s ``satisfyPodAntiAffinity`` counts it): a pod that must not share a zone with
    it fits no new node of the same zone, so the group does not grow, and ``SchedulablePodGroups``'
    check on the template in that snapshot says why (``NotTriggerScaleUp``)."""
    anti = PodAffinity(anti_required=(PodAffinityTerm(WEB, ZONE),))
    pods = [web_pod(f"web-{k}", pod_affinity=anti) for k in range(2)]
    pool = PoolOption("h100-a", template("h100-a-template", "zone-a"), room=5, upcoming=1)
    reply = up(ClusterState([]), pods, [pool])
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/web-1", f"1 {ANTI_AFFINITY_NOT_MATCH}"),)


def test_a_pod_the_filtering_put_on_an_existing_node_counts_for_the_zone_spread_of_the_estimate() -> None:
    """``filterOutSchedulable`` adds the pod it placed to the snapshot (``TrySchedulePods``), and the
    estimate's PodTopologySpread counts it (``matchNum + selfMatch - minMatchNum <= maxSkew``): zone-a's
    node has room for one of four pending pods spread over zones with maxSkew 1; with that pod there,
    zone-b's new node takes two (1 and 2 against zone-a's 1), not one."""
    spread = (TopologySpreadConstraint(1, ZONE, DO_NOT_SCHEDULE, WEB),)
    state = ClusterState([template("a-0", "zone-a")])
    state.assign(gpu_pod("batch", 7, labels={"app": "batch"}), "a-0", 0.0)
    pods = [web_pod(f"web-{k}", spread_constraints=spread) for k in range(4)]
    reply = up(state, pods, [PoolOption("h100-b", template("h100-b-template", "zone-b"), room=10)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, reply.scale_up.pods) == (1, ("default/web-1", "default/web-2"))


def test_a_pod_on_one_groups_upcoming_node_is_left_out_of_anothers_estimate_and_counts_there() -> None:
    """The upcoming nodes of every group are in the one snapshot: the 1-GPU upcoming node of zone-a's
    group takes the first of four zone-spread pods (maxSkew 1), which then triggers nothing; zone-b's
    estimate, in a fork of that snapshot, places the others against it: two on one node (1 and 2
    against zone-a's 1), not all three."""
    spread = (TopologySpreadConstraint(1, ZONE, DO_NOT_SCHEDULE, WEB),)
    pods = [web_pod(f"web-{k}", spread_constraints=spread) for k in range(4)]
    small_a = PoolOption("small-a", template("small-a-template", "zone-a", gpus=1), upcoming=1)
    big_b = PoolOption("h100-b", template("h100-b-template", "zone-b"), room=10)
    reply = up(ClusterState([]), pods, [small_a, big_b])
    assert reply.scale_up is not None
    assert (reply.scale_up.group, reply.scale_up.nodes) == ("h100-b", 1)
    assert reply.scale_up.pods == ("default/web-1", "default/web-2")


def test_an_upcoming_node_of_another_group_is_a_hostname_domain_in_the_estimate() -> None:
    """PodTopologySpread counts every node of the snapshot as a domain (a taint does not take a node
    out, ``nodeTaintsPolicy: Ignore``), the upcoming node of a tainted CPU group included, though no
    pod goes there: with that empty hostname the minimum stays 0, so with maxSkew 1 each new node of
    the GPU group takes one of two hostname-spread pods (two nodes, where without it one node held
    both)."""
    spread = (TopologySpreadConstraint(1, HOSTNAME, DO_NOT_SCHEDULE, WEB),)
    pods = [web_pod(f"web-{k}", spread_constraints=spread) for k in range(2)]
    cpu_taint = (Taint("dedicated", "cpu", "NoSchedule"),)
    cpu = PoolOption("cpu", template("cpu-template", "zone-a", gpus=0, taints=cpu_taint), upcoming=1)
    gpu = PoolOption("h100", template("h100-template", "zone-a"), room=10)
    reply = up(ClusterState([]), pods, [cpu, gpu])
    assert reply.scale_up is not None
    assert (reply.scale_up.group, reply.scale_up.nodes, len(reply.scale_up.pods)) == ("h100", 2, 2)
