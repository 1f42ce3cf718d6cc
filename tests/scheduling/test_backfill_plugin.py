"""The Backfill plugin in a scheduler: the head gang's reservation and what may start beside it.

Slurm's backfill rule (``src/plugins/sched/backfill/backfill.c``): a lower-priority job starts
now only if it does not delay the reserved job, i.e. it fits beside the reservation or its
declared time limit ends before the reservation starts. Nodes a, b, c have 8 GPUs each; a runs an
8-GPU pod until 3600 s, b a 4-GPU pod until 7200 s, c a 4-GPU pod until 1800 s (declared limits,
started at 0), so a 2 x 8-GPU gang arriving at 100 s can start at 3600 s on a and c.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Outcome, Scheduler

GANG = "gang-scheduler"


def limited(pod: Pod, limit_s: float | None) -> Pod:
    return replace(pod, scheduler_name=GANG, behavior=Behavior(time_limit_s=limit_s))


def setup(backfill: bool = True) -> tuple[Scheduler, ClusterState, GangView]:
    state = ClusterState([gpu_node("a"), gpu_node("b"), gpu_node("c")])
    gangs = GangView(state)
    enabled = (PluginRef("Coscheduling"), PluginRef("Backfill")) if backfill else (PluginRef("Coscheduling"),)
    profile = ProfileConfig(
        GANG,
        plugins={
            "multiPoint": PluginSet(enabled),
            "queueSort": PluginSet((PluginRef("Coscheduling"),), ("*",)),
        },
    )
    scheduler = Scheduler(SchedulerConfig("gang", [profile]), state, gangs)
    for name, node, size, limit in (
        ("run-a", "a", 8, 3600.0),
        ("run-b", "b", 4, 7200.0),
        ("run-c", "c", 4, 1800.0),
    ):
        state.assign(limited(gpu_pod(name, size), limit), node, 0.0)
    group = PodGroup("t16", "default", min_member=2)
    gangs.add_group(group)
    for k in range(2):
        member = limited(gpu_pod(f"t16-{k}", 8, labels={"scheduling.x-k8s.io/pod-group": "t16"}), None)
        gangs.add_pod(member)
        scheduler.add(member, 100.0)
    return scheduler, state, gangs


def by_pod(outcomes: list[Outcome]) -> dict[str, Outcome]:
    return {o.pod.name: o for o in outcomes if o.kind != "preempting"}


def submit(scheduler: Scheduler, now: float, *pods: Pod) -> dict[str, Outcome]:
    for pod in pods:
        scheduler.add(pod, now)
    return by_pod(scheduler.run(now))


def test_the_head_gang_is_told_its_reservation_after_kube_schedulers_message() -> None:
    scheduler, _, _ = setup()
    out = submit(scheduler, 100.0)
    for member in ("t16-0", "t16-1"):
        assert out[member].kind == "unschedulable"
        message = out[member].message or ""
        fit_error = "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 3 Insufficient"
        assert message.startswith(fit_error)
        assert message.endswith("; reserved a, c from 3600s (backfill)")


def test_small_jobs_backfill_beside_the_reservation_or_before_it() -> None:
    scheduler, state, _ = setup()
    submit(scheduler, 100.0)
    no_limit = limited(gpu_pod("no-limit", 4), None)  # fits only on b, the node not reserved
    long = limited(gpu_pod("long", 4), 3600.0)  # would end at 3701, after 3600: c is not for it
    short = limited(gpu_pod("short", 4), 1800.0)  # ends at 1902, before 3600: may use c
    out = (
        submit(scheduler, 100.0, no_limit) | submit(scheduler, 101.0, long) | submit(scheduler, 102.0, short)
    )
    assert (out["no-limit"].kind, out["no-limit"].node) == ("bound", "b")
    assert (out["short"].kind, out["short"].node) == ("bound", "c")
    assert out["long"].kind == "unschedulable"
    assert out["long"].message == (
        "0/3 nodes are available: 1 node(s) reserved for default/t16 from 3600s (Backfill), "
        "2 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod., can not find pod group"
    )
    assert sorted(state.assignments) == [
        "default/no-limit",
        "default/run-a",
        "default/run-b",
        "default/run-c",
        "default/short",
    ]


def test_without_backfill_a_pod_without_limit_takes_the_gangs_node() -> None:
    """Opt-in: plain Coscheduling lets any pod take what is free (the gang is not protected)."""
    scheduler, _, _ = setup(backfill=False)
    out = submit(scheduler, 100.0)
    assert "reserved" not in (out["t16-0"].message or "")
    out = submit(scheduler, 100.0, limited(gpu_pod("x", 4), None), limited(gpu_pod("y", 4), None))
    assert {out["x"].node, out["y"].node} == {"b", "c"}


def test_the_gang_starts_at_its_reservation_and_the_reservation_goes() -> None:
    scheduler, state, _ = setup()
    submit(scheduler, 100.0)
    state.unassign("default/run-c")
    scheduler.cluster_event(EVERYTHING, 1800.0)
    submit(scheduler, 1800.0)
    state.unassign("default/run-a")
    scheduler.cluster_event(EVERYTHING, 3600.0)
    out = submit(scheduler, 3600.0)
    assert {out["t16-0"].kind, out["t16-1"].kind} == {"bound"}
    assert sorted(o.node or "" for o in out.values()) == ["a", "c"]
    assert scheduler.backfill is not None and scheduler.backfill.reservation is None
    out = submit(scheduler, 3600.0, limited(gpu_pod("after", 4), None))
    assert (out["after"].kind, out["after"].node) == ("bound", "b")


def test_an_overrunning_pod_moves_the_reservation_and_its_nodes_stay_reserved() -> None:
    """run-a declared 3600 s but still runs at 4000 s: the start moves to the new earliest time
    (now), and a pod without a limit still cannot take c."""
    scheduler, state, _ = setup()
    submit(scheduler, 100.0)
    state.unassign("default/run-c")
    scheduler.cluster_event(EVERYTHING, 4000.0)
    out = submit(scheduler, 4000.0, limited(gpu_pod("no-limit", 8), None))
    assert (out["t16-0"].message or "").endswith("; reserved a, c from 4000s (backfill)")
    assert out["no-limit"].kind == "unschedulable"
    state.unassign("default/run-a")
    scheduler.cluster_event(EVERYTHING, 4500.0)
    out = submit(scheduler, 4500.0)
    assert sorted(o.node or "" for o in out.values() if o.kind == "bound") == ["a", "c"]


def test_a_job_ahead_in_the_queue_takes_the_reservation_over() -> None:
    """Queue order: priority first. An 8-GPU pod of priority 10 that cannot start takes the
    reservation from the gang: c, the first node with 8 GPUs free, at 1800 s."""
    scheduler, _, _ = setup()
    submit(scheduler, 100.0)
    urgent = replace(limited(gpu_pod("urgent", 8), None), priority=10)
    out = submit(scheduler, 200.0, urgent)
    assert out["urgent"].kind == "unschedulable"
    assert (out["urgent"].message or "").endswith("; reserved c from 1800s (backfill)")
