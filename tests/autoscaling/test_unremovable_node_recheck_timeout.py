"""``--unremovable-node-recheck-timeout`` (5m), as cluster-autoscaler 1.34.5 applies it: a node the removal
simulation finds unremovable (``RemovalSimulator.SimulateNodeRemoval``: ``NoPlaceToMovePods``,
``BlockedByPod``) is kept in ``unremovable.Nodes`` until ``latestUpdate + UnremovableNodeRecheckTimeout``
(``core/scaledown/planner/planner.go``, ``Planner.categorizeNodes``: ``AddTimeout``); until then
``Checker.FilterOutUnremovable`` (``core/scaledown/eligibility/eligibility.go``) skips it as
``RecentlyUnremovable`` (13) before any other check, whatever changed on the cluster, and
``unremovable.Nodes.Update`` (``core/scaledown/unremovable/nodes.go``) drops it at the first scan at which the
timeout is no longer after now, or once the node is gone. A node found ineligible (``NotUnderutilized``, ...)
gets no timeout and is checked at every scan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_with, write
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

JOB = OwnerRef("Job", "train")
R = UnremovableReason
NODES = ("h100-0", "h100-1")


def job(name: str, gpus: int, duration: str, node: str = "") -> str:
    """A one-pod Job computing for ``duration`` on ``gpus`` GPUs (on ``node`` only, when named)."""
    selector = f"nodeSelector: {{kubernetes.io/hostname: {node}}}" if node else ""
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: {duration}}}
    spec:
      restartPolicy: Never
      {selector}
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def pool(name: str, autoscaled: bool) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  replicas: 1
  {"max: 1" if autoscaled else ""}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
"""


def scenario(tmp_path: Path, autoscaler: str = "{}") -> list[Path]:
    """Two 8-GPU nodes: spare-0 (not autoscaled) runs a 6-GPU pod for 2 minutes, h100-0 (the only candidate)
    a 4-GPU pod for hours (half used: underutilized). From the scan at 10 s h100-0's pod fits on no other node
    (``NoPlaceToMovePods``); from 120 s spare-0 is empty and would take it."""
    simulation = f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  duration: 20m
  autoscaler: {autoscaler}
"""
    return write(
        tmp_path,
        simulation,
        pool("h100", autoscaled=True),
        pool("spare", autoscaled=False),
        job("short", 6, "2m", node="spare-0"),
        job("keep", 4, "5h"),
    )


def scale_downs(paths: list[Path]) -> list[tuple[float, tuple[str, ...]]]:
    sim = run_simulation(paths)
    return [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == "scale-down"]


def test_a_node_found_unremovable_is_not_checked_again_for_five_minutes_though_room_opened(
    tmp_path: Path,
) -> None:
    """h100-0, ``NoPlaceToMovePods`` at 10 s, is not checked again before 310 s although spare-0 is empty
    from 120 s: it is unneeded from 310 s and goes at 920 s, not at 730 s (checked again at 120 s)."""
    assert scale_downs(scenario(tmp_path)) == [(920.0, ("h100-0",))]


def test_a_zero_recheck_timeout_checks_a_node_found_unremovable_at_every_scan(tmp_path: Path) -> None:
    """``unremovableNodeRecheckTimeout: 0s``: the timeout is never after the next scan, so h100-0 is checked
    again at 120 s, unneeded from then, and goes at 730 s."""
    paths = scenario(tmp_path, "{unremovableNodeRecheckTimeout: 0s}")
    assert scale_downs(paths) == [(730.0, ("h100-0",))]


def test_the_scans_until_the_recheck_count_the_node_as_recently_unremovable(tmp_path: Path) -> None:
    """``countsByReason`` of the planner's unremovable nodes at each scan: at 10 s h100-0 is
    ``NoPlaceToMovePods`` (14), at the next scan ``RecentlyUnremovable`` (13). The scan at 0 s, before the
    pods were bound, found it unneeded (``NotUnneededLongEnough``, 4); no count is reset
    (``UpdateUnremovableNodesCount``)."""
    sim = run_simulation(scenario(tmp_path), duration_s=60.0)
    assert sim.autoscaler.gauges.unremovable == {
        R.NOT_UNNEEDED_LONG_ENOUGH: 1,
        R.RECENTLY_UNREMOVABLE: 1,
        R.NO_PLACE_TO_MOVE_PODS: 1,
    }


def down(state: ClusterState, now: float, **kw: Any) -> ScaleDownReply:
    """A scan at ``now`` of the two candidates of ``state``."""
    return scale_down_with(state, [Candidate(n, "h100", 2, 0) for n in NODES], **({"now": now} | kw))


def test_the_removal_simulations_finds_are_kept_until_their_timeout_and_checked_at_it() -> None:
    """``categorizeNodes``: h100-0's pod fits nowhere at 10 s, so h100-0 is unremovable until 310 s; h100-1,
    full, is ``NotUnderutilized`` and gets no timeout. At 300 s (h100-1 now empty) h100-0 is still
    ``RecentlyUnremovable`` and only h100-1 is unneeded; at 310 s (``ttl.After(timestamp)`` false) it is
    checked again, unneeded, and its timeout is gone."""
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    state.assign(gpu_pod("keep", 4, owner=JOB), "h100-0", 0.0)
    state.assign(gpu_pod("short", 6, owner=JOB), "h100-1", 0.0)
    found = down(state, 10.0)
    assert [(n, why.reason) for n, why in found.not_unneeded] == [
        ("h100-0", R.NO_PLACE_TO_MOVE_PODS),
        ("h100-1", R.NOT_UNDERUTILIZED),
    ]
    assert found.unremovable_until == {"h100-0": 310.0}
    state.unassign("default/short")
    recent = down(state, 300.0, unremovable_until=found.unremovable_until)
    assert [(n, why.reason) for n, why in recent.not_unneeded] == [("h100-0", R.RECENTLY_UNREMOVABLE)]
    assert recent.unneeded_since == {"h100-1": 300.0} and recent.unremovable_until == {"h100-0": 310.0}
    again = down(
        state, 310.0, unremovable_until=recent.unremovable_until, unneeded_since=recent.unneeded_since
    )
    assert again.not_unneeded == () and again.unremovable_until == {}
    assert again.unneeded_since == {"h100-0": 310.0, "h100-1": 300.0}


def test_a_node_gone_from_the_cluster_leaves_the_unremovable_nodes() -> None:
    """``unremovable.Nodes.Update`` drops a node the snapshot no longer has (``GetNodeInfo`` fails)."""
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    reply = down(state, 20.0, unremovable_until={"h100-0": 310.0, "h100-9": 310.0})
    assert reply.unremovable_until == {"h100-0": 310.0}
