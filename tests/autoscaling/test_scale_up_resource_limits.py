"""cluster-autoscaler's cluster-wide resource limits on scale-up (``core/scaleup/resource/manager.go``,
``orchestrator.go``'s ``filterValidScaleUpNodeGroups`` and ``applyLimits``): ``--cores-total``'s max,
``--memory-total``'s max and ``--gpu-total`` skip a group one more node of which exceeds what is left and cut
the chosen group's new nodes to it."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from conftest import scale_up_reply as up
from gpufleet.autoscaling.cluster_autoscaler import ScaleUp
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState

H100 = gpu_node("h100-template", 8, labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})


def test_the_new_nodes_are_cut_to_the_gpus_left_below_gpu_total() -> None:
    """Four 8-GPU pods want four nodes; 20 GPUs left of the H100 type's limit hold two (``ApplyLimits``),
    and every pod of the option still counts as triggering the scale-up."""
    pods = [gpu_pod(f"p{k}", 8) for k in range(4)]
    reply = up(
        ClusterState([]),
        pods,
        [PoolOption("h100", H100, room=10)],
        resources_left={"NVIDIA-H100-80GB-HBM3": 20},
    )
    assert reply.scale_up == ScaleUp("h100", 2, tuple(p.key for p in pods), (("h100", 2),))


def test_a_group_one_node_of_which_exceeds_the_cores_left_is_skipped_with_its_reason() -> None:
    """96 cores left of ``--cores-total``'s max are fewer than an H100 node's 96 + 1: the group is skipped
    (``IsNodeGroupResourceExceeded``) and the pod is told why."""
    reply = up(
        ClusterState([]), [gpu_pod("p", 8)], [PoolOption("h100", H100, room=10)], resources_left={"cpu": 95}
    )
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/p", "1 max cluster cpu limit reached"),)
