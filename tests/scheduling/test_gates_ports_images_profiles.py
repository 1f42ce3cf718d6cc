"""SchedulingGates, NodePorts and ImageLocality in a profile: in the default profile at upstream's
places (``getDefaultPlugins``: SchedulingGates first, NodePorts after NodeAffinity, ImageLocality
last with weight 1), re-weighted and disabled as a KubeSchedulerConfiguration says (``mergePluginSet``);
without SchedulingGates a gated pod is queued and scheduled, as upstream's scheduler then does."""

from __future__ import annotations

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.image_locality import ImageLocality
from gpufleet.scheduling.plugins.scheduling_gates import SchedulingGates
from gpufleet.scheduling.profile import build_profile
from gpufleet.scheduling.scheduler import Scheduler


def test_default_profile_runs_the_three_at_upstreams_places() -> None:
    profile = build_profile(ProfileConfig())
    assert [type(p) for p in profile.pre_enqueues] == [SchedulingGates]
    filters = [f.name for f in profile.filters]
    assert filters.index("NodeAffinity") < filters.index("NodePorts") < filters.index("NodeResourcesFit")
    assert [w for p, w in profile.static_scores if isinstance(p, ImageLocality)] == [1]


def test_image_locality_takes_a_configured_weight_and_node_ports_can_be_disabled() -> None:
    plugins = {
        "score": PluginSet((PluginRef("ImageLocality", 5),)),
        "filter": PluginSet(disabled=("NodePorts",)),
    }
    profile = build_profile(ProfileConfig(plugins=plugins))
    assert [w for p, w in profile.static_scores if isinstance(p, ImageLocality)] == [5]
    assert "NodePorts" not in [f.name for f in profile.filters]


def test_without_scheduling_gates_a_gated_pod_is_scheduled() -> None:
    state = ClusterState([Node("n", capacity={"cpu": 4000, "pods": 110})])
    plugins = {"multiPoint": PluginSet(disabled=("SchedulingGates",))}
    config = SchedulerConfig("default-scheduler", profiles=[ProfileConfig(plugins=plugins)])
    scheduler = Scheduler(config, state, GangView(state))
    assert scheduler.add(Pod("p", scheduling_gates=("a",)), 0.0) is None
    (outcome,) = scheduler.run(0.0)
    assert (outcome.kind, outcome.node) == ("bound", "n")
