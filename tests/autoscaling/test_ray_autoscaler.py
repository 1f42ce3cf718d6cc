"""The Ray autoscaler's decision (``gpufleet.autoscaling.ray_autoscaler``), request in, reply out, as
Ray autoscaler v2's ``ResourceDemandScheduler.schedule`` and the reconciler's ``_compute_to_launch``
decide (python/ray/autoscaler/v2/scheduler.py, instance_manager/reconciler.py)."""

from __future__ import annotations

from gpufleet.autoscaling.ray_autoscaler import (
    UPSCALING_SPEED,
    NodeType,
    RayNode,
    SchedulingRequest,
    schedule,
)

GPU = NodeType("gpu", {"CPU": 8.0, "GPU": 1.0}, 0, 4)
CPU = NodeType("cpu", {"CPU": 16.0}, 0, 4)
HEAD = RayNode("ml/rc-head-aaaaa", "headgroup", {"CPU": 0.0})


def request(
    *nodes: RayNode,
    pending: tuple[dict[str, float], ...] = (),
    types: tuple[NodeType, ...] = (GPU, CPU),
    mode: str = "Default",
) -> SchedulingRequest:
    return SchedulingRequest(types, [HEAD, *nodes], list(pending), 60.0, UPSCALING_SPEED[mode])


def test_gpu_requests_launch_gpu_workers_and_cpu_requests_avoid_gpu_nodes() -> None:
    """``_compute_score``: a GPU node type is not chosen for requests that need no GPU, though both
    types hold them; a new node is scored with every pending request it can take, so one GPU worker
    takes a GPU request and a CPU request together."""
    assert schedule(request(pending=({"CPU": 4.0},))).to_launch == {"cpu": 1}
    reply = schedule(request(pending=({"GPU": 1.0}, {"CPU": 4.0})))
    assert reply.to_launch == {"gpu": 1}
    assert reply.to_terminate == [] and reply.infeasible == []


def test_pending_requests_go_first_to_free_room_on_existing_workers() -> None:
    gpu_node = RayNode("ml/w1", "gpu", {"CPU": 8.0, "GPU": 1.0})
    reply = schedule(request(gpu_node, pending=({"GPU": 1.0}, {"GPU": 1.0})))
    assert reply.to_launch == {"gpu": 1}


def test_requests_are_bin_packed_onto_as_few_new_workers_as_fit() -> None:
    """First-fit on each new node: 4 requests of 4 CPUs fill one 16-CPU worker."""
    reply = schedule(request(RayNode("ml/c1", "cpu", {"CPU": 0.0}), pending=({"CPU": 4.0},) * 4))
    assert reply.to_launch == {"cpu": 1}


def test_a_group_never_grows_past_max_workers_and_unfit_requests_are_infeasible() -> None:
    reply = schedule(request(pending=({"GPU": 1.0},) * 6 + ({"GPU": 2.0},), mode="Aggressive"))
    assert reply.to_launch == {"gpu": 1}  # a type with no worker launches max(1, 1000 x 0) = 1 this round
    assert reply.infeasible == [{"GPU": 2.0}, {"GPU": 1.0}, {"GPU": 1.0}]  # 4 fit the 4 allowed workers
    existing = [RayNode(f"ml/w{i}", "gpu", {"CPU": 8.0, "GPU": 0.0}) for i in range(2)]
    again = schedule(request(*existing, pending=({"GPU": 1.0},) * 6))
    assert again.to_launch == {"gpu": 2}  # max_workers 4


def test_conservative_upscaling_doubles_a_group_at_most_each_round() -> None:
    """``_compute_to_launch``: ``max(1, ceil(upscaling_speed x workers of the type))`` a round;
    ``upscalingMode: Conservative`` is speed 1, Default 1000 (autoscaling_config.py)."""
    big = NodeType("gpu", {"GPU": 1.0}, 0, 100)
    workers = [RayNode(f"ml/w{i}", "gpu", {"GPU": 0.0}) for i in range(3)]
    pending = ({"GPU": 1.0},) * 20
    assert schedule(request(*workers, pending=pending, types=(big,), mode="Conservative")).to_launch == {
        "gpu": 3
    }
    assert schedule(request(*workers, pending=pending, types=(big,))).to_launch == {"gpu": 10}  # 10 at once


def test_min_workers_are_launched_without_demand_at_the_launch_rate() -> None:
    group = NodeType("gpu", {"GPU": 1.0}, 3, 4)
    assert schedule(request(types=(group,))).to_launch == {"gpu": 1}  # none of the type yet: 1
    one = RayNode("ml/a", "gpu", {"GPU": 1.0})
    assert schedule(request(one, types=(group,))).to_launch == {"gpu": 2}


def test_idle_workers_past_the_timeout_are_terminated_down_to_min_longest_idle_first() -> None:
    """``_enforce_idle_termination``: idle at least the idle timeout, while the type keeps min_workers."""
    group = NodeType("gpu", {"GPU": 1.0}, 1, 4)
    nodes = [
        RayNode("ml/a", "gpu", {"GPU": 1.0}, idle_s=90.0),
        RayNode("ml/b", "gpu", {"GPU": 1.0}, idle_s=300.0),
        RayNode("ml/c", "gpu", {"GPU": 1.0}, idle_s=30.0),  # not yet past 60 s
        RayNode("ml/d", "gpu", {"GPU": 0.0}),  # busy
    ]
    assert schedule(request(*nodes, types=(group,))).to_terminate == ["ml/b", "ml/a"]
    alone = schedule(request(nodes[1], types=(group,)))
    assert alone.to_terminate == []  # min_workers 1


def test_an_idle_worker_that_takes_a_pending_request_is_kept() -> None:
    idle = RayNode("ml/a", "gpu", {"CPU": 8.0, "GPU": 1.0}, idle_s=600.0)
    reply = schedule(request(idle, pending=({"GPU": 1.0},)))
    assert reply.to_terminate == [] and reply.to_launch == {}


def test_a_group_idle_timeout_overrides_the_cluster_one() -> None:
    group = NodeType("gpu", {"GPU": 1.0}, 0, 4, idle_timeout_s=600.0)
    assert (
        schedule(request(RayNode("ml/a", "gpu", {"GPU": 1.0}, idle_s=120.0), types=(group,))).to_terminate
        == []
    )


def test_multi_host_groups_launch_and_terminate_whole_replicas() -> None:
    """numOfHosts 2: workers = replicas x 2; a replica is 2 pods (autoscaling_config.py)."""
    tpu = NodeType("tpu", {"TPU": 4.0}, 0, 4, num_of_hosts=2)
    reply = schedule(request(pending=({"TPU": 4.0},), types=(tpu,), mode="Aggressive"))
    assert reply.to_launch == {}  # one replica is 2 pods, but the first round may launch only 1
    workers = [RayNode("ml/t0", "tpu", {"TPU": 0.0}), RayNode("ml/t1", "tpu", {"TPU": 0.0})]
    assert schedule(request(*workers, pending=({"TPU": 4.0},), types=(tpu,))).to_launch == {"tpu": 2}
    idle = [RayNode(f"ml/t{i}", "tpu", {"TPU": 4.0}, idle_s=100.0) for i in range(3)]
    assert len(schedule(request(*idle, types=(tpu,))).to_terminate) == 2
