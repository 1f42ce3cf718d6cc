"""Profile merging, node sampling and queue backoff as kube-scheduler 1.34 defines them."""

from __future__ import annotations

import pytest

from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.plugins.coscheduling import Coscheduling
from gpufleet.scheduling.plugins.priority_sort import PrioritySort
from gpufleet.scheduling.profile import ProfileError, build_profile, build_profiles
from gpufleet.scheduling.queue import SchedulingQueue
from gpufleet.scheduling.scheduler import num_feasible_nodes_to_find


def test_default_profile_has_upstream_score_weights() -> None:
    """default_plugins.go: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, BalancedAllocation 1."""
    profile = build_profile(ProfileConfig())
    weights = {p.name: w for p, w in [*profile.static_scores, *profile.dynamic_scores, *profile.pod_scores]}
    assert weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert isinstance(profile.queue_sort, PrioritySort)
    assert [f.name for f in profile.filters] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "GpuShare",  # gpufleet's: honours fractional requests as KAI/HAMi would, after upstream's filters
    ]


def test_reenabled_default_keeps_its_place_with_the_new_weight() -> None:
    """mergePluginSet: a default listed again is replaced in place."""
    config = ProfileConfig(plugins={"multiPoint": PluginSet((PluginRef("NodeResourcesFit", 5),))})
    weights = {p.name: w for p, w in build_profile(config).dynamic_scores}
    assert weights["NodeResourcesFit"] == 5


def test_disabling_star_drops_every_default_of_that_point() -> None:
    config = ProfileConfig(plugins={"score": PluginSet((PluginRef("NodeResourcesFit", 2),), ("*",))})
    profile = build_profile(config)
    assert [(p.name, w) for p, w in profile.dynamic_scores] == [("NodeResourcesFit", 2)]
    assert profile.static_scores == []


def test_coscheduling_replaces_the_queue_sort_as_its_readme_configures_it() -> None:
    config = ProfileConfig(
        "gang",
        plugins={
            "multiPoint": PluginSet((PluginRef("Coscheduling"),)),
            "queueSort": PluginSet((PluginRef("Coscheduling"),), ("*",)),
        },
    )
    profile = build_profile(config)
    assert isinstance(profile.queue_sort, Coscheduling)
    assert profile.permit is profile.queue_sort
    assert [p.name for p in profile.post_filters] == ["DynamicResources", "DefaultPreemption", "Coscheduling"]


def test_two_queue_sort_plugins_are_refused() -> None:
    """The framework requires exactly one QueueSort plugin per profile."""
    config = ProfileConfig(plugins={"multiPoint": PluginSet((PluginRef("Coscheduling"),))})
    with pytest.raises(ProfileError, match="exactly one queueSort"):
        build_profile(config)


def test_profiles_of_one_scheduler_share_a_queue_sort() -> None:
    gang = ProfileConfig("gang", plugins={"queueSort": PluginSet((PluginRef("Coscheduling"),), ("*",))})
    with pytest.raises(ProfileError, match="same queueSort"):
        build_profiles(SchedulerConfig("s", [ProfileConfig(), gang]))


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (None, 50, 50),
        (None, 1000, 420),
        (None, 5000, 500),
        (None, 10000, 500),
        (100, 5000, 5000),
        (1, 5000, 100),
    ],
)
def test_num_feasible_nodes_to_find_follows_schedule_one(
    percentage: int | None, nodes: int, expected: int
) -> None:
    """schedule_one.go numFeasibleNodesToFind: all below 100 nodes, else the percentage
    (adaptive 50 - n/125, at least 5), and never fewer than 100."""
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_backoff_doubles_from_initial_to_max() -> None:
    """podInitialBackoffSeconds 1 doubling per attempt, capped at podMaxBackoffSeconds 10."""
    queue = SchedulingQueue(lambda qp: (qp.seq,))
    assert [queue.backoff_duration(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_unschedulable_pod_returns_on_a_cluster_event_after_its_backoff() -> None:
    queue = SchedulingQueue(lambda qp: (qp.seq,))
    queue.add(Pod("p"), 0.0)
    qp = queue.pop()
    assert qp is not None
    queue.mark_unschedulable(qp, 0.0, frozenset({"NodeResourcesFit"}))
    assert queue.pop() is None
    queue.move(EVERYTHING[0], 0.5, lambda q, change: True)
    assert "default/p" in queue.backing_off  # its expiry (t=1) falls in the window [1, 2)
    assert queue.next_time() == 2.0
    queue.advance(1.0)
    assert "default/p" in queue.backing_off
    queue.advance(2.0)
    assert not queue.backing_off
    assert queue.pop() is qp


def test_unschedulable_pods_are_flushed_after_five_minutes_without_events() -> None:
    """podMaxInUnschedulablePodsDuration = 5m, more of it passed at one of the flush's 30-second runs."""
    queue = SchedulingQueue(lambda qp: (qp.seq,))
    queue.add(Pod("p"), 0.0)
    qp = queue.pop()
    assert qp is not None
    queue.mark_unschedulable(qp, 10.0, frozenset({"NodeResourcesFit"}))
    queue.advance(310.0)
    assert queue.pop() is None
    assert queue.next_time() == 330.0
    queue.advance(329.0)
    assert queue.pop() is None
    queue.advance(330.0)
    assert queue.pop() is qp
