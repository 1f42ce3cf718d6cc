"""The control loops run on any ``Clock`` through any ``ClusterPort``, with no simulator: here a
cluster the test keeps by hand (what a live backend will be: reads answered from its copy of the
cluster, writes recorded), and a clock the test moves on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ManualClock, gpu_node, gpu_pod
from gpufleet.autoscaling.resource_limits import GPU_TYPE_LABEL
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.control import cluster_autoscaler_loop
from gpufleet.control.cluster_autoscaler_loop import ClusterAutoscalerLoop, ScaleDownGauges
from gpufleet.control.cluster_autoscaler_scale_up_options import ScaleUpOptions
from gpufleet.control.kueue_queues import KueueQueues
from gpufleet.control.port import ClusterPort, PodStatus
from gpufleet.control.workload_autoscalers import WorkloadAutoscalers
from gpufleet.kube import load_scenario
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.simulation import AutoscalerSettings, NodePool
from gpufleet.model.workloads import Job, PodGroup

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Status:
    pod: Pod
    phase: str = "Pending"
    message: str | None = None
    #: a minute before the clock's 0: the scheduler has had time to mark it unschedulable, and
    #: cluster-autoscaler's wait for very new pods (``allPodsAreNew``, 30 s with a GPU pod) is over
    created_s: float = -60.0
    bound_s: float | None = None
    running_s: float | None = None
    working_s: float | None = None
    deleted_s: float | None = None
    ready: bool = False
    terminating: bool = False

    @property
    def creation_timestamp_s(self) -> float:
        return self.created_s


@dataclass
class Starting:
    for_pods: tuple[str, ...]
    warm: bool = False
    gpu_ready_after_s: float | None = None  # a real cloud does not say
    registered_s: float | None = None


@dataclass
class Group:
    name: str
    pool: NodePool
    nodes: set[str] = field(default_factory=set)
    launching: dict[str, Starting] = field(default_factory=dict)
    warm: set[str] = field(default_factory=set)
    backoff_until: float = 0.0

    def backed_off(self, now: float) -> bool:
        return now < self.backoff_until

    def back_off(self, now: float, settings: AutoscalerSettings) -> None:
        self.backoff_until = now + settings.initial_backoff_s

    def upcoming(self) -> int:
        return len(self.launching)

    def slices_for(self, node: str) -> list[ResourceSlice]:
        return []


@dataclass
class Scaled:
    replicas: int
    active: set[str] = field(default_factory=set)


class HandKeptCluster:
    """A ``ClusterPort``: reads answered from what the test put here, writes recorded in ``asked``."""

    def __init__(
        self, nodes: Sequence[Node] = (), pods: Sequence[Pod] = (), groups: Sequence[Group] = ()
    ) -> None:
        self.state = ClusterState(list(nodes))
        self.pods: dict[str, Status] = {p.key: Status(p) for p in pods}
        self.node_groups = {g.name: g for g in groups}
        self.disruption_budgets: list[DisruptionBudget] = []
        self.scaled: dict[str, Scaled] = {}  # by "<kind>/<ns>/<name>"
        self.lists: dict[str, int] = {}
        self.in_stock = True
        self.unready: dict[str, float] = {}  # nodes not Ready -> when they registered
        self.nominated: dict[str, str] = {}  # pending pods -> the node preemption nominated them to
        self.asked: list[tuple[object, ...]] = []

    # reads
    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return []

    def unschedulable_pods(self) -> list[Pod]:
        return [s.pod for s in self.pods.values() if s.message is not None and s.bound_s is None]

    def scheduler_unprocessed_pods(self, schedulers: AbstractSet[str]) -> list[Pod]:
        """The pending pods of those schedulers no scheduler has processed yet (no message)."""
        return [
            s.pod
            for s in self.pods.values()
            if s.pod.scheduler_name in schedulers
            and s.phase == "Pending"
            and s.message is None
            and s.bound_s is None
        ]

    def nominated_nodes(self) -> dict[str, str]:
        return self.nominated

    def daemonset_templates(self) -> list[Pod]:
        return []

    def daemon_pod_keys(self) -> set[str]:
        return set()

    def computes_on_gpus(self, pod_key: str) -> bool:
        return False

    def nodes_going_away(self) -> set[str]:
        return set()

    def unready_nodes(self) -> dict[str, float]:
        return self.unready

    def pods_version(self) -> tuple[int, ...]:
        return (len(self.pods),)

    def scale_target(self, target: str) -> Scaled | None:
        return self.scaled.get(target)

    def job(self, key: str) -> None:
        return None

    def queued_workload(self, pod: Pod) -> None:
        return None

    def pod_group_of(self, pod: Pod) -> PodGroup | None:
        return None

    def queue_created(self, pod: Pod) -> None:
        return None

    def list_length(self, name: str) -> int:
        return self.lists.get(name, 0)

    def pod_metric(self, pod: PodStatus, name: str) -> float | None:
        return None

    def pod_metric_source(self, pod: PodStatus) -> str:
        return pod.pod.key

    def target_pods_version(self, target: str) -> None:
        return None  # every sync reads every pod

    def pod_counter_rate(self, pod: PodStatus, name: str, window_s: float) -> float | None:
        return None

    def pod_resource_usage(self, pod: PodStatus, resource: str) -> float | None:
        return None

    # writes
    def launch(self, group: str, for_pods: tuple[str, ...], warm: bool) -> str | None:
        self.asked.append(("launch", group, for_pods))
        if not self.in_stock:
            return None
        g = self.node_groups[group]
        name = f"{group}-{len(g.nodes)}"
        g.nodes.add(name)
        g.launching[name] = Starting(for_pods, warm)
        return name

    def delete_node(self, name: str) -> None:
        self.asked.append(("delete", name))

    def cordon(self, name: str, unschedulable: bool) -> None:
        self.asked.append(("cordon", name, unschedulable))

    def evict_pod(self, key: str, grace_s: float) -> str | None:
        self.asked.append(("evict", key, grace_s))
        return None

    def pod_waits_for_node(self, key: str, provisioning: bool) -> None:
        self.asked.append(("waits", key, provisioning))

    def set_node_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        self.asked.append(("taints", name, taints))
        self.state.set_taints(name, taints)

    def scale(self, target: str, replicas: int) -> None:
        self.asked.append(("scale", target, replicas))
        d = self.scaled[target]
        d.replicas = replicas
        d.active = {f"{target.split('/', 1)[1]}-{i}" for i in range(replicas)}
        for k in d.active:
            self.pods.setdefault(
                k, Status(Pod(k.split("/")[1], namespace=k.split("/")[0]), "Running", ready=True)
            )

    def create_job(self, job: Job) -> None:
        self.asked.append(("job", job.name))

    def set_message(self, key: str, message: str) -> None:
        self.pods[key].message = message

    def hold(self, key: str, message: str) -> None:
        self.asked.append(("hold", key))
        self.pods[key].message = message

    def release(self, key: str, node_selector: dict[str, str], tolerations: tuple[Toleration, ...]) -> None:
        self.asked.append(("release", key, node_selector))
        self.pods[key].message = None

    def delete_pod(self, key: str, reason: str) -> None:
        self.asked.append(("delete-pod", key, reason))

    def workload_resumed(self, key: str) -> None:
        self.asked.append(("resumed", key))

    def workload_suspended(self, key: str) -> None:
        self.asked.append(("suspended", key))


def protocol_members(protocol: type) -> set[str]:
    """The names a class must have to implement ``protocol``: each protocol class's own methods and
    annotated attributes, up its bases (mypy does not check the tests, so this test does)."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if getattr(base, "_is_protocol", False) and base is not Protocol:
            names |= {n for n in vars(base) if not n.startswith("_")} | set(
                getattr(base, "__annotations__", {})
            )
    return names


def test_a_cluster_kept_by_hand_is_a_whole_cluster_port() -> None:
    """What a live backend must implement is the protocol, nothing more."""
    port: ClusterPort = HandKeptCluster()
    assert protocol_members(ClusterPort) - set(dir(port)) == set()
    assert port.state.size == 0 and port.unschedulable_pods() == []


H100 = NodePool("h100", gpu_node("h100-template", 8), min=0, max=2)
#: the soft taint a scan puts on a node it finds unneeded, at 0 s (``autoscaling.soft_taints``)
SOFT_TAINT = Taint("DeletionCandidateOfClusterAutoscaler", "0", "PreferNoSchedule")


def autoscaler(
    port: HandKeptCluster, clock: ManualClock, settings: AutoscalerSettings | None = None
) -> ClusterAutoscalerLoop:
    return ClusterAutoscalerLoop(port, clock, settings or AutoscalerSettings(), (), seed=0)


def asked_at(monkeypatch: pytest.MonkeyPatch, decision: str, clock: ManualClock) -> list[float]:
    """The times at which cluster-autoscaler's loop asks its pure ``decision`` (``scale_up``,
    ``scale_down``), as it asks them."""
    asked: list[float] = []
    real = getattr(cluster_autoscaler_loop, decision)

    def counting(request: Any) -> Any:
        asked.append(clock.now)
        return real(request)

    monkeypatch.setattr(cluster_autoscaler_loop, decision, counting)
    return asked


def test_cluster_autoscaler_asks_the_port_for_a_node_for_an_unschedulable_pod() -> None:
    port, clock = HandKeptCluster(pods=[gpu_pod("train", 8)], groups=[Group("h100", H100)]), ManualClock()
    port.pods["default/train"].message = "0/0 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert port.asked == [("launch", "h100", ("default/train",))]
    assert [(e.kind, e.nodes) for e in ca.events] == [("scale-up", ("h100-0",))]


def test_a_registered_upcoming_node_leaves_its_pods_to_its_template_copy() -> None:
    """``RunOnce`` takes the upcoming nodes already registered (``GetUpcomingNodes``' ``registeredUpcoming``,
    a GPU node whose GPUs are not allocatable yet being one) out of the ``ClusterSnapshot``, and the
    template copy it added for each stands for it (``core/static_autoscaler.go``): of two 60-cpu pods
    the first fits the copy for h100-0, not h100-0 itself as well, and the second needs a new node."""
    registered = gpu_node("h100-0", 8)
    group = Group("h100", H100, nodes={"h100-0"}, launching={"h100-0": Starting(())})
    pods = [gpu_pod(f"etl-{k}", 0, cpu=60, mem_gi=8) for k in range(2)]
    port, clock = HandKeptCluster([registered], pods, [group]), ManualClock()
    for pod in pods:
        port.pods[pod.key].message = "0/1 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert port.asked == [("launch", "h100", ("default/etl-1",))]


@pytest.mark.parametrize(("limit", "nodes"), [(2, 2), (0, 5), (1000, 5)])
def test_one_scale_up_adds_at_most_max_nodes_per_scaleup(limit: int, nodes: int) -> None:
    """``--max-nodes-per-scaleup`` (1000): the estimator's ``StaticThreshold`` stops adding nodes there
    (0: no limit); the pods left wait for the next scan."""
    group = Group("h100", replace(H100, max=10))
    assert nodes_added_for_five_pods([], group, AutoscalerSettings(max_nodes_per_scale_up=limit)) == nodes


def nodes_added_for_five_pods(nodes: list[Node], group: Group, settings: AutoscalerSettings) -> int:
    """The nodes one scan at 0 s adds for five pending 8-GPU pods, on ``nodes`` with ``group``."""
    pods = [gpu_pod(f"train-{k}", 8) for k in range(5)]
    port, clock = HandKeptCluster(nodes, pods, [group]), ManualClock()
    for pod in pods:
        port.pods[pod.key].message = f"0/{len(nodes)} nodes are available"
    ca = autoscaler(port, clock, settings)
    ca.arm(0.0)
    clock.run_until(0.0)
    [added] = [e.nodes for e in ca.events if e.kind == "scale-up"]
    return len(added)


def test_a_scale_up_adds_no_more_nodes_than_the_cores_left_below_the_cores_total_max() -> None:
    """``--cores-total``'s max (``ResourcesLeft``, ``ApplyLimits``): with one 96-core node in the group and
    a limit of 300 cores, 204 cores are left, two more nodes, though five pods want five."""
    group = Group("h100", replace(H100, max=10), nodes={"h100-0"})
    node = replace(gpu_node("h100-0", 8), pool="h100")
    assert nodes_added_for_five_pods([node], group, AutoscalerSettings(max_cores_total=300)) == 2


def test_a_node_of_no_group_counts_against_the_cores_total_max_too() -> None:
    """``ResourcesLeft`` counts the nodes no group owns (``coresMemoryTotal``'s node list) besides each
    group's size: one 96-core static node and one in the group leave 108 of 300 cores, one more node."""
    group = Group("h100", replace(H100, max=10), nodes={"h100-0"})
    nodes = [replace(gpu_node("h100-0", 8), pool="h100"), gpu_node("static-0", 8)]
    assert nodes_added_for_five_pods(nodes, group, AutoscalerSettings(max_cores_total=300)) == 1


def test_a_node_of_no_group_relabelled_or_given_gpus_counts_anew_against_the_gpu_total_max() -> None:
    """``ResourcesLeft`` reads the nodes no group owns as they are at each ask: a static node relabelled
    with a GPU type in place (GPU Feature Discovery) counts its 8 GPUs against that type's ``--gpu-total``
    from then on, and its allocatable GPUs when they change (``GetNodeGpuTarget``)."""
    port = HandKeptCluster(nodes=[gpu_node("static-0", 8)], groups=[Group("h100", replace(H100, max=10))])
    options = ScaleUpOptions(port, AutoscalerSettings(gpu_total=(("H100", 16),)), ())
    left = [options.resources_left()["H100"]]
    port.state.set_labels("static-0", {GPU_TYPE_LABEL: "H100"})
    left.append(options.resources_left()["H100"])
    port.state.set_allocatable("static-0", {**gpu_node("x", 4).capacity})
    left.append(options.resources_left()["H100"])
    assert left == [16, 8, 12]


def test_balance_similar_node_groups_launches_in_each_similar_group() -> None:
    """``--balance-similar-node-groups``: two alike empty groups share the two nodes two pods need
    (``balanceScaleUps``), one launch and one scale-up event each."""
    pods = [gpu_pod(f"train-{k}", 8) for k in range(2)]
    groups = [Group("h100-a", replace(H100, name="h100-a")), Group("h100-b", replace(H100, name="h100-b"))]
    port, clock = HandKeptCluster(pods=pods, groups=groups), ManualClock()
    for pod in pods:
        port.pods[pod.key].message = "0/0 nodes are available"
    ca = autoscaler(port, clock, AutoscalerSettings(balance_similar_node_groups=True))
    ca.arm(0.0)
    clock.run_until(0.0)
    assert sorted((e.pool, len(e.nodes)) for e in ca.events if e.kind == "scale-up") == [
        ("h100-a", 1),
        ("h100-b", 1),
    ]


def test_scans_without_pending_pods_ask_for_nothing_and_a_pod_that_then_waits_gets_its_node() -> None:
    port, clock = HandKeptCluster(pods=[gpu_pod("train", 8)], groups=[Group("h100", H100)]), ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert port.asked == [] and ca.events == []
    port.pods["default/train"].message = "0/0 nodes are available"
    ca.arm(10.0)
    clock.run_until(10.0)
    assert port.asked == [("launch", "h100", ("default/train",))]


def test_a_node_whose_cloud_cannot_tell_when_it_is_ready_is_checked_at_max_node_provision_time() -> None:
    """clusterstate: the scale-up request of a node not registered within maxNodeProvisionTime (15 min)
    times out and its group is backed off at the first scan after it (``updateScaleRequests``:
    ``ExpectedAddTime.Before(now)``: 910 s for a scale-up at 0 s), and the node, never registered, is
    deleted by the same scan (``removeOldUnregisteredNodes``); a real cloud gives no plan, so the loop
    always checks."""
    port, clock = HandKeptCluster(pods=[gpu_pod("train", 8)], groups=[Group("h100", H100)]), ManualClock()
    port.pods["default/train"].message = "0/0 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(15 * 60.0)
    assert ("delete", "h100-0") not in port.asked
    clock.run_until(15 * 60.0 + 10.0)
    assert ("delete", "h100-0") in port.asked
    assert [e.kind for e in ca.events[-2:]] == ["provision-timeout", "delete-unregistered"]
    assert port.node_groups["h100"].backoff_until == 15 * 60.0 + 10.0 + 5 * 60.0


def test_a_stock_out_backs_the_group_off_and_no_launch_is_asked_until_the_backoff_ends() -> None:
    """utils/backoff/exponential_backoff.go: a failed scale-up backs the group off for 5 minutes, its last
    instant included (``BackoffStatus``: not ``backoffUntil.Before(now)``): the next launch is asked at
    the scan after it."""
    port, clock = HandKeptCluster(pods=[gpu_pod("train", 8)], groups=[Group("h100", H100)]), ManualClock()
    port.pods["default/train"].message = "0/0 nodes are available"
    port.in_stock = False
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(300.0)
    assert port.asked == [("launch", "h100", ("default/train",))]
    assert (ca.events[0].kind, ca.events[0].reason) == ("scale-up-failed", "stock-out")
    assert ca.events[1].kind == "no-scale-up" and "backoff" in ca.events[1].reason
    clock.run_until(310.0)
    assert port.asked.count(("launch", "h100", ("default/train",))) == 2


def test_an_empty_node_is_drained_and_deleted_through_the_port_after_scale_down_unneeded_time() -> None:
    group = Group("h100", H100, nodes={"h100-0"})
    node = Node("h100-0", capacity=dict(gpu_node("x", 8).capacity), pool="h100")
    port, clock = HandKeptCluster(nodes=[node], groups=[group]), ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(600.0)  # unneeded since 0 s for 600 s: not more than scale-down-unneeded-time
    assert port.asked == [("taints", "h100-0", (SOFT_TAINT,))]  # (the scan that found it unneeded)
    clock.run_until(614.0)  # marked (cordoned) by the scan at 610 s (taintNodesSync) ...
    assert port.asked[1:] == [("cordon", "h100-0", True)]
    clock.run_until(615.0)  # ... then, with no pod to move, deleted --node-delete-delay-after-taint (5 s)
    assert port.asked[1:] == [("cordon", "h100-0", True), ("delete", "h100-0")]  # later (deleteNodesAsync)


def test_scans_with_nothing_new_reuse_scale_down_until_an_unneeded_node_ripens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ScaleDownReply.ripens_at``: h100-0, empty, is found unneeded at 0 s; the scans after it, with
    nothing to assess, do not ask scale-down again (its reply stands: unneeded since 0 s, 600 s to wait)
    until the scan past 600 s, which finds it ripe and starts its deletion."""
    node = Node("h100-0", capacity=dict(gpu_node("x", 8).capacity), pool="h100")
    port, clock = HandKeptCluster(nodes=[node], groups=[Group("h100", H100, nodes={"h100-0"})]), ManualClock()
    asked = asked_at(monkeypatch, "scale_down", clock)
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(600.0)
    assert asked[:2] == [0.0, 10.0] and asked[2:] == []  # (10 s: the soft taint put on it moved the cluster)
    assert ca.unneeded_since == {"h100-0": 0.0} and ca.gauges.unneeded == 1
    clock.run_until(610.0)
    assert asked[2:] == [610.0] and ("cordon", "h100-0", True) in port.asked


def scans_with_pods_moving_on_another_node(
    monkeypatch: pytest.MonkeyPatch, scaled_up_at: float
) -> tuple[list[float], ClusterAutoscalerLoop]:
    """h100-0 is full (``NotUnderutilized``), h100-1 empty (unneeded from 0 s); the last scale-up was at
    ``scaled_up_at``. Between the scans of 20 s to 40 s a pod is put on "cpu", a node of no group after both
    (a row no verdict looked at), and at 45 s h100-1 is filled. The times scale-down was asked, and the loop
    after the scan of 50 s."""
    gpus = dict(gpu_node("x", 8).capacity)
    nodes = [Node(f"h100-{k}", capacity=gpus, pool="h100") for k in range(2)] + [Node("cpu", capacity=gpus)]
    port, clock = (
        HandKeptCluster(nodes=nodes, groups=[Group("h100", H100, {"h100-0", "h100-1"})]),
        ManualClock(),
    )
    port.state.assign(gpu_pod("train", 8, owner=OwnerRef("Job", "train")), "h100-0", 0.0)
    asked = asked_at(monkeypatch, "scale_down", clock)
    ca = autoscaler(port, clock)
    ca.last_scale_up_s = scaled_up_at
    ca.arm(0.0)
    for t in (15.0, 25.0, 35.0):
        clock.run_until(t)
        port.state.assign(gpu_pod(f"web-{t:g}", 1, owner=OwnerRef("Job", "web")), "cpu", t)
    clock.run_until(40.0)
    assert ca.unneeded_since == {"h100-1": 0.0} and ca.gauges.unneeded == 1
    port.state.assign(gpu_pod("late", 8, owner=OwnerRef("Job", "late")), "h100-1", 45.0)
    clock.run_until(50.0)
    return asked, ca


@pytest.mark.parametrize("scaled_up_at", [-math.inf, 0.0])
def test_scans_whose_verdicts_all_stand_do_not_ask_scale_down_while_pods_move_elsewhere(
    monkeypatch: pytest.MonkeyPatch, scaled_up_at: float
) -> None:
    """``RemovalMemo.holds``: the pods put on "cpu" move the cluster, so each scan of 20 s to 40 s has nodes
    to assess, but no verdict of the last scan read that node: scale-down is not asked (its reply stands,
    out of cooldown and in it, after a scale-up at 0 s). h100-1 filled makes the scan of 50 s ask, and it
    is needed then; the unremovable counts are set out of cooldown only, the last one unreset."""
    asked, ca = scans_with_pods_moving_on_another_node(monkeypatch, scaled_up_at)
    assert asked == [0.0, 10.0, 50.0]  # (10 s: the soft taint put on h100-1 moved the cluster)
    assert ca.unneeded_since == {} and ca.gauges.unneeded == 0
    counts = {UnremovableReason.NOT_UNDERUTILIZED: 2, UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH: 1}
    assert ca.gauges.unremovable == ({} if scaled_up_at == 0.0 else counts)


def scans_of_random_pods(
    sizes: list[int], steps: list[list[tuple[int, int | None]]], scaled_up_at: float, stand: bool
) -> list[tuple[object, ...]]:
    """Three h100 nodes and a node of no group, pods of ``sizes`` GPUs put on a node or taken off (None) at
    5 s past each scan's 10 s, ``stand``: with ``_verdicts_stand`` as it is, else never taken. After each
    scan: the unneeded nodes, the gauges, what was asked of the port and the events."""
    gpus = dict(gpu_node("x", 8).capacity)
    names = ["h100-0", "h100-1", "h100-2", "cpu"]
    nodes = [Node(n, capacity=gpus, pool="h100" if n != "cpu" else None) for n in names]
    group = Group("h100", replace(H100, max=3), set(names[:3]))
    port, clock = HandKeptCluster(nodes=nodes, groups=[group]), ManualClock()
    pods = [gpu_pod(f"p{k}", size, owner=OwnerRef("Job", f"j{k}")) for k, size in enumerate(sizes)]
    ca = autoscaler(port, clock)
    ca.last_scale_up_s = scaled_up_at
    if not stand:
        ca._verdicts_stand = lambda *_: False  # type: ignore[method-assign]
    seen: list[tuple[object, ...]] = []
    ca.arm(0.0)
    for k, moves in enumerate(steps):
        clock.run_until(10.0 * k + 5.0)
        for pod_number, node in moves:
            pod = pods[pod_number]
            placed = pod.key in port.state.assignments
            if node is None and placed:
                port.state.unassign(pod.key)
            elif (
                node is not None
                and not placed
                and port.state.free_on(port.state.index[names[node]], GPU) >= sizes[pod_number]
            ):
                port.state.assign(pod, names[node], clock.now)
        clock.run_until(10.0 * k + 10.0)
        gauges = (ca.gauges.unneeded, dict(ca.gauges.unremovable))
        seen.append(
            (dict(ca.unneeded_since), gauges, list(port.asked), [(e.kind, e.nodes) for e in ca.events])
        )
    return seen


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=8, max_size=8),
    steps=st.lists(
        st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), st.integers(0, 3))), max_size=3),
        min_size=1,
        max_size=70,
    ),
    scaled_up_at=st.sampled_from([-math.inf, 0.0, 300.0]),
)
def test_scans_that_reuse_scale_down_leave_what_asking_it_every_scan_leaves(
    sizes: list[int], steps: list[list[tuple[int, int | None]]], scaled_up_at: float
) -> None:
    """Over random pods coming and going on the group's nodes and on a node of no group, scans that reuse
    the last scale-down where its verdicts all stand (``_verdicts_stand``) leave after every scan the same
    unneeded nodes, gauges, port calls (soft taints, cordons, deletions) and events as scans that ask
    ``scale_down`` each time, in cooldown and out of it, unneeded nodes ripening and going."""
    assert scans_of_random_pods(sizes, steps, scaled_up_at, True) == scans_of_random_pods(
        sizes, steps, scaled_up_at, False
    )


def test_a_soft_taint_someone_took_off_is_put_back_at_the_next_scan() -> None:
    """``updateSoftDeletionTaints`` marks every unneeded node each scan: h100-1, empty, gets the
    DeletionCandidate taint at 0 s; taken off at 15 s by someone else (the node's taints replaced), the scan
    of 20 s puts it back, and the scans between leave the node alone."""
    node = Node("h100-1", capacity=dict(gpu_node("x", 8).capacity), pool="h100")
    port, clock = HandKeptCluster(nodes=[node], groups=[Group("h100", H100, {"h100-1"})]), ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(15.0)
    assert [a[:2] for a in port.asked] == [("taints", "h100-1")]
    port.state.set_taints("h100-1", ())
    clock.run_until(20.0)
    assert [a[:2] for a in port.asked] == [("taints", "h100-1")] * 2
    assert [t.key for t in port.state.nodes[0].taints] == [SOFT_TAINT.key]


def test_scale_down_gauges_are_set_every_scan_and_the_unremovable_counts_only_out_of_cooldown() -> None:
    """``RunOnce``: ``UpdateUnneededNodesCount`` every scan once the unneeded nodes are found;
    ``UpdateUnremovableNodesCount`` only out of cooldown, setting the reasons it counted and leaving the
    others as they were (no reset). A scale-up at 0 s keeps scale-down in cooldown until 600 s: h100-1,
    empty, counts as unneeded from 0 s, the unremovable nodes (h100-0 full: ``NotUnderutilized``, h100-1:
    ``NotUnneededLongEnough``) from 600 s; at 610 s h100-1's deletion starts (deleted 5 s later,
    ``--node-delete-delay-after-taint``), still counted unneeded, and its reason's count stays 1; once it is
    going it is no candidate."""
    nodes = [Node(f"h100-{k}", capacity=dict(gpu_node("x", 8).capacity), pool="h100") for k in range(2)]
    port, clock = (
        HandKeptCluster(nodes=nodes, groups=[Group("h100", H100, {"h100-0", "h100-1"})]),
        ManualClock(),
    )
    port.state.assign(gpu_pod("train", 8, owner=OwnerRef("Job", "train")), "h100-0", 0.0)
    ca = autoscaler(port, clock)
    ca.last_scale_up_s = 0.0
    ca.arm(0.0)
    clock.run_until(590.0)
    assert ca.gauges == ScaleDownGauges(1, {})
    clock.run_until(600.0)
    counts = {UnremovableReason.NOT_UNDERUTILIZED: 1, UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH: 1}
    assert ca.gauges == ScaleDownGauges(1, counts)
    clock.run_until(610.0)
    # (soft-tainted in cooldown too)
    assert port.asked == [("taints", "h100-1", (SOFT_TAINT,)), ("cordon", "h100-1", True)]
    assert ca.gauges == ScaleDownGauges(1, counts)
    clock.run_until(615.0)
    assert port.asked[2:] == [("delete", "h100-1")]
    clock.run_until(620.0)
    assert ca.gauges == ScaleDownGauges(0, counts)


def test_the_nodes_of_a_group_at_its_min_are_no_scale_down_candidates() -> None:
    """``PreFilteringScaleDownNodeProcessor``: a node of a group whose size is at most its ``min`` is not
    a scale-down candidate: neither unneeded nor unremovable, and nothing keeps the loop scanning."""
    node = Node("h100-0", capacity=dict(gpu_node("x", 8).capacity), pool="h100")
    group = Group("h100", replace(H100, min=1), nodes={"h100-0"})
    port, clock = HandKeptCluster(nodes=[node], groups=[group]), ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(700.0)
    assert ca.unneeded_since == {} and ca.gauges == ScaleDownGauges(0, {}) and ca.armed_at is None


def test_scale_down_candidates_follow_the_groups_nodes_launches_warm_nodes_and_nodes_going() -> None:
    """Each scan's list is that of the groups as they are, though the last scan's is kept while they
    stand: every change between two scans shows in the next list."""
    nodes = [Node(f"h100-{k}", capacity=dict(gpu_node("x", 8).capacity), pool="h100") for k in range(3)]
    group = Group("h100", H100, nodes={"h100-0", "h100-1"})
    port, clock = HandKeptCluster(nodes=nodes[:2], groups=[group]), ManualClock()
    ca = autoscaler(port, clock)
    lists = [[c.node for c in ca._candidates()]]
    group.warm.add("h100-0")
    lists.append([c.node for c in ca._candidates()])
    group.warm.clear()
    ca.deleting.add("h100-1")
    lists.append([c.node for c in ca._candidates()])
    ca.deleting.clear()
    group.nodes.add("h100-2")
    group.launching["h100-2"] = Starting(())
    lists.append([c.node for c in ca._candidates()])
    del group.launching["h100-2"]
    lists.append([c.node for c in ca._candidates()])  # not in the cluster yet
    port.state.add_node(nodes[2])
    lists.append([c.node for c in ca._candidates()])
    assert lists == [
        ["h100-0", "h100-1"],
        ["h100-1"],
        ["h100-0"],
        ["h100-0", "h100-1"],
        ["h100-0", "h100-1"],
        ["h100-0", "h100-1", "h100-2"],
    ]
    assert {c.group_size for c in ca._candidates()} == {3}


def test_scale_down_candidates_stand_through_a_taint_or_a_cordon_and_follow_a_node_leaving() -> None:
    """The list depends on which nodes are in the cluster, not on their taints or cordons: a soft taint put
    between two scans keeps the last scan's list (the same object, not worked out again); a node leaving
    the cluster leaves the list though its group still counts it."""
    nodes = [Node(f"h100-{k}", capacity=dict(gpu_node("x", 8).capacity), pool="h100") for k in range(2)]
    group = Group("h100", H100, nodes={"h100-0", "h100-1"})
    port, clock = HandKeptCluster(nodes=nodes, groups=[group]), ManualClock()
    ca = autoscaler(port, clock)
    kept = ca._candidates()
    port.state.set_taints("h100-0", (SOFT_TAINT,))
    port.state.cordon("h100-1")
    assert ca._candidates() is kept
    port.state.remove_node("h100-1")
    assert [(c.node, c.group_size) for c in ca._candidates()] == [("h100-0", 2)]


def test_scale_up_is_asked_again_only_once_a_node_frees_room(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ScaleUpReply.room_only``: a pod waits for h100-0, launched. A pod placed on node a between two
    scans (room taken) leaves the last answer standing, not asked again; a pod gone from a (room freed)
    makes the loop ask again, and the pod now goes to a."""
    group = Group("h100", replace(H100, max=1), nodes={"h100-0"}, launching={"h100-0": Starting(())})
    port = HandKeptCluster([gpu_node("a", 8)], [gpu_pod("train", 4)], [group])
    port.state.assign(gpu_pod("a0", 6), "a", 0.0)
    port.pods["default/train"].message = "0/1 nodes are available"
    clock = ManualClock()
    asked = asked_at(monkeypatch, "scale_up", clock)
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    port.state.assign(gpu_pod("a1", 2), "a", 5.0)
    ca.arm(5.0)
    clock.run_until(10.0)
    port.state.unassign("default/a0")
    ca.arm(15.0)
    clock.run_until(20.0)
    assert asked == [0.0, 20.0]
    assert [node for _, node in ca._placed] == ["a"]


def test_keda_and_the_hpa_scale_a_deployment_through_the_port() -> None:
    """KEDA activates 0 -> 1 on a non-empty list; the HPA it owns then scales on the list length
    (External AverageValue: ceil(3 / 1) = 3)."""
    scenario = load_scenario([EXAMPLES / "seed-001" / "scaled-object.yaml"])
    port, clock = HandKeptCluster(), ManualClock()
    port.scaled["Deployment/ai-train/train-worker"] = Scaled(0)
    port.lists["train:jobs"] = 3
    loops = WorkloadAutoscalers(port, clock, scenario.hpas, scenario.scaled_objects, scenario.scaled_jobs)
    loops.start()
    clock.run_until(15.0)
    assert [a for a in port.asked if a[0] == "scale"] == [
        ("scale", "Deployment/ai-train/train-worker", 1),
        ("scale", "Deployment/ai-train/train-worker", 3),
    ]


KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: memory, nominalQuota: 768Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: queue, namespace: default}
spec: {clusterQueue: team}
"""


def test_kueue_gates_new_pods_and_releases_the_one_its_quota_admits_through_the_port(tmp_path: Path) -> None:
    (tmp_path / "kueue.yaml").write_text(KUEUE)
    objects = load_scenario([tmp_path / "kueue.yaml"]).kueue
    labels = {"kueue.x-k8s.io/queue-name": "queue"}
    pods = [gpu_pod("first", 8, labels=labels), gpu_pod("second", 8, labels=labels)]
    port, clock = HandKeptCluster(pods=pods), ManualClock()
    kueue = KueueQueues(port, clock, objects)
    assert all(kueue.gate(p) for p in pods)
    clock.run_until(0.0)
    assert port.asked[:2] == [("hold", "default/first"), ("hold", "default/second")]
    assert port.asked[2:] == [
        ("release", "default/first", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),
    ]
    message = port.pods["default/second"].message
    assert (
        message is not None
        and "insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed" in message
    )


def test_a_pod_without_a_queue_label_is_not_kueues(tmp_path: Path) -> None:
    (tmp_path / "kueue.yaml").write_text(KUEUE)
    kueue = KueueQueues(HandKeptCluster(), ManualClock(), load_scenario([tmp_path / "kueue.yaml"]).kueue)
    assert kueue.gate(gpu_pod("plain", 1)) is False
