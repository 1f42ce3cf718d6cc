"""cluster-autoscaler's expendable pods and pods waiting for a preemption (``autoscaling.expendable``).

Upstream (1.34.5): ``core/utils/expendable.go`` (``IsExpendablePod``: priority below
``--expendable-pods-priority-cutoff``, -10 by default; ``FilterOutExpendableAndSplit``);
``core/podlistprocessor/filter_out_expendable.go`` (expendable pending pods never trigger a scale-up; a pod
nominated to a node the cluster has waits for the preemption there, ``ForceAddPod``-ed onto it in the
snapshot); ``core/static_autoscaler.go`` ``RunOnce`` (the ``ClusterSnapshot`` is built without the expendable
scheduled pods: scale-up sees their room as free, scale-down ignores them) and
``core/scaledown/actuation/actuator.go`` ``createSnapshot`` (a drain does not evict them: they end with the
node). The FAQ: "They can be killed without any consideration during scale down and they don't cause scale
up", and its overprovisioning recipe relies on placeholder pods at -10 (not below the cutoff) triggering
scale-ups.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_with, scale_up_reply, write
from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownReply,
    ScaleUpReply,
)
from gpufleet.autoscaling.expendable import expendable_on
from gpufleet.autoscaling.provisioning_request import (
    CHECK_CAPACITY,
    PodSet,
    ProvisioningRequest,
    ProvisionRequest,
    Result,
    provision,
)
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.autoscaling.scale_down import Unremovable, UnremovableReason
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())
RS = OwnerRef("ReplicaSet", "serve")
POOL = PoolOption("h100", gpu_node("template", 8), room=5, size=2, max_size=7)


def pod(name: str, gpus: int, priority: int = 0, owner: OwnerRef | None = RS) -> Pod:
    made: Pod = gpu_pod(name, gpus, priority=priority, owner=owner)
    return made


def cluster(*on_nodes: tuple[Pod, str]) -> ClusterState:
    """Two 8-GPU nodes, h100-0 and h100-1, running ``on_nodes``."""
    state = ClusterState([gpu_node("h100-0", 8), gpu_node("h100-1", 8)])
    for p, node in on_nodes:
        state.assign(p, node, 0.0)
    return state


def up(state: ClusterState, pending: list[Pod], **kw: Any) -> ScaleUpReply:
    return scale_up_reply(state, pending, [POOL], **kw)


def down(state: ClusterState, **kw: Any) -> ScaleDownReply:
    candidates = [Candidate(n.name, "h100", 2, 0) for n in state.nodes]
    return scale_down_with(state, candidates, **kw)


FULL = (pod("busy-0", 8), "h100-0"), (pod("busy-1", 8), "h100-1")


# -- scale-up ---------------------------------------------------------------------------------------


def test_an_expendable_pending_pod_triggers_no_scale_up_and_gets_no_message() -> None:
    """``filterOutExpendable``: a pod below the cutoff (-10) is dropped before ``filterOutSchedulable`` and
    the orchestrator: no scale-up, no ``NotTriggerScaleUp``; at the cutoff it is a candidate like any
    other."""
    state = cluster(*FULL)
    assert up(state, [pod("placeholder", 8, priority=-11)]) == ScaleUpReply()
    at_cutoff = up(state, [pod("placeholder", 8, priority=-10)]).scale_up
    assert at_cutoff is not None and (at_cutoff.group, at_cutoff.nodes) == ("h100", 1)
    assert up(state, [pod("placeholder", 8, priority=-10)], expendable_cutoff=-5) == ScaleUpReply()


def test_the_room_of_expendable_scheduled_pods_is_free_for_filter_out_schedulable() -> None:
    """The snapshot is built without the expendable scheduled pods (``FilterOutExpendablePods``): a pending
    8-GPU pod fits on h100-1, whose only pod is an expendable placeholder, and triggers no scale-up."""
    state = cluster(FULL[0], (pod("placeholder", 8, priority=-20), "h100-1"))
    reply = up(state, [pod("train", 8)])
    assert reply.scale_up is None
    assert [(p.name, node) for p, node in reply.placed] == [("train", "h100-1")]
    grew = up(state, [pod("train", 8)], expendable_cutoff=-20).scale_up  # -20 is not below -20
    assert grew is not None and grew.pods == ("default/train",)


def test_a_pod_nominated_to_a_node_waits_for_the_preemption_there() -> None:
    """``FilterOutExpendableAndSplit``: a pending pod nominated to h100-1 (its victim still terminating
    there) is no scale-up candidate; ``addPreemptingPodsToSnapshot`` puts it on h100-1 whether it fits or
    not, and the reply lists it there for scale-down."""
    state = cluster(*FULL)
    reply = up(state, [pod("urgent", 8, priority=1000)], nominated={"default/urgent": "h100-1"})
    assert reply.scale_up is None and reply.not_triggered == ()
    assert [(p.name, node) for p, node in reply.placed] == [("urgent", "h100-1")]


def test_a_pod_nominated_to_a_node_that_is_gone_is_a_scale_up_candidate() -> None:
    """``FilterOutExpendableAndSplit``: "has nominatedNodeName set to ... but node is gone": the pod is a
    candidate as if not nominated."""
    reply = up(cluster(*FULL), [pod("urgent", 8, priority=1000)], nominated={"default/urgent": "h100-9"})
    assert reply.scale_up is not None and reply.scale_up.pods == ("default/urgent",)


def test_a_pod_waiting_for_a_preemption_takes_its_room_for_the_other_pending_pods() -> None:
    """``ForceAddPod`` comes before ``filterOutSchedulable``: the nominated 6-GPU pod takes h100-1's room, so
    a 4-GPU pod that would have fitted there does not and triggers a scale-up."""
    state = cluster(FULL[0], (pod("small", 2, priority=-5), "h100-1"))
    alone = up(state, [pod("job", 4)])
    assert alone.scale_up is None and [n for _, n in alone.placed] == ["h100-1"]
    both = up(state, [pod("job", 4), pod("urgent", 6, priority=1000)], nominated={"default/urgent": "h100-1"})
    assert both.scale_up is not None and both.scale_up.pods == ("default/job",)
    assert [(p.name, node) for p, node in both.placed] == [("urgent", "h100-1")]


# -- scale-down -------------------------------------------------------------------------------------


def test_a_node_running_only_expendable_pods_is_empty() -> None:
    """Scale-down reads the snapshot without expendable pods: h100-1, full of a placeholder at -20, is 0%
    used, unneeded, and once unneeded long enough removed as an empty node (no pod to reschedule), though no
    other node has room for the placeholder; at -10 it is 100% used."""
    state = cluster(FULL[0], (pod("placeholder", 8, priority=-20), "h100-1"))
    reply = down(state)
    assert reply.unneeded_since == {"h100-1": 0.0}
    later = down(state, now=610.0, unneeded_since={"h100-1": 0.0}, max_drain_parallelism=0)
    assert [c.node for c in later.remove] == ["h100-1"]  # empty: no drain budget needed
    kept = down(cluster(FULL[0], (pod("placeholder", 8, priority=-10), "h100-1")))
    assert dict(kept.not_unneeded)["h100-1"] == Unremovable(
        UnremovableReason.NOT_UNDERUTILIZED, "utilization 1.00 > 0.5"
    )


def test_an_expendable_pod_does_not_block_a_drain_nor_take_the_room_a_drain_moves_to() -> None:
    """The removal simulation neither judges the expendable pods (a bare one would block the drain,
    ``NotReplicated``) nor counts them on the nodes the moved pods go to: h100-0 (a 2-GPU job pod and a bare
    placeholder) is unneeded, its job pod moving to h100-1 where a 7-GPU placeholder sits."""
    bare = pod("bare", 1, priority=-20, owner=None)
    state = cluster((pod("run", 2), "h100-0"), (bare, "h100-0"), (pod("filler", 7, priority=-20), "h100-1"))
    assert down(state).unneeded_since == {"h100-0": 0.0, "h100-1": 0.0}
    counted = dict(down(state, expendable_cutoff=-20).not_unneeded)
    assert counted["h100-0"].reason is UnremovableReason.BLOCKED_BY_POD


def test_a_pod_waiting_for_a_preemption_counts_on_its_node_in_scale_down() -> None:
    """The nominated pod scale-up put on h100-1 (``ScaleUpReply.placed``) is in the snapshot scale-down reads:
    h100-1, its 8-GPU victim expendable, is 100% used, not unneeded."""
    state = cluster(FULL[0], (pod("victim", 8, priority=-20), "h100-1"))
    placed = up(state, [pod("urgent", 8, priority=1000)], nominated={"default/urgent": "h100-1"}).placed
    assert down(state).unneeded_since == {"h100-1": 0.0}
    assert (
        dict(down(state, placed=placed).not_unneeded)["h100-1"].reason is UnremovableReason.NOT_UNDERUTILIZED
    )


def test_a_kept_verdict_does_not_stand_under_another_cutoff() -> None:
    """``removal_memo``: the expendable pods follow from the cutoff; a verdict kept under one does not stand
    under another."""
    state, memo = cluster(FULL[0], (pod("placeholder", 8, priority=-20), "h100-1")), RemovalMemo()
    assert down(state, memo=memo).unneeded_since == {"h100-1": 0.0}
    assert down(state, memo=memo, expendable_cutoff=-20).unneeded_since == {}


# -- through the simulator --------------------------------------------------------------------------

NODE_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 1
  max: 3
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""


def placeholders(priority: int, replicas: int) -> str:
    """The FAQ's overprovisioning: a PriorityClass and a Deployment of 8-GPU pause pods at that priority."""
    return f"""
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: overprovisioning}}
value: {priority}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: placeholder}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: placeholder}}
  template:
    metadata:
      labels: {{app: placeholder}}
    spec:
      priorityClassName: overprovisioning
      terminationGracePeriodSeconds: 0
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.9
        resources:
          limits: {{nvidia.com/gpu: 8}}
"""


def simulation(duration: str, cutoff: int | None = None) -> str:
    autoscaler = "" if cutoff is None else f", autoscaler: {{expendablePodsPriorityCutoff: {cutoff}}}"
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: {duration}{autoscaler}}}
"""


def scale_events(sim: Any) -> list[tuple[float, str, tuple[str, ...], tuple[str, ...]]]:
    return [(e.t_s, e.kind, e.nodes, e.pods) for e in sim.autoscaler.events if e.kind.startswith("scale-")]


@pytest.mark.parametrize(("priority", "cutoff"), [(-20, None), (-10, -5)])
def test_an_expendable_placeholder_triggers_no_scale_up_and_its_node_goes_as_empty(
    tmp_path: Path, priority: int, cutoff: int | None
) -> None:
    """Two placeholders below the cutoff (-20 under the default -10, or -10 under
    ``expendablePodsPriorityCutoff: -5``) on a pool of one node: the second, pending, triggers no scale-up;
    the node running the first is empty to scale-down, its deletion started at the scan after 10 minutes
    and carried out ``--node-delete-delay-after-taint`` (5 s) later (``deleteNodesAsync``), the placeholder
    not evicted but ending with it (``NodeDeleted``); its replacement triggers no scale-up either."""
    sim = run_simulation(write(tmp_path, NODE_POOL, placeholders(priority, 2), simulation("30m", cutoff)))
    assert scale_events(sim) == [(610.0, "scale-down", ("h100-0",), ())]
    ended = [(k, r.log[-2:]) for k, r in sorted(sim.records.items()) if r.deleted_s is not None]
    assert ended == [("default/placeholder-0", [(615.0, "terminating"), (615.0, "deleted")])]
    assert sim.records["default/placeholder-0"].reason == "NodeDeleted"
    assert sorted(k for k, r in sim.records.items() if r.phase == "Pending") == [
        "default/placeholder-1",
        "default/placeholder-2",
    ]


TRAIN = """
apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {gpufleet.io/duration: 1h, gpufleet.io/submit-at: 20m}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 8}
"""


def test_placeholders_at_minus_ten_make_the_room_the_faq_s_overprovisioning_recipe_keeps(
    tmp_path: Path,
) -> None:
    """The FAQ's overprovisioning recipe (placeholders at -10, not below the default cutoff): the pending
    placeholder triggers a scale-up once 30 s old (``allPodsAreNew``'s wait for a new GPU pod: at 30 s); at 20
    minutes a training pod preempts a placeholder and runs in its room without a scale-up, and the
    placeholder's replacement, created then, triggers the next one 30 s later."""
    sim = run_simulation(write(tmp_path, NODE_POOL, placeholders(-10, 2), TRAIN, simulation("40m")))
    assert scale_events(sim) == [
        (30.0, "scale-up", ("h100-1",), ("default/placeholder-1",)),
        (1230.0, "scale-up", ("h100-2",), ("default/placeholder-2",)),
    ]
    assert sim.records["default/train"].phase == "Running"


PREEMPTION = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: batch
  annotations: {gpufleet.io/duration: 2h}
spec:
  terminationGracePeriodSeconds: 300
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 8}
---
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  annotations: {gpufleet.io/duration: 1h, gpufleet.io/submit-at: 60s}
spec:
  priorityClassName: high
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 8}
"""


def test_a_pod_nominated_after_preempting_triggers_no_scale_up(tmp_path: Path) -> None:
    """At 60 s a high-priority pod preempts the batch pod (300 s grace) and is nominated to its node: while
    it waits there it is no scale-up candidate (``FilterOutExpendableAndSplit``), so no node is launched for
    it (without the rule one was, at 60 s); it binds on h100-0 once the victim is gone, at 360 s."""
    sim = run_simulation(write(tmp_path, NODE_POOL, PREEMPTION, simulation("30m")))
    assert scale_events(sim) == []
    urgent = sim.records["default/urgent"]
    assert (urgent.node, urgent.bound_s) == ("h100-0", 360.0)


def test_the_expendable_pods_kept_follow_the_pods_that_come_and_go() -> None:
    """``expendable_on`` keeps its answer in the cluster's memo and reads again only the nodes changed since:
    each answer is the one a fresh read gives."""
    state = cluster(FULL[0])
    assert expendable_on(state, -10) == {}
    state.assign(pod("low-a", 4, priority=-20), "h100-1", 0.0)
    state.assign(pod("low-b", 2, priority=-11), "h100-1", 0.0)
    assert {i: [a.pod.name for a in on] for i, on in expendable_on(state, -10).items()} == {
        1: ["low-a", "low-b"]
    }
    state.unassign("default/low-a")
    assert {i: [a.pod.name for a in on] for i, on in expendable_on(state, -10).items()} == {1: ["low-b"]}
    assert expendable_on(state, -11) == {}
    state.remove_node("h100-1")
    assert expendable_on(state, -10) == {}


def test_a_provisioning_request_finds_the_room_of_expendable_pods() -> None:
    """The ProvisioningRequest orchestrator reads the same snapshot (``provReqOrchestrator`` over
    ``AutoscalingContext.ClusterSnapshot``): a check-capacity request for two 8-GPU pods finds its capacity
    on the two nodes only placeholders at -20 fill (``CapacityIsFound``); under a cutoff of -20 it does
    not."""
    state = cluster(*((pod(f"placeholder-{k}", 8, priority=-20), f"h100-{k}") for k in range(2)))
    template = gpu_pod("trainer", 8)
    r = ProvisioningRequest("check", "ml", CHECK_CAPACITY, (PodSet("trainer", 2, template),), {})
    found = provision(ProvisionRequest(0.0, state, PROFILE, [r], r.key))
    assert found.result is Result.SUCCESSFUL
    not_found = provision(ProvisionRequest(0.0, state, PROFILE, [r], r.key, expendable_cutoff=-20))
    assert not_found.result is Result.NO_OPTIONS
