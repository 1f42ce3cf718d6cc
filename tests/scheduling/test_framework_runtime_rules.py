"""The framework runtime's rules (kube-scheduler 1.34 ``framework/runtime/framework.go``) where gpufleet
used to differ: a score outside [0, 100] is an error (``RunScorePlugins``); a plugin enabled twice at one
extension point, or enabled at a point it does not implement, is refused (``updatePluginList``); the
multiPoint plugins also named at a point take that point's order (``expandMultiPointPlugins``); an
Unschedulable PreFilter lets the others run and preemption try every node (``RunPreFilterPlugins``); an
UnschedulableAndUnresolvable PostFilter ends the PostFilters with its own message
(``RunPostFilterPlugins``); an UnschedulableAndUnresolvable Permit rejects the pod (``RunPermitPlugins``).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    DynamicFilter,
    DynamicScore,
    Permit,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    PreFilter,
    StaticScore,
    Status,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.priority_sort import PrioritySort
from gpufleet.scheduling.profile import Profile, ProfileError, build_profile
from gpufleet.scheduling.scheduler import Scheduler

NAME = "default-scheduler"


def scheduler(profile: Profile, *names: str) -> Scheduler:
    state = ClusterState([Node(n) for n in names or ("node1", "node2")])
    sched = Scheduler(SchedulerConfig("rules", [ProfileConfig()]), state, GangView(state))
    sched.profiles[NAME] = profile
    return sched


class Constant(StaticScore):
    """Every node ``value`` after NormalizeScore."""

    name = "Constant"

    def __init__(self, raw: int, value: int) -> None:
        self.value, self.raw_value = value, raw

    def raw(self, pod: Pod, node: Node) -> int:
        return self.raw_value if node.name == "node1" else self.raw_value + 1

    def normalize(self, raw: IntArray) -> IntArray:
        return np.full_like(raw, self.value)


class Above(DynamicScore):
    """101 on every node."""

    name = "Above"

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        return np.full(len(idx), 101, dtype=np.int64)

    def score_node(self, ctx: PodContext, row: NodeRow) -> int:
        return 101


@pytest.mark.parametrize("raw", [0, 7], ids=["raw scores all zero", "raw scores differ"])
def test_a_normalized_static_score_above_100_is_an_error(raw: int) -> None:
    profile = Profile(NAME, PrioritySort())
    profile.static_scores.append((Constant(raw, 101), 1))
    with pytest.raises(
        RuntimeError, match=r"'Constant' returns an invalid score 101, it should in the range"
    ):
        scheduler(profile).try_schedule(Pod("p"))


@pytest.mark.parametrize("nodes", [2, 40], ids=["one node at a time", "over arrays"])
def test_a_dynamic_score_above_100_is_an_error(nodes: int) -> None:
    profile = Profile(NAME, PrioritySort())
    profile.dynamic_scores.append((Above(), 1))
    with pytest.raises(RuntimeError, match=r"'Above' returns an invalid score 101"):
        scheduler(profile, *(f"node{i}" for i in range(nodes))).try_schedule(Pod("p"))


def test_scores_within_0_and_100_are_summed_with_their_weights() -> None:
    profile = Profile(NAME, PrioritySort())
    profile.static_scores.append((Constant(3, 100), 2))
    assert scheduler(profile).decide(Pod("p")).nodes == ("node1", "node2")


def test_a_plugin_enabled_twice_at_one_extension_point_is_refused() -> None:
    config = ProfileConfig(plugins={"filter": PluginSet((PluginRef("NodeName"), PluginRef("NodeName")))})
    with pytest.raises(ProfileError, match="'NodeName' already registered as 'filter'"):
        build_profile(config)


def test_a_gpufleet_plugin_enabled_at_a_point_it_does_not_implement_is_refused() -> None:
    config = ProfileConfig(plugins={"filter": PluginSet((PluginRef("FGD"),))})
    with pytest.raises(ProfileError, match="'FGD' does not extend filter plugin"):
        build_profile(config)


def test_an_upstream_plugin_at_a_point_gpufleet_does_not_model_for_it_is_still_accepted() -> None:
    """Upstream's NodeResourcesFit implements PreFilter; gpufleet's model of it has no PreFilter, and a
    configuration naming it there is kube-scheduler's own."""
    config = ProfileConfig(plugins={"preFilter": PluginSet((PluginRef("NodeResourcesFit"),))})
    assert "NodeResourcesFit" in build_profile(config).plugin_names


def test_multipoint_plugins_named_at_a_point_take_that_points_order() -> None:
    """The defaults run TaintToleration before NodeAffinity; a filter list naming NodeAffinity first puts it
    first (so a node both reject counts NodeAffinity's reason)."""
    config = ProfileConfig(
        plugins={"filter": PluginSet((PluginRef("NodeAffinity"), PluginRef("TaintToleration")))}
    )
    names = [f.name for f in build_profile(config).filters]
    assert names.index("NodeAffinity") < names.index("TaintToleration")


class InjectedPreFilter(PreFilter):
    def __init__(self, name: str, code: Code, ran: list[str]) -> None:
        self.name, self.code, self.ran = name, code, ran  # type: ignore[misc]

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        self.ran.append(self.name)
        return (
            SUCCESS if self.code == Code.SUCCESS else Status(self.code, (f"{self.name} says no",), self.name)
        )


class Spy(PostFilter):
    name = "Spy"

    def __init__(self) -> None:
        self.resolvable: list[int] | None = None

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        self.resolvable = request.resolvable.tolist()
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))


def test_an_unschedulable_prefilter_lets_the_others_run_and_preemption_try_every_node() -> None:
    ran: list[str] = []
    spy = Spy()
    profile = Profile(NAME, PrioritySort())
    profile.pre_filters = [
        InjectedPreFilter("first", Code.UNSCHEDULABLE, ran),
        InjectedPreFilter("second", Code.SUCCESS, ran),
        InjectedPreFilter("third", Code.UNSCHEDULABLE, ran),
    ]
    profile.post_filters = [spy]
    sched = scheduler(profile)
    node, message = sched.try_schedule(Pod("p"))
    assert node is None and ran == ["first", "second", "third"]
    assert message == "0/2 nodes are available: third says no."  # the last Unschedulable status is returned
    assert sched.rejectors == {"third"} and spy.resolvable == [0, 1]


def test_an_unresolvable_prefilter_still_stops_the_rest() -> None:
    ran: list[str] = []
    spy = Spy()
    profile = Profile(NAME, PrioritySort())
    profile.pre_filters = [
        InjectedPreFilter("first", Code.UNSCHEDULABLE, ran),
        InjectedPreFilter("second", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ran),
        InjectedPreFilter("third", Code.SUCCESS, ran),
    ]
    profile.post_filters = [spy]
    sched = scheduler(profile)
    assert sched.try_schedule(Pod("p")) == (None, "0/2 nodes are available: second says no.")
    assert ran == ["first", "second"] and sched.rejectors == {"second"} and spy.resolvable == []


class NoNode(DynamicFilter):
    name = "NoNode"

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return np.zeros(len(idx), dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        return False

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        return [("no", np.ones(len(idx), dtype=bool))]


class Says(PostFilter):
    def __init__(self, name: str, code: Code, ran: list[str]) -> None:
        self.name, self.code, self.ran = name, code, ran  # type: ignore[misc]

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        self.ran.append(self.name)
        return PostFilterResult(Status(self.code, (f"{self.name} gave up",), self.name))


def test_an_unresolvable_postfilter_ends_the_postfilters_with_its_own_message() -> None:
    ran: list[str] = []
    profile = Profile(NAME, PrioritySort())
    profile.filters = [NoNode()]
    profile.post_filters = [
        Says("first", Code.UNSCHEDULABLE, ran),
        Says("second", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ran),
        Says("third", Code.UNSCHEDULABLE, ran),
    ]
    node, message = scheduler(profile).try_schedule(Pod("p"))
    assert node is None and ran == ["first", "second"]
    assert message == "0/2 nodes are available: 2 no. second gave up"


class Refusing(Permit):
    name = "Refusing"

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("not here",), self.name), None

    def wait_time(self, group: PodGroup) -> float:
        return 0.0


def test_an_unresolvable_permit_rejects_the_pod() -> None:
    profile = Profile(NAME, PrioritySort())
    profile.permit = Refusing()
    sched = scheduler(profile, "node1")
    sched.add(Pod("p"), 0.0)
    [outcome] = sched.run(0.0)
    assert (outcome.kind, outcome.message) == ("unschedulable", "0/1 nodes are available: 1 not here.")
    assert not sched.state.assignments
