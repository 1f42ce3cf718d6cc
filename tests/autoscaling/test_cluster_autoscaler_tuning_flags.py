"""cluster-autoscaler 1.34.5's flags GPU platform teams tune, through the simulator and the pure decisions.

Upstream (tag ``cluster-autoscaler-1.34.5``): ``core/static_autoscaler.go`` (``RunOnce``: ``if
a.ScaleDownEnabled``; ``isScaleDownInCooldown``: ``lastScaleDownDeleteTime.Add(ScaleDownDelayAfterDelete)
.After(currentTime)``, the time set when ``StartDeletion`` started deleting nodes; ``filterOutYoungPods``),
``core/scaledown/actuation/drain.go`` (``Evictor.evictPod``: the grace period cut to
``--max-graceful-termination-sec``) and ``simulator/drainability/rules`` (``rules.Default``: the system rule
only under ``--skip-nodes-with-system-pods``; ``replicated.Rule``: any controller makes a pod replicated
without ``--skip-nodes-with-custom-controller-pods``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_request, write
from gpufleet.autoscaling.cluster_autoscaler import Candidate, in_cooldown, scale_down
from gpufleet.autoscaling.drainability import DeleteOptions
from gpufleet.autoscaling.eviction import eviction_grace_s
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.simulation import AutoscalerSettings


def simulation(duration: str, autoscaler: str = "") -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: {duration}, autoscaler: {{{autoscaler}}}}}
"""


def pool(replicas: int, max_size: int) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: {replicas}
  min: 0
  max: {max_size}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
"""


def pod(name: str, annotations: str = "", gpus: int = 8) -> str:
    """A bare pod run to completion in 5 minutes (``restartPolicy: Never``)."""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 5m{annotations}}}
spec:
  restartPolicy: Never
  containers:
  - name: train
    image: trainer:1
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def events(sim: Any, kind: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == kind]


# -- --scale-down-delay-after-delete ------------------------------------------------------------------


def test_scale_down_delay_after_delete_holds_the_next_deletions_that_long(tmp_path: Path) -> None:
    """Five empty nodes, two deletions a scan (``maxScaleDownParallelism: 2``): by default they go at 610 s,
    620 s and 630 s; with ``scaleDownDelayAfterDelete: 1m`` each scan that started deletions puts scale-down
    in cooldown until a minute later (``isScaleDownInCooldown``: not while ``last + 1m`` is after now), so
    at 610 s, 670 s and 730 s."""
    default = run_simulation(write(tmp_path, simulation("20m", "maxScaleDownParallelism: 2"), pool(5, 5)))
    assert [t for t, _ in events(default, "scale-down")] == [610.0, 610.0, 620.0, 620.0, 630.0]
    delayed = simulation("20m", "maxScaleDownParallelism: 2, scaleDownDelayAfterDelete: 1m")
    sim = run_simulation(write(tmp_path, delayed, pool(5, 5)))
    assert events(sim, "scale-down") == [
        (610.0, ("h100-0",)),
        (610.0, ("h100-1",)),
        (670.0, ("h100-2",)),
        (670.0, ("h100-3",)),
        (730.0, ("h100-4",)),
    ]


def down(state: ClusterState, **kw: Any) -> Any:
    candidates = [Candidate(n.name, "h100", len(state.nodes), 0) for n in state.nodes]
    since = {n.name: 0.0 for n in state.nodes}
    return scale_down_request(state, candidates, **({"now": 700.0, "unneeded_since": since} | kw))


def test_a_deletion_more_recent_than_the_delay_is_a_cooldown_and_at_the_delay_it_is_not() -> None:
    """``isScaleDownInCooldown``: ``lastScaleDownDeleteTime.Add(delay).After(now)``: a deletion 30 s ago with
    a 1-minute delay is a cooldown (no node is asked to go), one exactly a minute ago is not, and the default
    delay (0) never is."""
    state = ClusterState([gpu_node("h100-0", 8)])
    held = down(state, last_delete_s=670.0, delay_after_delete_s=60.0)
    assert in_cooldown(held)
    reply = scale_down(held)
    assert reply.cooldown and reply.remove == ()
    assert not in_cooldown(down(state, last_delete_s=640.0, delay_after_delete_s=60.0))
    assert [c.node for c in scale_down(down(state, last_delete_s=700.0)).remove] == ["h100-0"]


# -- --scale-down-enabled -----------------------------------------------------------------------------


def test_scale_down_disabled_deletes_no_node_and_scale_up_goes_on(tmp_path: Path) -> None:
    """``scaleDownEnabled: false``: one node, two 8-GPU pods: the second pod still triggers a scale-up, but
    once both have finished (5 minutes) the two empty nodes stay, and no soft taint is put on them (upstream
    updates the soft taints only inside ``if a.ScaleDownEnabled``); by default both go."""
    scenario = [pool(1, 3), pod("a"), pod("b")]
    default = run_simulation(write(tmp_path, simulation("40m"), *scenario))
    assert len(events(default, "scale-up")) == 1
    assert sorted(n for _, (n,) in events(default, "scale-down")) == ["h100-0", "h100-1"]
    sim = run_simulation(write(tmp_path, simulation("40m", "scaleDownEnabled: false"), *scenario))
    assert [nodes for _, nodes in events(sim, "scale-up")] == [("h100-1",)]
    assert events(sim, "scale-down") == []
    assert all(not n.taints for n in sim.state.nodes)
    assert sorted(n.name for n in sim.state.nodes) == ["h100-0", "h100-1"]


# -- --new-pod-scale-up-delay and pod-scale-up-delay ----------------------------------------------------


def first_scale_up(tmp_path: Path, autoscaler: str, annotations: str = "") -> float:
    sim = run_simulation(write(tmp_path, simulation("10m", autoscaler), pool(0, 2), pod("a", annotations)))
    ((t, _),) = events(sim, "scale-up")
    return t


def test_a_pod_younger_than_new_pod_scale_up_delay_triggers_no_scale_up_until_older(tmp_path: Path) -> None:
    """``filterOutYoungPods``: a GPU pod created at 0 s scales the pool up at 30 s by default (not young, but
    very new until then: ``allPodsAreNew``); with ``newPodScaleUpDelay: 45s`` only once older than 45 s
    (``podAge > delay``): at the scan at 50 s, the loop waking for it with nothing else to do; at 40 s with a
    30 s delay (at 30 s it is exactly 30 s old)."""
    assert first_scale_up(tmp_path, "") == 30.0
    assert first_scale_up(tmp_path, "newPodScaleUpDelay: 45s") == 50.0
    assert first_scale_up(tmp_path, "newPodScaleUpDelay: 30s") == 40.0


def test_the_pod_scale_up_delay_annotation_lengthens_the_flag_and_never_shortens_it(tmp_path: Path) -> None:
    """``cluster-autoscaler.kubernetes.io/pod-scale-up-delay``: ``2m`` holds the pod past the flag's 45 s
    (scale-up at 130 s); ``10s`` is shorter than the flag and ``soon`` does not parse: both are logged
    upstream and the flag's 45 s kept (50 s); with the flag at 0, ``30s`` holds it to the scan at 40 s."""
    key = ", cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
    assert first_scale_up(tmp_path, "newPodScaleUpDelay: 45s", f"{key}: 2m") == 130.0
    assert first_scale_up(tmp_path, "newPodScaleUpDelay: 45s", f"{key}: 10s") == 50.0
    assert first_scale_up(tmp_path, "newPodScaleUpDelay: 45s", f"{key}: soon") == 50.0
    assert first_scale_up(tmp_path, "", f"{key}: 30s") == 40.0


def test_a_young_pod_gets_no_not_trigger_scale_up_until_old_enough(tmp_path: Path) -> None:
    """A pool of one node at most and two 8-GPU pods, created at 0 s and 15 s, with
    ``bypassedSchedulerNames`` set (no ``allPodsAreNew`` wait, which would hold them back too): by default the
    first scales it up at 0 s and the second is told it did not trigger a scale-up at the scan at 20 s; with
    ``newPodScaleUpDelay: 20s`` the young pods are left out before the orchestrator (no event): the first
    scales up at 30 s, and the second is told only at 40 s, once 25 s old."""
    pods = [pod(name, f", gpufleet.io/submit-at: {at}") for name, at in (("a", "0s"), ("b", "15s"))]

    def told(sim: Any) -> list[tuple[float, tuple[str, ...]]]:
        return [(e.t_s, e.pods) for e in sim.autoscaler.events if e.kind == "no-scale-up"][:1]

    bypassed = "bypassedSchedulerNames: [default-scheduler]"
    default = run_simulation(write(tmp_path, simulation("5m", bypassed), pool(0, 1), *pods))
    assert (events(default, "scale-up"), told(default)) == ([(0.0, ("h100-0",))], [(20.0, ("default/b",))])
    delayed = f"{bypassed}, newPodScaleUpDelay: 20s"
    sim = run_simulation(write(tmp_path, simulation("5m", delayed), pool(0, 1), *pods))
    assert (events(sim, "scale-up"), told(sim)) == ([(30.0, ("h100-0",))], [(40.0, ("default/b",))])


# -- --max-graceful-termination-sec -----------------------------------------------------------------------


def test_a_drain_cuts_each_grace_period_to_max_graceful_termination_sec() -> None:
    """``Evictor.evictPod``: ``terminationGracePeriodSeconds`` 3600 is cut to 600 by default and to 60 when
    set so; 0 (or less) cuts nothing; a shorter grace period is kept."""
    long = Pod("p", termination_grace_s=3600.0)
    assert [eviction_grace_s(long, cap) for cap in (600, 60, 0, -1)] == [600.0, 60.0, 3600.0, 3600.0]
    assert eviction_grace_s(Pod("q", termination_grace_s=30.0), 60) == 30.0


SPARE = """
apiVersion: v1
kind: Node
metadata: {name: spare}
spec:
  taints: [{key: spare, effect: PreferNoSchedule}]
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""
#: a pod's preference for the pool's nodes: placed there first (the spare node's PreferNoSchedule taint weighs
#: as the soft DeletionCandidate taint the empty pool node has at the first scan), and movable to the spare
#: node (neither a preference nor a PreferNoSchedule taint is a filter to the removal simulation)
PREFERS_THE_POOL = (
    "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: "
    "{matchExpressions: [{key: nvidia.com/gpu.product, operator: Exists}]}}]}}"
)

SERVE = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: serve}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: serve}}
  template:
    metadata:
      labels: {{app: serve}}
    spec:
      terminationGracePeriodSeconds: 3600
      {PREFERS_THE_POOL}
      containers:
      - name: serve
        image: server:1
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def test_the_drained_node_goes_once_the_cut_grace_period_is_over(tmp_path: Path) -> None:
    """A pool node running a 1-GPU serving pod (grace period 3600 s), which a spare node outside the pool
    could take: the node is drained, from ``--node-delete-delay-after-taint`` (5 s) after its scale-down
    (``deleteNodesAsync``); its drain takes 600 s by default (the flag's 600 s), 60 s with
    ``maxGracefulTerminationSec: 60``; the evicted pod ends when its grace period is over, and the node is
    deleted then. With 0 the pod keeps its 3600 s, but ``waitPodsToDisappear`` waits only the flag's 0 s plus
    the 30 s headroom: the drain fails 30 s after it began, the node is given back (its deletion aborted)."""
    delay = AutoscalerSettings().node_delete_delay_after_taint_s
    ends, deleted = {}, {}
    for cap, field in (
        (600, ""),
        (60, "maxGracefulTerminationSec: 60"),
        (3600, "maxGracefulTerminationSec: 0"),
    ):
        sim = run_simulation(write(tmp_path, simulation("3h", field), pool(1, 1), SPARE, SERVE))
        evicted = min((r for r in sim.records.values() if r.reason == "Evicted"), key=lambda r: r.bound_s)
        drained_at = min(t for t, (n,) in events(sim, "scale-down") if n == evicted.node) + delay
        ends[cap] = evicted.finished_s - drained_at
        deleted[cap] = sim.nodes[evicted.node].deleted_s
        failed = [
            (e.t_s - drained_at, e.reason) for e in sim.autoscaler.events if e.kind == "scale-down-failed"
        ]
        if cap == 3600:
            why = f"Failed to drain node /{evicted.node}: pods remaining after timeout"
            why = f"failed to drain and delete node: {why}"
            assert failed[0] == (30.0, why)
        else:
            assert failed == [] and deleted[cap] == drained_at + cap
    assert ends == {600: 600.0, 60: 60.0, 3600: 3600.0}


# -- --skip-nodes-with-system-pods, --skip-nodes-with-custom-controller-pods ---------------------------------


def test_the_delete_options_turn_the_system_and_custom_controller_rules_off() -> None:
    """``rules.Default``: a node whose only pod is an unprotected kube-system pod (a ReplicaSet's, just
    placed) or a pod of a custom controller (a ``RayCluster``'s) is blocked by default
    (``UnmovableKubeSystemPod``, ``NotReplicated``) and removable with the matching option off; a pod with no
    controller at all blocks either way."""
    cases = [
        (gpu_pod("dns", 1, namespace="kube-system", owner=OwnerRef("ReplicaSet", "dns")), "system"),
        (gpu_pod("head", 1, owner=OwnerRef("RayCluster", "ray")), "custom"),
    ]
    for placed, option in cases:
        state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
        state.assign(placed, "h100-0", 700.0)
        blocked = scale_down(down(state)).not_unneeded
        assert [(n, why.reason) for n, why in blocked] == [("h100-0", UnremovableReason.BLOCKED_BY_POD)]
        off = DeleteOptions(skip_nodes_with_system_pods=option != "system",
                            skip_nodes_with_custom_controller_pods=option != "custom")  # fmt: skip
        assert scale_down(down(state, delete_options=off)).not_unneeded == ()
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    state.assign(gpu_pod("naked", 1), "h100-0", 700.0)
    none_kept = DeleteOptions(False, False)
    assert [n for n, _ in scale_down(down(state, delete_options=none_kept)).not_unneeded] == ["h100-0"]


def test_skip_nodes_with_custom_controller_pods_false_lets_the_simulator_drain_them(tmp_path: Path) -> None:
    """A pool node running a pod owned by a custom controller (``ownerReferences`` kind ``RayCluster``), which
    the spare node could take, is kept by default (``NotReplicated``) and drained with
    ``skipNodesWithCustomControllerPods: false``."""
    custom = f"""
apiVersion: v1
kind: Pod
metadata:
  name: head
  ownerReferences: [{{apiVersion: ray.io/v1, kind: RayCluster, name: ray, uid: u1, controller: true}}]
spec:
  {PREFERS_THE_POOL}
  containers:
  - name: head
    image: ray:1
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
    scenario = [pool(1, 1), SPARE, custom]
    default = run_simulation(write(tmp_path, simulation("30m"), *scenario))
    assert events(default, "scale-down") == []
    off = simulation("30m", "skipNodesWithCustomControllerPods: false")
    sim = run_simulation(write(tmp_path, off, *scenario))
    assert events(sim, "scale-down") == [(610.0, ("h100-0",))]


# -- --drain-priority-config, --max-pod-eviction-time -------------------------------------------------------


def test_drain_priority_config_gives_each_priority_group_its_own_grace_period(tmp_path: Path) -> None:
    """``--drain-priority-config`` (``drainNodeWithPodsBasedOnPodPriority``): the serving pod (priority 0,
    grace period 3600 s) falls in the ``0:45`` group (the ``100000:5`` one is above it): evicted with 45 s,
    and the node deleted once it has left, 45 s after the drain began (``--node-delete-delay-after-taint``,
    5 s, after the scale-down)."""
    config = "drainPriorityConfig: '100000:5,0:45'"
    sim = run_simulation(write(tmp_path, simulation("3h", config), pool(1, 1), SPARE, SERVE))
    (evicted,) = [r for r in sim.records.values() if r.reason == "Evicted"]
    (scaled_down_at,) = [t for t, (n,) in events(sim, "scale-down") if n == evicted.node]
    drained_at = scaled_down_at + AutoscalerSettings().node_delete_delay_after_taint_s
    assert evicted.finished_s - drained_at == 45.0
    assert sim.nodes[evicted.node].deleted_s == drained_at + 45.0
    assert events(sim, "scale-down-failed") == []


BUDGET = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: serve}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: serve}
"""


def test_the_eviction_api_refuses_an_eviction_its_pod_disruption_budget_does_not_allow(
    tmp_path: Path,
) -> None:
    """The simulator's Eviction API (``pkg/registry/core/pod/storage/eviction.go``): two serving pods under
    ``maxUnavailable: 1``: the first eviction is allowed, the second refused (429) while the first pod
    terminates (no longer healthy: ``disruptionsAllowed`` 0); a pod already terminating is no refusal."""
    two = SERVE.replace("replicas: 1", "replicas: 2")
    sim = run_simulation(write(tmp_path, simulation("30m", "scaleDownEnabled: false"), SPARE, two, BUDGET))
    first, second = sorted(k for k, r in sim.records.items() if r.phase == "Running")
    assert sim.evict_pod(first, 30.0) is None
    assert sim.records[first].terminating
    assert sim.evict_pod(second, 30.0) == "Cannot evict pod as it would violate the pod's disruption budget."
    assert not sim.records[second].terminating
    assert sim.evict_pod(first, 30.0) is None


def test_the_eviction_api_refuses_a_pod_two_budgets_cover(tmp_path: Path) -> None:
    """``EvictionREST.Create``: a pod more than one PodDisruptionBudget selects is not evicted (500), however
    many disruptions they allow."""
    second_budget = BUDGET.replace("name: serve", "name: serve-too")
    sim = run_simulation(write(tmp_path, simulation("30m", "scaleDownEnabled: false"), SPARE, SERVE, BUDGET,
                               second_budget))  # fmt: skip
    (serving,) = [k for k, r in sim.records.items() if r.phase == "Running"]
    said = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    assert sim.evict_pod(serving, 30.0) == said
    assert not sim.records[serving].terminating
