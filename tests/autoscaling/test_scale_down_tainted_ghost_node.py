"""The node a drain simulation removes stays in the snapshot as a pod-less ghost tainted
``ToBeDeletedByClusterAutoscaler:NoSchedule``, as cluster-autoscaler 1.34.5 leaves it
(``simulator/cluster.go``, ``RemovalSimulator.findPlaceFor`` -> ``replaceWithTaintedGhostNode``): a
topology spread constraint with ``nodeTaintsPolicy: Honor`` that does not tolerate the taint stops counting
the ghost (``matchNodeInclusionPolicies``), so its empty domain no longer holds the minimum at 0; under the
default ``Ignore`` the ghost's empty domain still counts. A domain another counted node keeps stays."""

from __future__ import annotations

from dataclasses import replace

from gpufleet.autoscaling.scale_down import PlacementBase, UnremovableReason, simulate_removal
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Toleration
from gpufleet.model.pod import OwnerRef, Pod, Requirement
from gpufleet.model.pod_affinity import DO_NOT_SCHEDULE, HONOR, TopologySpreadConstraint
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
APP = (Requirement("app", "In", ("web",)),)


def _verdict(
    constraint: TopologySpreadConstraint,
    zones: tuple[str, ...] = (),
    tolerations: tuple[Toleration, ...] = (),
) -> UnremovableReason | None:
    """Node n1's removal, with one spread pod on each of n1..n<k> (1 cpu of 8 each)."""
    count = len(zones) or 3
    nodes = [
        Node(
            f"n{k}",
            {ZONE: zones[k - 1]} if zones else {},
            capacity={"cpu": 8000, "memory": 1 << 30, "pods": 110},
        )
        for k in range(1, count + 1)
    ]
    state = ClusterState(nodes)
    for k in range(1, count + 1):
        pod = Pod(
            f"web-{k}",
            labels={"app": "web"},
            requests={"cpu": 1000},
            owner=OwnerRef("ReplicaSet", "web"),
            spread_constraints=(constraint,),
            tolerations=tolerations,
        )
        state.assign(pod, f"n{k}", 0.0)
    verdict = simulate_removal(
        state, 0, build_profile(ProfileConfig()), [], {}, set(), PlacementBase(state, set())
    )
    return None if verdict.why is None else verdict.why.reason


SPREAD = TopologySpreadConstraint(1, HOST, DO_NOT_SCHEDULE, APP, min_domains=2)


def test_honor_drops_the_tainted_ghost_domain() -> None:
    """Hostname spread, maxSkew 1, minDomains 2: with the ghost counted the skew is 2 (n2 or n3 at 2 against
    the ghost's 0); without it the two domains left are at 2 and 1."""
    assert _verdict(replace(SPREAD, node_taints_policy=HONOR)) is None


def test_ignore_keeps_the_ghost_domain() -> None:
    assert _verdict(SPREAD) == UnremovableReason.NO_PLACE_TO_MOVE_PODS


def test_a_pod_tolerating_the_taint_still_counts_the_ghost() -> None:
    tolerate = (Toleration("ToBeDeletedByClusterAutoscaler", operator="Exists"),)
    assert _verdict(replace(SPREAD, node_taints_policy=HONOR), tolerations=tolerate) == (
        UnremovableReason.NO_PLACE_TO_MOVE_PODS
    )


def test_a_domain_another_node_keeps_stays() -> None:
    """Zone spread: n1 and n2 in zone a, n3 in b. The ghost leaves zone a counted through n2, so the pod goes
    to n2 (a: 2, b: 1) either way."""
    honor = replace(SPREAD, topology_key=ZONE, node_taints_policy=HONOR)
    assert _verdict(honor, zones=("a", "a", "b")) is None
