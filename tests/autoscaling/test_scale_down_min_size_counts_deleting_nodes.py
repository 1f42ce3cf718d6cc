"""A node group's ``min`` counts the nodes cluster-autoscaler is deleting, as 1.34.5 decides it
(``core/scaledown/unneeded/nodes.go``, ``Nodes.RemovableAt`` -> ``verifyMinSize``): an unneeded node is
``NodeGroupMinSizeReached`` when the group's size less its deletions in progress
(``ActuationStatus.DeletionsCount``, ``deletiontracker.NodeDeletionTracker``: from ``StartDeletion`` until
the node is deleted) is at most ``MinSize``; the size counts down with each node found removable, empty nodes
before those to drain. ``PreFilteringScaleDownNodeProcessor``
(``processors/nodes/pre_filtering_processor.go``) leaves deletions out: a group above its ``min`` by target
size keeps its nodes as candidates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_with, write
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 2
  min: 1
  max: 2
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: serve}
spec:
  podReplacementPolicy: Failed  # its pod made again once the drained one is gone
  template:
    metadata:
      annotations: {gpufleet.io/duration: 5h}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 300
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/duration: 2m}
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: h100-1}
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 6}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec:
  duration: 30m
"""


def test_a_node_being_drained_keeps_its_groups_last_node_above_min(tmp_path: Path) -> None:
    """Two 8-GPU nodes of a group with ``min`` 1: h100-0 serves on one GPU, unneeded from 0 s (its pod fits
    on h100-1); h100-1 runs a 6-GPU pod for 2 minutes, unneeded from 120 s. At 610 s h100-0 goes, drained:
    its pod has 300 s to stop, so it is deleted at 910 s. At 730 s h100-1, empty and unneeded for long enough,
    is ``NodeGroupMinSizeReached`` (2 nodes less 1 deletion) instead of going too and leaving the group
    empty; the pod made again (``podReplacementPolicy: Failed``: once the drained one is gone) runs on it."""
    sim = run_simulation(write(tmp_path, SCENARIO))
    events = [(e.t_s, e.kind, e.nodes) for e in sim.autoscaler.events if not e.kind.startswith("soft-taint")]
    assert events == [(610.0, "scale-down", ("h100-0",))]
    assert sim.autoscaler.gauges.unremovable[UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED] == 1


def down(state: ClusterState, candidates: list[Candidate], **kw: Any) -> ScaleDownReply:
    """A scan at 700 s of ``candidates``, each unneeded since 0 s."""
    return scale_down_with(
        state, candidates, **({"now": 700.0, "unneeded_since": {c.node: 0.0 for c in candidates}} | kw)
    )


def test_the_deletions_in_progress_count_against_the_groups_min() -> None:
    """A group of 4 with ``min`` 1 and two nodes being deleted: of its two empty unneeded nodes one goes
    (4 - 2 = 2 > 1), the other is at the min (4 - 2 - 1 = 1)."""
    state = ClusterState([gpu_node(f"h100-{k}", 8) for k in range(4)])
    candidates = [Candidate(f"h100-{k}", "h100", 4, 1) for k in (2, 3)]
    reply = down(state, candidates, deleting=frozenset({"h100-0", "h100-1"}), deletions={"h100": 2})
    assert [c.node for c in reply.remove] == ["h100-2"]
    message = "node group h100 is at its min size (1) with 2 of its nodes being deleted"
    assert [(n, why.reason, why.message) for n, why in reply.unremovable] == [
        ("h100-3", UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED, message)
    ]


def test_empty_nodes_count_down_the_groups_size_before_nodes_to_drain() -> None:
    """``RemovableAt`` checks the empty nodes first: of a group of 2 with ``min`` 1, h100-1 (empty) goes and
    h100-0, a node to drain though first by name, is at the min."""
    state = ClusterState([gpu_node(f"h100-{k}", 8) for k in range(2)])
    state.assign(gpu_pod("serve", 1, owner=OwnerRef("Job", "serve")), "h100-0", 0.0)
    reply = down(state, [Candidate(f"h100-{k}", "h100", 2, 1) for k in (0, 1)])
    assert [c.node for c in reply.remove] == ["h100-1"]
    assert [(n, why.reason) for n, why in reply.unremovable] == [
        ("h100-0", UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED)
    ]
