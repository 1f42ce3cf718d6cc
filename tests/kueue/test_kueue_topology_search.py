"""Kueue's TAS flavor check (``tas_flavorassigner.go``, ``checkPodSetAndFlavorMatchForTAS``) and domain
search (``pkg/cache/scheduler/tas_flavor_snapshot.go``, ``findTopologyAssignment``) as gpufleet's
``scheduling.kueue`` runs them: a TAS flavor whose Topology lacks the requested level is skipped,
LeastFreeCapacity for an unconstrained pod set (``TASProfileMixed``), BestFit otherwise, a preferred level
that climbs to the widest and then spreads over the fewest domains, the refusal's pod count and exclusion
stats, and the ``pods`` slot each pod takes (``resources.OnePodRequest``)."""

from __future__ import annotations

from pathlib import Path

from conftest import kueue_queues, pods_by_name, queued_job, simulated_text
from gpufleet.model.kueue import (
    ClusterQueue,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Topology,
)
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.topology import NodeRoom, TopologyRequest, place
from gpufleet.scheduling.kueue.workload import PodSetResources, Workload

BLOCK = "example.com/block"
RACK = "example.com/rack"
HOST = "kubernetes.io/hostname"
TOPOLOGY = Topology("t", (BLOCK, RACK, HOST))
REQUIRED_HOST = "kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname"


def _nodes(layout: dict[str, tuple[str, str, int]]) -> dict[str, NodeRoom]:
    """``{node: (block, rack, free GPUs)}``."""
    return {
        name: NodeRoom({BLOCK: block, RACK: rack, HOST: name}, {"nvidia.com/gpu": gpus})
        for name, (block, rack, gpus) in layout.items()
    }


def _ask(count: int, required: str | None = None, preferred: str | None = None) -> TopologyRequest:
    return TopologyRequest("main", count, {"nvidia.com/gpu": 1}, required, preferred)


def test_an_unconstrained_pod_set_takes_the_node_with_the_least_free_capacity_that_holds_it() -> None:
    """LeastFreeCapacity (``useLeastFreeCapacityAlgorithm``): the least free node that holds all 3
    pods (b: 3), not the tightest block (b2: 4)."""
    nodes = _nodes({"a": ("b1", "r1", 8), "b": ("b1", "r1", 3), "c": ("b2", "r2", 4)})
    assert place([_ask(3)], TOPOLOGY, nodes) == {"main": ["b", "b", "b"]}


def test_an_unconstrained_pod_set_no_node_holds_fills_the_least_free_nodes_first() -> None:
    nodes = _nodes({"a": ("b1", "r1", 4), "b": ("b1", "r1", 1), "c": ("b2", "r2", 2)})
    assert place([_ask(6)], TOPOLOGY, nodes) == {"main": ["b", "c", "c", "a", "a", "a"]}


def test_a_preferred_level_no_single_domain_holds_spreads_over_the_fewest_widest_domains() -> None:
    """No rack nor block holds 6: the blocks, most pods first (b1: 4), then the one that holds the
    remaining 2 most tightly (b3: 2, not b2: 3)."""
    nodes = _nodes({"a": ("b1", "r1", 4), "b": ("b2", "r2", 3), "c": ("b3", "r3", 2)})
    placed = place([_ask(6, preferred=RACK)], TOPOLOGY, nodes)
    assert placed == {"main": ["a", "a", "a", "a", "c", "c"]}


def test_a_preferred_pod_set_the_topology_cannot_hold_says_how_many_pods_fit_in_all() -> None:
    nodes = _nodes({"a": ("b1", "r1", 4), "b": ("b2", "r2", 3)})
    assert place([_ask(10, preferred=BLOCK)], TOPOLOGY, nodes) == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 7 out of 10 pod(s)'
    )


def test_a_refusal_lists_the_nodes_that_hold_no_pod_by_the_resource_that_limits_them() -> None:
    nodes = _nodes({"a": ("b1", "r1", 0), "b": ("b1", "r1", 1)})
    assert place([_ask(2, required=RACK)], TOPOLOGY, nodes) == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 1 out of 2 pod(s). '
        'Total nodes: 2; excluded: resource "nvidia.com/gpu": 1'
    )


def test_a_level_without_any_labelled_node_has_no_domains() -> None:
    nodes = {"a": NodeRoom({BLOCK: "b1", RACK: "r1"}, {"nvidia.com/gpu": 8})}
    assert place([_ask(1, required=RACK)], TOPOLOGY, nodes) == (
        "couldn't assign flavors to pod set main: no topology domains at level: example.com/rack"
    )


def test_each_pod_takes_a_pods_slot_where_the_room_counts_them() -> None:
    nodes = {"a": NodeRoom({BLOCK: "b1", RACK: "r1", HOST: "a"}, {"nvidia.com/gpu": 8, "pods": 2})}
    assert place([_ask(3, required=HOST)], TOPOLOGY, nodes) == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 2 out of 3 pod(s)'
    )


def test_a_required_host_pod_set_waits_when_the_node_has_no_pod_slots_left(tmp_path: Path) -> None:
    """The node has GPUs for 3 pods but room for 2 (``status.capacity.pods``): Kueue does not admit
    the Job rather than leave a pod that the node cannot take."""
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
        "spec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n"
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n0\n"
        "  labels: {kubernetes.io/hostname: n0, pool: tas}\n"
        'status:\n  capacity: {cpu: "64", memory: 512Gi, pods: "2", nvidia.com/gpu: "8"}\n'
        "\n---"
        + kueue_queues(
            "tas", 64, "queue", "default", flavor_spec="  nodeLabels: {pool: tas}\n  topologyName: t"
        )
        + queued_job(
            "j",
            "0s",
            1,
            annotations=f"{REQUIRED_HOST}, gpufleet.io/duration: 1h",
            spec="  parallelism: 3\n  completions: 3\n",
        )
    )
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert pods["j-0"]["phase"] == "Pending"
    assert pods["j-0"]["message"] == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 2 out of 3 pod(s)'
    )


def test_a_tas_flavor_whose_topology_lacks_the_requested_level_is_skipped_for_the_next() -> None:
    """``checkPodSetAndFlavorMatchForTAS``: ``rack`` is not a level of ``hosts``' Topology, so the pod
    set takes the next flavor, whose Topology lists it; with no such flavor, the flavor's reason."""
    topologies = {"hosts": Topology("hosts", (HOST,)), "racks": Topology("racks", (RACK, HOST))}
    flavors = {f: ResourceFlavor(f, {"pool": "tas"}, topology=f) for f in topologies}
    gpu = "nvidia.com/gpu"

    def queue(*names: str) -> ClusterQueue:
        group = ResourceGroup((gpu,), tuple(FlavorQuotas(f, {gpu: ResourceQuota(8)}) for f in names))
        return ClusterQueue("cq", None, (), resource_groups=(group,))

    pod_set = PodSetResources("main", 2, {gpu: 2}, Pod("main"), TopologyRequest("main", 2, {gpu: 1}, RACK))
    workload = Workload("Job/default/j", "cq", 0, 0.0, 0, (pod_set,))
    nodes = {"n": NodeRoom({"pool": "tas", RACK: "r1", HOST: "n"}, {gpu: 8})}
    both = schedule([workload], [], {"cq": queue("hosts", "racks")}, flavors, set(), None, topologies, nodes)
    assert [a.flavors["main"] for _, a in both.admitted] == [{gpu: "racks"}]
    only = schedule([workload], [], {"cq": queue("hosts")}, flavors, set(), None, topologies, nodes)
    assert only.messages[workload.key] == (
        'couldn\'t assign flavors to pod set main: Flavor "hosts" does not contain the requested level'
    )
