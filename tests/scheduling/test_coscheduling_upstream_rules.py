"""Coscheduling's rules of scheduler-plugins v0.34.7 (``Less``, ``core.PreFilter``,
``CheckClusterResource``, ``Permit``'s PodGroupNotFound, ``podGroupRejectPercentage``), through gpufleet's
scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.coscheduling import Coscheduling
from gpufleet.scheduling.queue import QueuedPod
from gpufleet.scheduling.scheduler import Outcome, Scheduler

LABEL = "scheduling.x-k8s.io/pod-group"


def gang_scheduler(
    group: PodGroup, members: list[Pod], args: Mapping[str, object] | None = None
) -> tuple[Scheduler, ClusterState]:
    state = ClusterState([gpu_node("a"), gpu_node("b")])
    gangs = GangView(state)
    profile = ProfileConfig(
        "default-scheduler",
        plugins={
            "multiPoint": PluginSet((PluginRef("Coscheduling"),)),
            "queueSort": PluginSet((PluginRef("Coscheduling"),), ("*",)),
        },
        plugin_args={"Coscheduling": dict(args or {})},
    )
    scheduler = Scheduler(SchedulerConfig("gang", [profile]), state, gangs)
    gangs.add_group(group)
    for member in members:
        gangs.add_pod(member)
        scheduler.add(member, 0.0)
    return scheduler, state


def member(i: int, gpus: int = 4, **kw: object) -> Pod:
    return replace(gpu_pod(f"m-{i}", gpus, labels={LABEL: "g"}), **kw)  # type: ignore[arg-type]


def outcomes(scheduler: Scheduler) -> dict[str, Outcome]:
    return {o.pod.name: o for o in scheduler.run(0.0) if o.kind != "preempting"}


def test_a_gang_whose_members_without_scheduling_gates_are_too_few_is_refused_at_pre_filter() -> None:
    """``PreFilter``: each member with scheduling gates counts against the quorum ("cannot proceed due to
    gated pods in the same PodGroup"), so the ungated members hold no node while they could not run."""
    members = [member(0), member(1), member(2, scheduling_gates=("example-gate",))]
    scheduler, state = gang_scheduler(PodGroup("g", "default", min_member=3), members)
    out = outcomes(scheduler)
    assert out["m-0"].kind == out["m-1"].kind == "unschedulable"
    assert (out["m-0"].message or "").startswith(
        "0/2 nodes are available: pre-filter pod m-0 cannot proceed due to gated pods in the same PodGroup."
    )
    assert not state.assignments and not scheduler.waiting


def test_a_gang_whose_min_resources_the_cluster_cannot_hold_is_refused_at_pre_filter() -> None:
    """``CheckClusterResource``: 2 nodes of 8 GPUs cannot hold ``minResources`` of 20 GPUs, whatever the
    members ask; the message says what is left uncovered."""
    group = PodGroup("g", "default", min_member=2, min_resources={"nvidia.com/gpu": 20})
    scheduler, state = gang_scheduler(group, [member(0), member(1)])
    out = outcomes(scheduler)
    assert out["m-0"].kind == "unschedulable"
    assert (out["m-0"].message or "").startswith(
        "0/2 nodes are available: resource gap: map[nvidia.com/gpu:4]."
    )
    assert not state.assignments


def test_min_resources_count_the_gangs_own_pods_as_free() -> None:
    """``getNodeResource`` leaves the group's own pods out of what a node has requested: the second member
    passes PreFilter while the first, waiting at Permit, holds half of the cluster's GPUs."""
    group = PodGroup("g", "default", min_member=2, min_resources={"nvidia.com/gpu": 16})
    scheduler, _ = gang_scheduler(group, [member(0, 8), member(1, 8)])
    out = outcomes(scheduler)
    assert [o.kind for o in out.values()] == ["bound", "bound"]


def test_pod_group_reject_percentage_decides_when_post_filter_lets_the_gang_go() -> None:
    """``podGroupRejectPercentage``: with 50, a gang of 4 with 2 members waiting (a 50 % gap) keeps them when
    its third member cannot be placed; with the default, 10, they are rejected."""
    for percentage, kept in ((50, True), (None, False)):
        members = [member(0), member(1), member(2, 16), member(3)]
        args = {} if percentage is None else {"podGroupRejectPercentage": percentage}
        scheduler, _ = gang_scheduler(PodGroup("g", "default", min_member=4), members, args)
        out = outcomes(scheduler)
        assert out["m-2"].kind == "unschedulable"
        assert (out["m-0"].kind == "waiting") is kept, percentage
        assert len(scheduler.waiting) == (3 if kept else 1), percentage


def test_less_breaks_a_tie_of_creation_time_by_the_pods_name_not_the_groups() -> None:
    """``Less``: of equal priority and creation time, the pod whose ``namespace/name`` is smaller goes first
    (``GetNamespacedName`` of the pods), whatever their groups' names or the order they came in."""
    state = ClusterState([gpu_node("a")])
    gangs = GangView(state)
    gangs.add_group(PodGroup("zeta", "default"))
    gangs.add_group(PodGroup("alpha", "default"))
    a = gpu_pod("a-0", 1, labels={LABEL: "zeta"})
    b = gpu_pod("b-0", 1, labels={LABEL: "alpha"})
    b10, b2 = gpu_pod("b-10", 1, labels={LABEL: "alpha"}), gpu_pod("b-2", 1, labels={LABEL: "alpha"})
    plugin = Coscheduling()
    keys = {
        p.name: plugin.sort_key(QueuedPod(p, seq, 0.0, 0.0), gangs) for seq, p in enumerate((b2, b, b10, a))
    }
    assert sorted(keys, key=keys.__getitem__) == ["a-0", "b-0", "b-10", "b-2"]


def test_a_pod_whose_pod_group_does_not_exist_is_rejected_at_permit() -> None:
    """``Permit``: PodGroupNotFound is Unschedulable "PodGroup not found"; the scheduling cycle forgets the
    assumed pod and fails it with a FitError of one node."""
    scheduler, state = gang_scheduler(PodGroup("g", "default", min_member=1), [])
    orphan = gpu_pod("orphan", 1, labels={LABEL: "missing"})
    scheduler.gangs.add_pod(orphan)
    scheduler.add(orphan, 0.0)
    out = outcomes(scheduler)
    assert out["orphan"].kind == "unschedulable"
    assert out["orphan"].message == "0/1 nodes are available: 1 PodGroup not found."
    assert not state.assignments and not scheduler.waiting
    assert scheduler.queue.unschedulable["default/orphan"].rejectors == frozenset({"Coscheduling"})


def test_a_gangs_first_member_waiting_at_permit_sends_its_siblings_back_to_the_queue() -> None:
    """``ActivateSiblings`` (TestPodGroupBackoffTime's ``wantActivatedPods``): m-0 and m-1, refused at
    PreFilter while m-2 is gated, wait for no event; when m-2, ungated, is the gang's first to wait at
    Permit, they go back to the queue and the gang is bound at once."""
    gated = member(2, scheduling_gates=("example-gate",))
    scheduler, _ = gang_scheduler(PodGroup("g", "default", min_member=3), [member(0), member(1)])
    scheduler.gangs.add_pod(gated)
    assert {o.kind for o in outcomes(scheduler).values()} == {"unschedulable"}
    ungated = replace(gated, scheduling_gates=())
    scheduler.gangs.pods[ungated.key] = ungated
    scheduler.add(ungated, 5.0)
    bound = [o.pod.name for o in scheduler.run(5.0) if o.kind == "bound"]
    assert sorted(bound) == ["m-0", "m-1", "m-2"]


def test_pod_group_backoff_seconds_refuse_a_gang_post_filter_let_go_for_that_long() -> None:
    """``podGroupBackoffSeconds``: after PostFilter lets the gang go, its members are refused at PreFilter
    ("podGroup default/g failed recently") until the backoff has passed."""
    members = [member(0), member(1, 16), member(2)]
    scheduler, _ = gang_scheduler(
        PodGroup("g", "default", min_member=3), members, {"podGroupBackoffSeconds": 30}
    )
    out = outcomes(scheduler)
    assert out["m-1"].kind == "unschedulable" and out["m-0"].kind == "rejected"
    assert (out["m-2"].message or "").startswith(
        "0/2 nodes are available: podGroup default/g failed recently."
    )


def test_a_gang_that_failed_sorts_by_the_time_it_failed_until_it_is_let_go_on() -> None:
    """``lastFailedSchedulePG``: gang A (created at 0, 3 pods of 8 GPUs on two 8-GPU nodes) fails at 10
    (PostFilter lets it go); gang C, created at 5, queued at 12 with A's pods, goes first: A's place is its
    failure's time, 10, no longer its creation time, 0 (no head-of-line blocking)."""
    group_a = PodGroup("a", "default", min_member=3, created=Created(0.0))
    scheduler, state = gang_scheduler(group_a, [])
    group_c = PodGroup("c", "default", min_member=2, created=Created(5.0))
    scheduler.gangs.add_group(group_c)
    a = [replace(gpu_pod(f"a-{i}", 8), labels={LABEL: "a"}) for i in range(3)]
    c = [replace(gpu_pod(f"c-{i}", 8), labels={LABEL: "c"}) for i in range(2)]
    for p in a:
        scheduler.gangs.add_pod(p)
        scheduler.add(p, 10.0)
    assert {o.kind for o in scheduler.run(10.0)} == {"waiting", "unschedulable", "rejected"}
    for p in c:
        scheduler.gangs.add_pod(p)
        scheduler.add(p, 12.0)
    scheduler.queue.requeue_where(12.0, lambda q: True)  # (as a cluster event would move A's pods)
    out = scheduler.run(12.0)
    assert [(o.pod.name, o.kind) for o in out[:3]] == [("c-0", "waiting"), ("c-0", "bound"), ("c-1", "bound")]
    assert sorted(state.assignments) == ["default/c-0", "default/c-1"]
