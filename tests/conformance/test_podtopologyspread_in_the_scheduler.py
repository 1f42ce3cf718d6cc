"""PodTopologySpread inside gpufleet's scheduler: the cycle and its message, preemption's dry run
(``PreFilterExtensions.RemovePod``), the plugin args (``ValidatePodTopologySpreadArgs``), and the
system default constraints for the pods of gpufleet's Deployment controller."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pod_builders_affinity import filter_statuses, in_values, node, pod, scores, spread

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_config import ProfileConfig, SchedulerConfig
from gpufleet.scheduling.framework import SUCCESS, Code, PodContext, Status
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.pod_topology_spread import (
    CONSTRAINTS_NOT_MATCH,
    NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
)
from gpufleet.scheduling.pod_aware import PodCycle
from gpufleet.scheduling.profile import ProfileError, build_profile
from gpufleet.scheduling.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def zoned(name: str, zone: str | None) -> Node:
    labels = {HOST: name, **({ZONE: zone} if zone else {})}
    return node(name, labels)


def scheduler(nodes: list[Node], placed: Sequence[Pod] = ()) -> Scheduler:
    state = ClusterState(nodes)
    for p in placed:
        assert p.node_name is not None
        state.assign(p, p.node_name, 0.0)
    return Scheduler(SchedulerConfig("test", [ProfileConfig()]), state, GangView(state))


def web(name: str, node_name: str | None = None, **constraint: object) -> Pod:
    spec = {
        "topologySpreadConstraints": [spread(1, ZONE, "DoNotSchedule", in_values("app", "web"), **constraint)]
    }
    return pod(name, labels={"app": "web"}, spec=spec, node=node_name)


def test_do_not_schedule_keeps_zones_within_max_skew() -> None:
    """filtering.go: ``matchNum + selfMatchNum - minMatchNum > maxSkew`` rejects zone a."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b")], [web("w0", "a1")])
    assert s.decide(web("w1")).nodes == ("b1",)


def test_nodes_without_the_topology_key_are_unresolvable() -> None:
    """``ErrReasonNodeLabelNotMatch`` is unresolvable, ``ErrReasonConstraintsNotMatch`` not."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b"), zoned("x", None)], [web("w0", "a1"), web("w1", "a1")])
    assert s.decide(web("w2")).nodes == ("b1",)
    statuses = filter_statuses(
        PodTopologySpread(),
        web("w2"),
        [zoned("a1", "a"), zoned("b1", "b"), zoned("x", None)],
        [web("w0", "a1")],
    )
    assert statuses == [
        Status(Code.UNSCHEDULABLE, (CONSTRAINTS_NOT_MATCH,)),
        SUCCESS,
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NODE_LABEL_NOT_MATCH,)),
    ]


def test_the_failed_scheduling_message_counts_both_reasons() -> None:
    s = scheduler([zoned("a1", "a"), zoned("x", None)], [web("w0", "a1")])
    node_name, message = s.try_schedule(web("w1", minDomains=2))
    assert node_name is None
    assert message.startswith(
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label)."
    )


def test_min_domains_counts_min_match_as_zero_while_domains_are_missing() -> None:
    """``minMatchNum`` is 0 while fewer than ``minDomains`` domains exist."""
    nodes = [zoned("a1", "a"), zoned("b1", "b")]
    existing = [web("w0", "a1"), web("w1", "b1")]
    assert filter_statuses(PodTopologySpread(), web("w2"), nodes, existing) == [SUCCESS, SUCCESS]
    assert filter_statuses(PodTopologySpread(), web("w2", minDomains=3), nodes, existing) == [
        Status(Code.UNSCHEDULABLE, (CONSTRAINTS_NOT_MATCH,)),
        Status(Code.UNSCHEDULABLE, (CONSTRAINTS_NOT_MATCH,)),
    ]


def test_node_taints_policy_honor_leaves_tainted_nodes_out_of_the_count() -> None:
    """``matchNodeInclusionPolicies``: with Honor, the tainted zone's domain does not exist."""
    tainted = zoned("c1", "c")
    tainted.taints = (Taint("dedicated", "x", "NoSchedule"),)
    nodes = [zoned("a1", "a"), zoned("b1", "b"), tainted]
    existing = [web("w0", "a1"), web("w1", "b1")]
    ignore = filter_statuses(PodTopologySpread(), web("w2"), nodes, existing)
    honor = filter_statuses(PodTopologySpread(), web("w2", nodeTaintsPolicy="Honor"), nodes, existing)
    assert ignore[:2] == [Status(Code.UNSCHEDULABLE, (CONSTRAINTS_NOT_MATCH,))] * 2
    assert honor[:2] == [SUCCESS, SUCCESS]


def test_preemption_counts_the_zone_without_its_victim() -> None:
    """DefaultPreemption's dry run: removing a lower-priority matching pod lowers the zone's count."""
    low = web("w0", "a1")
    s = scheduler([zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")], [low])
    for k, target in enumerate(("a2", "b1")):
        s.state.assign(web(f"hi{k}", target), target, 0.0)
        s.state.assignments[f"default/hi{k}"].pod.priority = 100
    incoming = web("w9")
    incoming.priority = 50
    s.state.set_allocatable("b1", {"pods": 1, "cpu": 64000})
    decision = s.decide(incoming)
    assert decision.nominations == (("a1", ("default/w0",)),)


def test_schedule_anyway_prefers_the_emptier_zone() -> None:
    """scoring.go: ``count * log(domains + 2) + maxSkew - 1``, normalised ``100 * (max + min - s) / max``."""
    spec = {"topologySpreadConstraints": [spread(1, ZONE, "ScheduleAnyway", in_values("app", "web"))]}
    incoming = pod("w9", labels={"app": "web"}, spec=spec)
    nodes = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")]
    existing = [web("w0", "a1"), web("w1", "a2")]
    # zone a: 2 * ln(4) = 2.77 -> 3; zone b: 0 -> normalised 100 * (3 + 0 - s) / 3
    assert scores(PodTopologySpread(), incoming, nodes, existing) == [0, 0, 100]


def test_system_defaults_spread_the_pods_of_a_deployment_over_hosts() -> None:
    """``systemDefaultConstraints`` (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) with the owning
    ReplicaSet's selector: gpufleet's Deployment pods select each other by their labels."""
    owner = OwnerRef("Deployment", "web")
    replica = pod("web-1", labels={"app": "web"}, owner=owner)
    nodes = [zoned("h1", None), zoned("h2", None)]
    existing = [pod("web-0", labels={"app": "web"}, owner=owner, node="h1")]
    # hostname: h1 1 * ln(4) + 2 = 3.39 -> 3, h2 2; normalised 100 * (3 + 2 - s) / 3
    assert scores(PodTopologySpread(), replica, nodes, existing) == [66, 100]
    bare = pod("bare", labels={"app": "web"})
    assert scores(PodTopologySpread(), bare, nodes, existing) == [0, 0]
    listed = PodTopologySpread.from_args({"defaultingType": "List"})
    assert scores(listed, replica, nodes, existing) == [0, 0]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"defaultingType": "Sometimes"},
            'defaultingType: Unsupported value: "Sometimes": supported values: "List", "System"',
        ),
        (
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": ZONE,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                    }
                ],
            },
            "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
            "as they deduced for each pod",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            'defaultConstraints[1]: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"',
        ),
    ],
)
def test_plugin_args_are_validated_as_upstream(args: dict[str, object], error: str) -> None:
    """``ValidatePodTopologySpreadArgs``: kube-scheduler refuses to start."""
    with pytest.raises(ProfileError) as raised:
        build_profile(ProfileConfig(plugin_args={"PodTopologySpread": args}))
    assert str(raised.value) == f"pluginConfig PodTopologySpread: {error}"


def test_pods_without_constraints_stay_on_the_cached_path() -> None:
    """A bare pod without spread constraints or affinity: every pod-aware plugin skips it."""
    s = scheduler([zoned("a1", "a")])
    profile = s.profiles["default-scheduler"]
    assert PodCycle.start(profile.pod_filters, profile.pod_scores, PodContext(pod("bare"), s.state)) is None


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            {"topologySpreadConstraints": [spread(0, ZONE, "DoNotSchedule", None)]},
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        ),
        (
            {"topologySpreadConstraints": [spread(1, ZONE, "ScheduleAnyway", None, minDomains=2)]},
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ),
        (
            {
                "topologySpreadConstraints": [
                    spread(1, ZONE, "DoNotSchedule", None, nodeTaintsPolicy="Always")
                ]
            },
            'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Always": '
            'supported values: "Honor", "Ignore"',
        ),
        (
            {
                "affinity": {
                    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": ""}]}
                }
            },
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
            "Required value: can not be empty",
        ),
    ],
)
def test_bad_constraints_are_the_api_servers_errors(spec: dict[str, object], error: str) -> None:
    """``validateTopologySpreadConstraints``, ``validatePodAffinityTerm``: one line naming file and field."""
    with pytest.raises(ValueError) as raised:
        pod("p", spec=spec)
    assert f"upstream-case.yaml: document 1: {error}" in str(raised.value)
