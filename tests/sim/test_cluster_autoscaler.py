"""cluster-autoscaler in the simulator: scale-up, upcoming nodes, backoff, timeouts, scale-down, warm nodes.

Rules from cluster-autoscaler's FAQ and code (``core/scaleup``, ``FilterOutNodesWithUnreadyResources``,
``utils/backoff/exponential_backoff.go``, ``core/scaledown``), with its default flags.
"""

from __future__ import annotations

from typing import Any

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import AutoscalerSettings, NodePool, SimulationSettings, Stock
from gpufleet.model.workloads import Created, Job
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"
GI = 2**30
CHAIN = (
    ("capacityWait", "30s"),
    ("boot", "60s"),
    ("driver", "120s"),
    ("join", "30s"),
    ("devicePlugin", "20s"),
)


def t4_pool(name: str = "t4", **kw: Any) -> NodePool:
    template = Node(
        f"{name}-template",
        labels={"accelerator": "nvidia-tesla-t4"},
        capacity={"cpu": 8000, "memory": 32 * GI, "pods": 110, GPU: 1},
    )
    defaults: dict[str, Any] = {"min": 0, "max": 4, "price_per_hour": 0.5, "provisioning": CHAIN}
    return NodePool(name, template, **{**defaults, **kw})


def gpu_job(
    name: str, pods: int, duration_s: float, at: float = 0.0, annotations: dict[str, str] | None = None
) -> Job:
    template = Pod(
        "",
        requests={"cpu": 4000, "memory": 16 * GI, GPU: 1},
        restart_policy="Never",
        annotations=dict(annotations or {}),
        behavior=Behavior(duration_s=duration_s),
    )
    return Job(name, "default", template, parallelism=pods, completions=pods, created=Created(at, 0))


def run(
    pools: list[NodePool],
    jobs: list[Job],
    duration_s: float = 4 * 3600,
    expander: str = "least-waste",
    **kw: Any,
) -> dict[str, Any]:
    settings = SimulationSettings(duration_s=duration_s, autoscaler=AutoscalerSettings(expander=expander))
    sim = Simulation(Scenario(node_pools=pools, jobs=jobs, simulation=settings, **kw))
    sim.run()
    return build_summary(sim)


def events(summary: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in summary["autoscaler_events"] if e["kind"] == kind]


def test_pending_gpu_pods_get_one_node_each_and_no_more_while_drivers_come_up() -> None:
    """A node with the GPU label but no GPU allocatable yet counts as upcoming: no duplicate scale-up. The
    scale-up comes at 30 s, once the GPU pods created at 0 s are no longer very new (``allPodsAreNew``)."""
    summary = run([t4_pool()], [gpu_job("train", 3, 1800)])
    ups = events(summary, "scale-up")
    assert len(ups) == 1 and ups[0]["nodes"] == ["t4-0", "t4-1", "t4-2"] and ups[0]["t_s"] == 30.0
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert (nodes["t4-0"]["created_s"], nodes["t4-0"]["ready_s"], nodes["t4-0"]["gpu_ready_s"]) == (
        30.0,
        270.0,
        290.0,
    )
    for pod in summary["pods"]:
        assert pod["bound_s"] == 290.0
        assert pod["stages"] == {"scheduling": 30.0, "node_provisioning": 260.0}
        assert pod["node_stages"] == {
            "capacityWait": 30.0,
            "boot": 60.0,
            "driver": 120.0,
            "join": 30.0,
            "devicePlugin": 20.0,
        }


def test_unneeded_nodes_go_after_scale_down_unneeded_time() -> None:
    """scale-down-unneeded-time 10m: empty nodes are deleted once unneeded for more than 10 minutes
    (``unremovableReason``: ``!since.Add(unneededTime).Before(now)``), at the scan 610 s after the one
    that found them empty (their pods finished at 2,090 s: scaled up at 30 s, ``allPodsAreNew``)."""
    summary = run([t4_pool()], [gpu_job("train", 3, 1800)])
    downs = events(summary, "scale-down")
    assert sorted(n for e in downs for n in e["nodes"]) == ["t4-0", "t4-1", "t4-2"]
    assert {e["t_s"] for e in downs} == {30.0 + 260 + 1800 + 610}
    assert summary["totals"]["cost"] > 0


def test_a_pool_node_is_billed_from_its_launch_to_its_deletion() -> None:
    """Each of the three nodes costs its pool's price per hour from its launch (30 s) until it is deleted,
    and nothing after: the run's cost is theirs, though the run goes on for hours after they went."""
    summary = run([t4_pool(price_per_hour=0.5)], [gpu_job("train", 3, 1800)])
    lives = [n["deleted_s"] - n["created_s"] for n in summary["nodes"]]
    assert len(lives) == 3 and all(n["deleted_s"] < 4 * 3600 for n in summary["nodes"])
    assert summary["totals"]["cost"] == round(0.5 * sum(lives) / 3600, 6)


def test_pool_max_caps_the_scale_up() -> None:
    summary = run([t4_pool(max=2)], [gpu_job("train", 3, 1800)])
    assert events(summary, "scale-up")[0]["nodes"] == ["t4-0", "t4-1"]
    assert max(summary["timeline"]["nodes_by_pool"]["t4"]) == 2


def test_stock_out_backs_the_pool_off_and_another_pool_is_tried() -> None:
    """A failed scale-up backs the group off (5 m), so the expander picks another group: the first at 30 s,
    once the GPU pod created at 0 s is no longer very new (``allPodsAreNew``), zone-b at the next loop, 10 s
    later (the loop runs once a scan interval)."""
    empty = t4_pool("zone-a", stock=Stock(stockout_probability=1.0), price_per_hour=0.4)
    other = t4_pool("zone-b", price_per_hour=0.5)
    summary = run([empty, other], [gpu_job("train", 1, 600)], expander="price")
    failed, ups = events(summary, "scale-up-failed"), events(summary, "scale-up")
    assert failed and failed[0]["pool"] == "zone-a" and failed[0]["t_s"] == 30.0
    assert ups[0]["pool"] == "zone-b" and ups[0]["t_s"] == failed[0]["t_s"] + 10.0


def test_a_node_whose_gpus_register_after_max_node_provision_time_backs_the_pool_off_and_is_kept() -> None:
    """max-node-provision-time 15m: the scale-up request times out at the first scan after its time plus 15
    minutes (``updateScaleRequests``: ``ExpectedAddTime.Before(now)``) and the pool is backed off, but the
    node, registered (its GPUs not allocatable: not Ready for cluster-autoscaler), is not deleted for it:
    its pod runs there once its GPUs register (at 1,290 s). The scale-up is at 30 s (``allPodsAreNew``)."""
    slow = t4_pool(provisioning=(("boot", "60s"), ("devicePlugin", "20m")))
    summary = run([slow], [gpu_job("train", 1, 600)], duration_s=2400)
    timeouts = events(summary, "provision-timeout")
    assert timeouts and timeouts[0]["nodes"] == ["t4-0"] and timeouts[0]["t_s"] == 940.0
    assert timeouts[0]["reason"] == "Nodes added to group t4 failed to register within 15m10s"
    assert {n["name"]: n["deleted_s"] for n in summary["nodes"]}["t4-0"] is None
    assert not events(summary, "delete-unregistered")
    assert summary["pods"][0]["node"] == "t4-0" and summary["pods"][0]["bound_s"] == 1290.0


def test_safe_to_evict_false_keeps_an_underused_node() -> None:
    """FAQ: a pod annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false" blocks scale-down."""
    pool = t4_pool(replicas=2, min=0, provisioning=())
    pool.template.capacity[GPU] = pool.template.allocatable[GPU] = 4
    keep = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
    pinned = Pod("pinned", requests={"cpu": 1000, GPU: 1}, annotations=keep, owner=OwnerRef("Job", "x"))
    movable = Pod("movable", requests={"cpu": 1000, GPU: 1}, owner=OwnerRef("Job", "y"))
    bare = [
        BarePod(pinned, Created(0, 0), bound_node="t4-0", phase="Running"),
        BarePod(movable, Created(0, 1), bound_node="t4-1", phase="Running"),
    ]
    summary = run([pool], [], duration_s=3600, pods=bare)
    removed = {n for e in events(summary, "scale-down") for n in e["nodes"]}
    assert removed == {"t4-1"}  # its pod fits on t4-0 (4 GPUs, 1 used); t4-0 itself is protected


def test_warm_node_takes_a_new_pod_at_once_and_is_refilled() -> None:
    """warm: 1 started, GPU-ready, empty node is kept; a pod lands without waiting for provisioning."""
    summary = run([t4_pool(warm=1)], [gpu_job("serve", 1, 1800, at=60.0)], duration_s=3600)
    pod = summary["pods"][0]
    assert pod["node"] == "t4-0" and pod["bound_s"] == 60.0 and "node_provisioning" not in pod["stages"]
    ups = events(summary, "scale-up")
    assert not ups  # the refill is a warm launch, not a scale-up for pods
    assert "t4-1" in {n["name"] for n in summary["nodes"]}


def test_pod_disruption_budget_at_its_limit_blocks_scale_down() -> None:
    """FAQ: a PodDisruptionBudget that allows no disruption keeps the node."""
    pool = t4_pool(replicas=2, min=0, provisioning=())
    pool.template.capacity[GPU] = pool.template.allocatable[GPU] = 4
    pods = [
        BarePod(
            Pod(
                f"web-{i}", labels={"app": "web"}, requests={"cpu": 1000, GPU: 1}, owner=OwnerRef("Job", "w")
            ),
            Created(0, i),
            bound_node=f"t4-{i}",
            phase="Running",
        )
        for i in range(2)
    ]
    budget = DisruptionBudget("default", "web", (("app", "web"),), min_available=2)
    summary = run([pool], [], duration_s=3600, pods=pods, budgets=[budget])
    assert events(summary, "scale-down") == []
    relaxed = DisruptionBudget("default", "web", (("app", "web"),), min_available=1)
    summary = run([pool], [], duration_s=3600, pods=pods, budgets=[relaxed])
    assert len(events(summary, "scale-down")) == 1


def _half_used_pool(gpu_aware: bool) -> dict[str, Any]:
    pool = t4_pool(replicas=2, min=0, max=2, provisioning=())
    pool.template.capacity[GPU] = pool.template.allocatable[GPU] = 8
    jobs = [gpu_job("train-a", 1, 4 * 3600, annotations={}), gpu_job("train-b", 1, 4 * 3600, at=1.0)]
    for job in jobs:
        job.template.requests[GPU] = 3
        job.template.behavior = Behavior(duration_s=4 * 3600, checkpoint_interval_s=1800)
    settings = SimulationSettings(
        duration_s=2 * 3600, autoscaler=AutoscalerSettings(gpu_aware_scale_down=gpu_aware)
    )
    sim = Simulation(Scenario(node_pools=[pool], jobs=jobs, simulation=settings))
    sim.run()
    return build_summary(sim)


def test_upstream_scale_down_drains_a_half_used_gpu_node_under_training() -> None:
    """Upstream defaults: 3 of 8 GPUs is below 0.5 and the pod fits elsewhere, so the node goes."""
    summary = _half_used_pool(gpu_aware=False)
    assert len(events(summary, "scale-down")) == 1
    assert summary["totals"]["pods_disrupted"] == 1
    assert summary["totals"]["work_lost_s"] > 0  # 3 GPUs x the time since the last 30-minute checkpoint


def test_gpu_aware_scale_down_keeps_nodes_where_training_computes() -> None:
    summary = _half_used_pool(gpu_aware=True)
    assert events(summary, "scale-down") == []
    assert summary["totals"]["pods_disrupted"] == 0 and summary["totals"]["work_lost_s"] == 0


def test_spot_node_is_reclaimed_with_two_minutes_notice_and_replaced() -> None:
    """A spot interruption drains the node at once and deletes it 120 s later; the pod's Job retries
    and cluster-autoscaler launches a replacement node."""
    pool = t4_pool(provisioning=(("boot", "60s"),), spot_reclaim_per_hour=3.0)
    summary = run([pool], [gpu_job("train", 1, 3600)], duration_s=3 * 3600)
    reclaims = events(summary, "spot-reclaim")
    assert reclaims
    first = reclaims[0]
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert nodes[first["nodes"][0]]["deleted_s"] == first["t_s"] + 120
    evicted = [p for p in summary["pods"] if p["reason"] == "Evicted"]
    assert evicted and evicted[0]["disruptions"] == [first["t_s"]]
    assert len(events(summary, "scale-up")) >= 2  # the first node, and a replacement


def test_priority_expander_reads_the_upstream_config_map(tmp_path: Any) -> None:
    """expander/priority: the cluster-autoscaler-priority-expander ConfigMap ranks node groups by regex."""
    from gpufleet.kube import load_scenario

    pools = "".join(
        f"""---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  max: 2
  template:
    status:
      capacity: {{cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}}
"""
        for name in ("on-demand-a", "spot-b")
    )
    config = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-autoscaler-priority-expander, namespace: kube-system}
data:
  priorities: |-
    10:
      - .*on-demand.*
    50:
      - ^spot-.*
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec:
  duration: 1h
  autoscaler: {expander: priority}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    path = tmp_path / "s.yaml"
    path.write_text(pools + config)
    sim = Simulation(load_scenario([path]))
    sim.run()
    ups = events(build_summary(sim), "scale-up")
    assert ups and ups[0]["pool"] == "spot-b"
