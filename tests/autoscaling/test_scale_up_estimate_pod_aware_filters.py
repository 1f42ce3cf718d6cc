"""cluster-autoscaler's scale-up estimate runs PodTopologySpread and InterPodAffinity on the copies of a
node group's template (``autoscaling.scale_up``): upstream's ``BinpackingNodeEstimator`` puts each pod
with ``ClusterSnapshot.SchedulePod``, which runs every filter of the scheduler framework over a
snapshot holding the cluster's nodes and pods, the template copies added so far (each its own
``kubernetes.io/hostname``, with the DaemonSet pods that would run there) and the pods the estimate
put on them (``estimator/binpacking_estimator.go``, ``simulator/clustersnapshot/predicate``)."""

from __future__ import annotations

from typing import Any

from conftest import gpu_node, gpu_pod
from conftest import scale_up_reply as up
from gpufleet.autoscaling.scale_up import PoolOption, ScaleUpSnapshot, estimate
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.plugins.inter_pod_affinity import AFFINITY_NOT_MATCH, ANTI_AFFINITY_NOT_MATCH
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME, ZONE
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())
WEB = (Requirement("app", "In", ("web",)),)


def template(zone: str) -> Node:
    """An 8-GPU template node in ``zone`` (its hostname label is the template's; each copy gets its own)."""
    return gpu_node(f"h100-{zone}-template", 8, labels={ZONE: zone})


def web_pod(name: str, gpus: int = 1, **kw: Any) -> Pod:
    return gpu_pod(name, gpus, labels={"app": "web"}, **kw)


def full_node(name: str, zone: str, *pods: Pod) -> tuple[Node, list[Pod]]:
    """A node of ``zone`` whose 8 GPUs ``pods`` fill (a pending pod that asks for a GPU fits nowhere)."""
    return gpu_node(name, 8, labels={ZONE: zone}), list(pods)


def cluster(*nodes: tuple[Node, list[Pod]]) -> ClusterState:
    state = ClusterState([node for node, _ in nodes])
    for node, pods in nodes:
        for pod in pods:
            state.assign(pod, node.name, 0.0)
    return state


def test_six_pods_with_hostname_anti_affinity_need_six_new_nodes_not_one() -> None:
    """InterPodAffinity's Filter on each template copy (``satisfyPodAntiAffinity``): a pod whose required
    anti-affinity on ``kubernetes.io/hostname`` names its own kind goes on no copy holding one already,
    and each copy is a hostname of its own (``SanitizedNodeInfo`` sets the label to the copy's name).
    Six 1-GPU pods that one 8-GPU node would hold need six new nodes."""
    anti = PodAffinity(anti_required=(PodAffinityTerm(WEB, HOSTNAME),))
    pods = [web_pod(f"web-{k}", pod_affinity=anti) for k in range(6)]
    reply = up(ClusterState([]), pods, [PoolOption("h100", template("zone-a"), room=10)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, len(reply.scale_up.pods)) == (6, 6)


def test_a_zonal_spread_counts_the_pods_of_the_existing_zone_against_the_new_nodes_zone() -> None:
    """PodTopologySpread's Filter over the snapshot (``matchNum + selfMatch - minMatchNum <= maxSkew``):
    zone-a holds two matching pods on a full node, the pool's template is in zone-b; with maxSkew 1,
    zone-b takes three of six pending pods (finding 0, 1, 2 there against a minimum of 0, 1, 2), and
    a fourth would find 3 against zone-a's 2. The option helps three pods, on one node."""
    spread = (TopologySpreadConstraint(1, ZONE, DO_NOT_SCHEDULE, WEB),)
    state = cluster(full_node("a-0", "zone-a", web_pod("old-0", 4), web_pod("old-1", 4)))
    pods = [web_pod(f"web-{k}", spread_constraints=spread) for k in range(6)]
    reply = up(state, pods, [PoolOption("h100-b", template("zone-b"), room=10)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, reply.scale_up.pods) == (
        1,
        ("default/web-0", "default/web-1", "default/web-2"),
    )


def test_a_hostname_spread_counts_the_existing_nodes_among_the_domains() -> None:
    """PodTopologySpread on hostname counts the cluster's nodes among the domains: its two full nodes
    hold one matching pod each, so with maxSkew 1 the first new node takes two pods (against a minimum
    of 0, then 1), a third would put it two above the minimum, and a second new node (a domain of 0)
    takes the rest: four 1-GPU pods need two new nodes, not one."""
    spread = (TopologySpreadConstraint(1, HOSTNAME, DO_NOT_SCHEDULE, WEB),)
    state = cluster(
        full_node("a-0", "zone-a", web_pod("old-0", 8)), full_node("a-1", "zone-a", web_pod("old-1", 8))
    )
    pods = [web_pod(f"web-{k}", spread_constraints=spread) for k in range(4)]
    reply = up(state, pods, [PoolOption("h100", template("zone-a"), room=10)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, len(reply.scale_up.pods)) == (2, 4)


def test_required_pod_affinity_on_hostname_counts_the_pods_put_on_the_new_nodes() -> None:
    """InterPodAffinity's ``satisfyPodAffinity`` over the copies: the first pod of a group that matches
    its own affinity term goes anywhere (no matching pod exists), the next only where one is, on the
    same copy; a third 4-GPU pod fits neither that full copy nor a fresh one (no matching pod there),
    so the option is one node for two pods."""
    affinity = PodAffinity(required=(PodAffinityTerm(WEB, HOSTNAME),))
    pods = [web_pod(f"web-{k}", 4, pod_affinity=affinity) for k in range(3)]
    pool = PoolOption("h100", template("zone-a"), room=10)
    found = estimate(pods, pool, ScaleUpSnapshot(ClusterState([]), PROFILE, pods, [pool]))
    assert found is not None
    assert (found.nodes, found.pods) == (1, ("default/web-0", "default/web-1"))


def test_required_zone_affinity_to_existing_pods_grows_only_the_pool_in_their_zone() -> None:
    """``satisfyPodAffinity`` counts the cluster's pods by the copies' zone: a pod that must share a zone
    with a database pod of zone-a fits a copy of zone-a's template and none of zone-b's, and when only
    zone-b's pool could grow cluster-autoscaler says why (``NotTriggerScaleUp``)."""
    db = gpu_pod("db", 8, labels={"app": "db"})
    state = cluster(full_node("a-0", "zone-a", db))
    near_db = PodAffinity(required=(PodAffinityTerm((Requirement("app", "In", ("db",)),), ZONE),))
    pod = gpu_pod("api", 1, pod_affinity=near_db)
    pool_a, pool_b = (
        PoolOption("h100-a", template("zone-a"), room=5),
        PoolOption("h100-b", template("zone-b"), room=5),
    )
    snapshot = ScaleUpSnapshot(state, PROFILE, [pod], [pool_a, pool_b])
    found_a = estimate([pod], pool_a, snapshot)
    assert found_a is not None and found_a.nodes == 1
    assert estimate([pod], pool_b, snapshot) is None
    reply = up(state, [pod], [pool_b])
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/api", f"1 {AFFINITY_NOT_MATCH}"),)


def test_a_pod_the_estimate_put_keeps_the_pods_its_anti_affinity_names_off_its_node() -> None:
    """The existing pods' anti-affinity (``satisfyExistingPodsAntiAffinity``) includes the pods the
    estimate put on a copy: a 2-GPU pod that repels ``app=web`` on its hostname goes first (the larger
    request) and the two 1-GPU web pods, which have no terms of their own, go on a second new node."""
    lonely = gpu_pod("lonely", 2, pod_affinity=PodAffinity(anti_required=(PodAffinityTerm(WEB, HOSTNAME),)))
    pods = [web_pod("web-0"), web_pod("web-1"), lonely]
    reply = up(ClusterState([]), pods, [PoolOption("h100", template("zone-a"), room=10)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, len(reply.scale_up.pods)) == (2, 3)


def test_a_pod_whose_anti_affinity_names_a_daemonset_pod_triggers_no_scale_up() -> None:
    """A template copy holds the DaemonSet pods that would run there (``BuildNodeInfoForNode``), and
    InterPodAffinity counts them: a pod that must not share a node with the node exporter fits no new
    node, and cluster-autoscaler says why."""
    exporter = Pod("node-exporter", labels={"app": "node-exporter"}, requests={"cpu": 50})
    term = PodAffinityTerm((Requirement("app", "In", ("node-exporter",)),), HOSTNAME)
    pod = gpu_pod("shy", 1, pod_affinity=PodAffinity(anti_required=(term,)))
    reply = up(ClusterState([]), [pod], [PoolOption("h100", template("zone-a"), (exporter,), room=5)])
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/shy", f"1 {ANTI_AFFINITY_NOT_MATCH}"),)
