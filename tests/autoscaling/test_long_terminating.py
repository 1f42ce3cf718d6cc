"""cluster-autoscaler 1.34's ``longterminating`` drainability rule (``drain.IsPodLongTerminating``): a pod
deleted more than its ``terminationGracePeriodSeconds`` and ``PodLongTerminatingExtraThreshold`` (30 s) ago
is skipped by a drain and left out of the node's utilisation (``utilization.Calculate``)."""

from __future__ import annotations

from gpufleet.autoscaling.drainability import long_terminating
from gpufleet.autoscaling.scale_down import SnapshotPods, long_terminating_on
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod


def test_a_pod_is_long_terminating_strictly_after_its_grace_period_and_30_s() -> None:
    """``DeletionTimestamp + grace + 30 s`` ``Before(now)``: not at that instant, just after it."""
    pod = Pod("p", termination_grace_s=30.0)
    assert not long_terminating(pod, 100.0, 160.0)
    assert long_terminating(pod, 100.0, 160.5)
    assert not long_terminating(pod, None, 1e9)  # never deleted


def test_scale_down_neither_counts_nor_moves_a_long_terminating_pod() -> None:
    """The deleted pod on ``a`` is left out of its pods (``SnapshotPods.placed``) and of its utilisation
    (``moves``: -1) once long terminating; a pod merely terminating still counts."""
    state = ClusterState([Node("a", allocatable={"cpu": 4000}), Node("b", allocatable={"cpu": 4000})])
    gone = state.assign(Pod("gone", requests={"cpu": 1000}), "a", 0.0)
    state.assign(Pod("kept", requests={"cpu": 1000}), "a", 0.0)
    state.set_terminating(gone)
    gone.deleted_s = 100.0
    assert long_terminating_on(state, 150.0) == {}
    snapshot = SnapshotPods(long_terminating=long_terminating_on(state, 161.0))
    assert [a.pod.name for a in snapshot.placed(state, 0)] == ["kept"]
    assert [(p.name, sign) for p, sign in snapshot.moves(0)] == [("gone", -1)]
