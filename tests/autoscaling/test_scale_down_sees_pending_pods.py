"""cluster-autoscaler's scale-down sees the pending pods ``filterOutSchedulable`` put on nodes.

Upstream (1.34.5 ``core/static_autoscaler.go`` ``RunOnce``): the PodListProcessor's
``filterOutSchedulablePodListProcessor`` (``core/podlistprocessor/filter_out_schedulable.go``,
``TrySchedulePods(clusterSnapshot, ..., breakOnFailure=false)``) schedules the pending pods that fit the
cluster's nodes into ``AutoscalingContext.ClusterSnapshot`` and leaves them there; the scale-down planner
(``core/scaledown/planner/planner.go`` ``UpdateClusterState``) then reads that snapshot: a node a pending pod
was packed onto counts it in its utilisation (``utilization.Calculate`` over the ``NodeInfo``'s pods), and
when its removal is simulated (``simulator/cluster.go`` ``SimulateNodeRemoval``, ``GetPodsToMove``) the pod is
judged by the drainability rules and must find room elsewhere like the node's other pods. gpufleet's
``scale_up`` lists them (``ScaleUpReply.placed``) and ``scale_down`` takes them (``ScaleDownRequest.placed``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from conftest import coscheduling, gpu_node, gpu_pod, run_simulation, scale_down_with, write
from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownReply,
    ScaleUpRequest,
    scale_up,
)
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.autoscaling.scale_down import Unremovable, UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())
JOB = OwnerRef("Job", "train")
CANDIDATE = Candidate("h100-0", "h100", 3, 0)


def down(state: ClusterState, placed: tuple[tuple[Pod, str], ...] = (), **kw: Any) -> ScaleDownReply:
    return scale_down_with(state, [CANDIDATE], **({"placed": placed} | kw))


def cluster(free_on_h100_1: int = 8) -> ClusterState:
    """Three 8-GPU nodes: h100-0 empty (the candidate), h100-1 with ``free_on_h100_1`` GPUs free, h100-2
    full."""
    state = ClusterState([gpu_node(f"h100-{k}", 8) for k in range(3)])
    if free_on_h100_1 < 8:
        state.assign(gpu_pod("busy-1", 8 - free_on_h100_1, owner=JOB), "h100-1", 0.0)
    state.assign(gpu_pod("busy-2", 8, owner=JOB), "h100-2", 0.0)
    return state


def pending(name: str, gpus: int, owner: OwnerRef | None = JOB) -> Pod:
    pod: Pod = gpu_pod(name, gpus, owner=owner)
    return pod


def why(reply: ScaleDownReply) -> dict[str, Unremovable]:
    return dict(reply.not_unneeded)


def test_a_pending_pod_put_on_an_empty_node_counts_in_its_utilization() -> None:
    """``utilization.Calculate`` sums the pods of the snapshot's ``NodeInfo``: an 8-GPU pending pod packed
    onto the empty h100-0 makes it 100% used, ``NotUnderutilized``; without it the node is unneeded."""
    state = cluster()
    assert down(state).unneeded_since == {"h100-0": 0.0}
    reply = down(state, ((pending("wait-0", 8), "h100-0"),))
    assert reply.unneeded_since == {}
    assert why(reply) == {
        "h100-0": Unremovable(UnremovableReason.NOT_UNDERUTILIZED, "utilization 1.00 > 0.5")
    }


def test_a_pending_pod_put_on_a_node_must_find_room_elsewhere_when_its_removal_is_simulated() -> None:
    """``SimulateNodeRemoval``: a 2-GPU pending pod on h100-0 (25%, underutilised) must move like a placed
    one: with no room on the other nodes the node is ``NoPlaceToMovePods``; with h100-1 free it is unneeded,
    and once unneeded long enough it goes as a node to drain (``PodsToReschedule`` not empty), not an empty
    one (the removal is the same here: nothing of the cluster's to evict)."""
    placed = ((pending("wait-0", 2), "h100-0"),)
    full = down(cluster(free_on_h100_1=0), placed)
    message = "pod default/wait-0 fits on no other node"
    assert why(full) == {"h100-0": Unremovable(UnremovableReason.NO_PLACE_TO_MOVE_PODS, message)}
    room = down(cluster(), placed)
    assert room.unneeded_since == {"h100-0": 0.0}
    later = down(cluster(), placed, now=610.0, unneeded_since={"h100-0": 0.0}, max_drain_parallelism=0)
    assert later.remove == () and later.unneeded_since == {"h100-0": 0.0}  # no drain left in the budget


def test_a_pending_pod_without_a_controller_blocks_the_drain_like_a_placed_one() -> None:
    """The drainability rules judge a pending pod in the snapshot as any other (``GetPodsToMove``): one that
    no controller owns is ``BlockedByPod`` (``NotReplicated``), however much room there is elsewhere."""
    reply = down(cluster(), ((pending("bare", 2, owner=None), "h100-0"),))
    blocked = why(reply)["h100-0"]
    assert blocked.reason is UnremovableReason.BLOCKED_BY_POD
    assert blocked.message == "pod default/bare is not replicated (it has no controller)"


def test_pending_pods_put_on_other_nodes_take_the_room_a_drain_would_move_to() -> None:
    """The pods a drain of h100-0 moves (a 4-GPU job pod) go to the snapshot's other nodes, where a pending
    4-GPU pod packed onto h100-1 already took the room: ``NoPlaceToMovePods``; without it, unneeded."""
    state = cluster(free_on_h100_1=4)
    state.assign(gpu_pod("run-0", 4, owner=JOB), "h100-0", 0.0)
    assert down(state).unneeded_since == {"h100-0": 0.0}
    reply = down(state, ((pending("wait-1", 4), "h100-1"),))
    message = "pod default/run-0 fits on no other node"
    assert why(reply) == {"h100-0": Unremovable(UnremovableReason.NO_PLACE_TO_MOVE_PODS, message)}


def test_a_kept_verdict_does_not_stand_once_pending_pods_are_put_on_the_nodes_it_read() -> None:
    """``removal_memo``: the verdict a scan kept stands on the unchanged cluster only while the same pending
    pods sit on the node and on the nodes its simulation looked at: h100-0, unneeded with nothing pending,
    is ``NotUnderutilized`` once a pending pod is put on it, and ``NoPlaceToMovePods`` once one takes the
    room on h100-1 its pod moved to; with the pending pods gone, unneeded again."""
    state, memo = cluster(free_on_h100_1=4), RemovalMemo()
    state.assign(gpu_pod("run-0", 4, owner=JOB), "h100-0", 0.0)
    assert down(state, memo=memo).unneeded_since == {"h100-0": 0.0}
    on_node = down(state, ((pending("wait-0", 4), "h100-0"),), memo=memo)
    assert why(on_node)["h100-0"].reason is UnremovableReason.NOT_UNDERUTILIZED
    assert down(state, memo=memo).unneeded_since == {"h100-0": 0.0}
    elsewhere = down(state, ((pending("wait-1", 4), "h100-1"),), memo=memo)
    assert why(elsewhere)["h100-0"].reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS
    assert down(state, memo=memo).unneeded_since == {"h100-0": 0.0}


def test_scale_up_lists_the_pending_pods_filter_out_schedulable_put_on_the_cluster_s_nodes() -> None:
    """``filterOutSchedulableByPacking`` (highest priority first, first fit): the pods it puts on the
    cluster's nodes are in the reply with their nodes, in that order; a pod that fits nowhere is not."""
    state = cluster(free_on_h100_1=2)
    pods = [pending("big", 8), pending("small", 2), pending("huge", 16)]
    request = ScaleUpRequest(
        now=0.0, state=state, profile=PROFILE, pending=pods, options=[], backed_off=frozenset(),
        expander="least-waste", rng=np.random.default_rng(0), exclude=frozenset(), total_reached=False,
    )  # fmt: skip
    reply = scale_up(request)
    assert [(p.key, node) for p, node in reply.placed] == [
        ("default/big", "h100-0"),
        ("default/small", "h100-1"),
    ]


# -- through the simulator -------------------------------------------------------------------------

POOL = (
    """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 1
  max: 1
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  replicas: 1
  max: 1
  template:
    status:
      capacity: {cpu: "32", memory: 128Gi, pods: "110"}
---
"""
    + coscheduling("gang-scheduler")
    + """---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 2}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completions: 2
  parallelism: 2
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: train}
      annotations: {gpufleet.io/duration: 1h}
    spec:
      schedulerName: gang-scheduler
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 8}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 30m}
"""
)


def test_a_node_a_waiting_pod_fits_is_not_deleted_while_the_pod_waits(tmp_path: Path) -> None:
    """A 2-pod gang of 8-GPU pods waits (Coscheduling: one node, the pool at its max, no scale-up) on a pool's
    one empty node, which one of its pods fits: ``filterOutSchedulable`` packs that pod onto the node in the
    snapshot scale-down reads, so the node is 100% used there and is never unneeded; it stays for the whole
    30 minutes (without the pending pods in the snapshot it went at the scan after 10 minutes; the empty cpu
    node goes then). Two more scans of the unchanged cluster after the run: the second asks scale-up
    nothing new (its answer stands, the pods it put with it) and still finds the node needed."""
    sim = run_simulation(write(tmp_path, POOL))
    downs = [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == "scale-down"]
    assert downs == [(610.0, ("cpu-0",))]
    assert sim.cluster.nodes["h100-0"].deleted_s is None
    loop = sim.autoscaler
    for t in (1800.0, 1810.0):
        loop.arm(t)
        while sim.loop.peek_time() == t:
            sim.loop.step()
        assert loop.unneeded_since == {} and loop.deleting == set()
    assert sorted(r.phase for r in sim.records.values()) == ["Pending", "Pending"]
