"""cluster-autoscaler's health checks in its loop (``clusterstate/clusterstate.go``, 1.34): with more
``Unready`` nodes than ``--ok-total-unready-count`` (3) and than ``--max-total-unready-percentage`` (45%) of
the cluster's nodes, ``RunOnce`` stops before scaling up or down (``IsClusterHealthy``); a node group with
that many of its nodes missing among the Ready is skipped by scale-up, ``not ready for scale-up``
(``IsNodeGroupHealthy`` in ``NodeGroupScaleUpSafety``). A node not Ready within 15 minutes of registering
is still starting (``NotStarted``) and counts for neither. Run through the hand-kept cluster port."""

from __future__ import annotations

from dataclasses import replace

from test_loops_through_a_port import Group, HandKeptCluster, ManualClock, Starting, autoscaler

from conftest import gpu_node, gpu_pod
from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef
from gpufleet.model.simulation import NodePool

H100 = NodePool("h100", gpu_node("h100-template", 8), min=0, max=20)
LONG_AGO = -3600.0  # registered an hour before the scan: not Ready now means Unready


def busy_group(name: str, size: int) -> tuple[list[Node], Group]:
    """A group of ``size`` 8-GPU nodes, each full (no pod fits, none is unneeded)."""
    nodes = [replace(gpu_node(f"{name}-{k}", 8), pool=name) for k in range(size)]
    return nodes, Group(name, replace(H100, name=name), nodes={n.name for n in nodes})


def fill(port: HandKeptCluster, nodes: list[Node]) -> None:
    for node in nodes:
        port.state.assign(gpu_pod(f"on-{node.name}", 8, owner=OwnerRef("Job", node.name)), node.name, 0.0)


def waiting(port: HandKeptCluster) -> HandKeptCluster:
    port.pods["default/train"].message = f"0/{port.state.size} nodes are available"
    return port


def launches(port: HandKeptCluster) -> list[str]:
    return [str(a[1]) for a in port.asked if a[0] == "launch"]


def test_more_unready_nodes_than_the_ok_count_and_45_percent_stop_scale_up_and_scale_down() -> None:
    """Five busy nodes and one empty: four Unready (4 > 3 and 4 > 45% of 6) and the cluster is not
    autoscaled: the pending pod gets no node, the empty node is not unneeded. Once one node is Ready again
    (3 Unready) the next scan launches and looks for unneeded nodes again."""
    nodes, group = busy_group("h100", 5)
    empty = replace(gpu_node("h100-5", 0), pool="h100")  # (no GPU: the pod does not fit it)
    group.nodes.add(empty.name)
    port = HandKeptCluster([*nodes, empty], [gpu_pod("train", 8)], [group])
    fill(port, nodes)
    port.unready = {n.name: LONG_AGO for n in nodes[:4]}
    clock = ManualClock()
    ca = autoscaler(waiting(port), clock)
    ca.arm(0.0)
    clock.run_until(60.0)
    assert launches(port) == [] and ca.unneeded_since == {}
    del port.unready["h100-0"]
    clock.run_until(70.0)
    assert launches(port) == ["h100"] and "h100-5" in ca.unneeded_since


def launches_at(t: float, registered_s: float) -> list[str]:
    """The launches a scan at ``t`` asks for a pending pod, on five busy nodes of no group four of which
    registered at ``registered_s`` and are not Ready."""
    nodes = [gpu_node(f"static-{k}", 8) for k in range(5)]
    port = HandKeptCluster(nodes, [gpu_pod("train", 8)], [Group("h100", H100)])
    fill(port, nodes)
    port.unready = {n.name: registered_s for n in nodes[:4]}
    clock = ManualClock()
    ca = autoscaler(waiting(port), clock)
    ca.arm(t)
    clock.run_until(t)
    return launches(port)


def test_nodes_not_ready_within_15_minutes_of_registering_are_starting_not_unready() -> None:
    """``NotStarted`` while ``creationTimestamp + MaxNodeStartupTime`` is after now: four of five nodes
    registered at 0 s and not Ready do not make the cluster unhealthy at 890 s; at 900 s they are
    ``Unready`` and the scan does nothing."""
    assert launches_at(890.0, 0.0) == ["h100"]
    assert launches_at(900.0, 0.0) == []


def test_a_group_with_too_many_nodes_not_ready_is_not_ready_for_scale_up() -> None:
    """``IsNodeGroupHealthy``: eight nodes of group a, four Unready (4 > 3 and 4 > 45% of 8), while the
    cluster with two static nodes is healthy (4 is not more than 45% of 10). Scale-up skips group a and
    grows group b; with group a alone the pod's ``NotTriggerScaleUp`` says why."""
    nodes, group_a = busy_group("a", 8)
    static = [gpu_node(f"static-{k}", 8) for k in range(2)]
    group_b = Group("b", replace(H100, name="b"))
    port = HandKeptCluster([*nodes, *static], [gpu_pod("train", 8)], [group_a, group_b])
    fill(port, [*nodes, *static])
    port.unready = {n.name: LONG_AGO for n in nodes[:4]}
    clock = ManualClock()
    ca = autoscaler(waiting(port), clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert launches(port) == ["b"]

    alone = HandKeptCluster([*nodes, *static], [gpu_pod("train", 8)], [busy_group("a", 8)[1]])
    fill(alone, [*nodes, *static])
    alone.unready = dict(port.unready)
    clock = ManualClock()
    ca = autoscaler(waiting(alone), clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert launches(alone) == []
    assert [e.reason for e in ca.events] == ["pod didn't trigger scale-up: 1 not ready for scale-up"]


def test_a_group_s_launches_in_flight_are_not_ready_nodes_missing() -> None:
    """The scale-up in flight lowers the group's acceptable minimum (``updateAcceptableRanges``: its
    request's ``Increase``): four Ready nodes and four launches not registered yet, registered as one
    scale-up of 4 (``RegisterScaleUp``), are a healthy group (one static node Unready, the cluster healthy
    too). Of five pending pods the four upcoming nodes take four; the group grows for the fifth."""
    nodes, group = busy_group("h100", 4)
    for k in range(4, 8):
        group.nodes.add(f"h100-{k}")
        group.launching[f"h100-{k}"] = Starting(())
    static = gpu_node("static-0", 8)
    pods = [gpu_pod(f"train-{k}", 8) for k in range(5)]
    port = HandKeptCluster([*nodes, static], pods, [group])
    fill(port, [*nodes, static])
    port.unready = {"static-0": LONG_AGO}
    for pod in pods:
        port.pods[pod.key].message = "0/5 nodes are available"
    clock = ManualClock()
    ca = autoscaler(port, clock)
    ca.executor.register_scale_up(group, 4)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert launches(port) == ["h100"]


def test_the_late_nodes_of_a_timed_out_scale_up_are_missing_and_the_group_not_ready_for_scale_up() -> None:
    """Once its scale-up request timed out (``updateScaleRequests`` deletes it) a group's acceptable minimum
    is its size again (``updateAcceptableRanges``: no ``Increase`` to take off): its four launches still
    not registered are four nodes missing among the Ready, more than 3 and than 45% of its four registered
    nodes, and the group is not ready for scale-up (``IsNodeGroupHealthy``) though no node is Unready."""
    nodes, group = busy_group("h100", 4)
    for k in range(4, 8):
        group.nodes.add(f"h100-{k}")
        group.launching[f"h100-{k}"] = Starting(())
    pods = [gpu_pod(f"train-{k}", 8) for k in range(5)]
    port = HandKeptCluster(nodes, pods, [group])
    fill(port, nodes)
    for pod in pods:
        port.pods[pod.key].message = "0/4 nodes are available"
    clock = ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert launches(port) == [] and ca.unready_groups.keys() == {"h100"}
