"""cluster-autoscaler 1.34's own binpacking estimator table (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/estimator/binpacking_estimator_test.go``, ``TestBinpackingEstimate``), case by
case, held against gpufleet's scale-up estimate (``autoscaling.scale_up.estimate``). As upstream, the
snapshot holds one node of its own (``oldnode``: 100m cpu, 100 MiB, 10 pods, zone ``zone-jupiter``)
and the template is ``makeNode(millicores, memory, 10, "template", "zone-mars")``; the pods are
ordered by ``DecreasingPodOrderer`` and the limiter is a ``ThresholdBasedEstimationLimiter`` over one
``StaticThreshold(maxNodes)`` (0: no limit), which gpufleet takes as the pool's room. Upstream's
equivalence groups repeat one pod; here each copy has a name of its own (``ca_builders``), and the
estimate takes pods alike that come one after another as one group. The file's
``BenchmarkBinpackingEstimate`` is a benchmark, not a test, and is not ported."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ca_builders import binpacking_estimate, build_test_pod

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import DO_NOT_SCHEDULE, TopologySpreadConstraint
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME, ZONE

MIB = 1024 * 1024


def _make_node(cpu: int, mem: int, pods: int, name: str, zone: str) -> Node:
    """``makeNode(cpu, mem, podCount, name, zone)``: ``mem`` in MiB, hostname and zone labels, capacity
    and allocatable alike."""
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return Node(name, labels=labels, capacity={"cpu": cpu, "memory": mem * MIB, "pods": pods})


def _estimatee(
    millicpu: int, mem: int, host_port: int = 0, max_skew: tuple[int, str, int] | None = None
) -> Pod:
    """``BuildTestPod("estimatee", millicpu, mem, WithNamespace("universe"), WithLabels({"app":
    "estimatee"}))``, with ``WithHostPort(host_port)`` and ``WithMaxSkew(*max_skew)``: one spread
    constraint, DoNotSchedule, of that maxSkew, topology key and minDomains, selecting
    ``app=estimatee``."""
    pod = build_test_pod(
        "estimatee", millicpu, mem, namespace="universe", labels={"app": "estimatee"}, host_port=host_port
    )
    if max_skew is None:
        return pod
    skew, key, min_domains = max_skew
    selector = (Requirement("app", "In", ("estimatee",)),)
    constraint = TopologySpreadConstraint(skew, key, DO_NOT_SCHEDULE, selector, min_domains)
    return replace(pod, spread_constraints=(constraint,))


OLD_NODE = _make_node(100, 100, 10, "oldnode", "zone-jupiter")
HIGH_RESOURCE_GROUP = (_estimatee(500, 1000), 10)


def _case(
    name: str,
    millicores: int = 0,
    memory: int = 0,
    groups: list[tuple[Pod, int]] | None = None,
    nodes: int = 0,
    pods: int = 0,
    max_nodes: int = 0,
    processed: list[str] | None = None,
    skip: str = "",
) -> object:
    marks = [pytest.mark.skip(reason=skip)] if skip else []
    template = _make_node(millicores, memory, 10, "template", "zone-mars")
    return pytest.param(
        template,
        groups or [],
        max_nodes,
        (nodes, pods, processed),
        id=f"TestBinpackingEstimate/{name}",
        marks=marks,
    )


CASES = [
    _case(
        "simple resource-based binpacking",
        350 * 3 - 50,
        2 * 1000,
        [(_estimatee(350, 1000), 10)],
        nodes=5,
        pods=10,
    ),
    _case("pods-per-node bound binpacking", 10000, 20000, [(_estimatee(10, 100), 20)], nodes=2, pods=20),
    _case(
        "hostport conflict forces pod-per-node",
        1000,
        5000,
        [(_estimatee(200, 1000, host_port=5555), 8)],
        nodes=8,
        pods=8,
    ),
    _case(
        "limiter cuts binpacking", 1000, 5000, [(_estimatee(500, 1000), 20)], nodes=5, pods=10, max_nodes=5
    ),
    # the high-resource group is given second and processed first: the pods placed are all of it
    _case(
        "decreasing ordered pods are processed first",
        1000,
        5000,
        [(_estimatee(50, 1000), 10), HIGH_RESOURCE_GROUP],
        nodes=5,
        pods=10,
        max_nodes=5,
        processed=[f"estimatee-1-{k}" for k in range(10)],
    ),
    _case(
        "hostname topology spreading with maxSkew=2 forces 2 pods/node",
        1000,
        5000,
        [(_estimatee(200, 200, max_skew=(2, HOSTNAME, 1)), 8)],
        nodes=4,
        pods=8,
    ),
    # the third pod fails on the new node's zone, and on a second new node of the same zone
    _case(
        "zonal topology spreading with maxSkew=2 only allows 2 pods to schedule",
        1000,
        5000,
        [(_estimatee(20, 100, max_skew=(2, ZONE, 1)), 8)],
        nodes=1,
        pods=2,
    ),
    # fewer than 3 domains count the global minimum as 0; a pod the last new node turns away by the
    # hostname spread goes to another node, ``oldnode`` among them, which is then counted as upstream
    # counts it (``newNodesWithPods``): two new nodes and oldnode, 4 pods each
    _case(
        "hostname topology spreading with maxSkew=1 with a large scaleup handles scheduling pods "
        "retroactively",
        1000,
        5000,
        [(_estimatee(20, 100, max_skew=(1, HOSTNAME, 3)), 12)],
        nodes=3,
        pods=12,
    ),
]


@pytest.mark.parametrize(("template", "groups", "max_nodes", "expected"), CASES)
def test_binpacking_estimate(
    template: Node,
    groups: list[tuple[Pod, int]],
    max_nodes: int,
    expected: tuple[int, int, list[str] | None],
) -> None:
    """``Estimate``: the number of new nodes, the number of pods scheduled on them and, where the case
    names them, which pods those are."""
    nodes, pods, processed = expected
    got_nodes, got_pods = binpacking_estimate(groups, template, max_nodes, [OLD_NODE])
    assert got_nodes == nodes
    assert len(got_pods) == pods
    if processed is not None:
        assert got_pods == processed
