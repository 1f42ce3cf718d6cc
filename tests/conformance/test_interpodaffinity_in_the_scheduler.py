"""InterPodAffinity inside gpufleet's scheduler: the cycle, the FailedScheduling message, preemption's
dry run (upstream's ``PreFilterExtensions.RemovePod``), the plugin args, and the per-shape caches
never serving a verdict that other pods' placement changed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pod_builders_affinity import affinity, filter_statuses, in_values, node, pod, scores, term

from gpufleet.autoscaling.scale_down import TrialPlacement
from gpufleet.cluster.state import ClusterState
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.framework import SUCCESS, Code, PodContext, Status
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.inter_pod_affinity import ANTI_AFFINITY_NOT_MATCH, InterPodAffinity
from gpufleet.scheduling.profile import ProfileError, build_profile
from gpufleet.scheduling.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def zoned(name: str, zone: str, cpu: int = 64000) -> Node:
    made = node(name, {ZONE: zone, HOST: name})
    made.capacity = {"pods": 110, "cpu": cpu}
    made.allocatable = dict(made.capacity)
    return made


def scheduler(
    nodes: list[Node], placed: Sequence[Pod] = (), config: ProfileConfig | None = None
) -> Scheduler:
    state = ClusterState(nodes)
    for p in placed:
        assert p.node_name is not None
        state.assign(p, p.node_name, 0.0)
    return Scheduler(SchedulerConfig("test", [config or ProfileConfig()]), state, GangView(state))


def test_required_affinity_goes_to_the_zone_of_the_matching_pod() -> None:
    """filtering.go ``satisfyPodAffinity``: only nodes in a topology domain holding a matching pod."""
    s = scheduler(
        [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")], [pod("db", labels={"app": "db"}, node="b1")]
    )
    web = pod("web", spec={"affinity": affinity(required=[term(in_values("app", "db"), ZONE)])})
    assert s.decide(web).nodes == ("b1",)


def test_required_affinity_nowhere_matching_is_unresolvable_with_upstreams_message() -> None:
    """``ErrReasonAffinityRulesNotMatch`` is UnschedulableAndUnresolvable: no preemption is tried."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b")], [pod("x", labels={"app": "cache"}, node="a1")])
    web = pod("web", spec={"affinity": affinity(required=[term(in_values("app", "db"), ZONE)])})
    node_name, message = s.try_schedule(web)
    assert node_name is None
    assert message == (
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_first_pod_of_a_group_that_matches_its_own_terms_goes_anywhere() -> None:
    """filtering.go: no pod matches anywhere and the pod matches all its own terms: it may go."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b")])
    first = pod(
        "w0",
        labels={"app": "web"},
        spec={"affinity": affinity(required=[term(in_values("app", "web"), ZONE)])},
    )
    assert s.decide(first).nodes == ("a1", "b1")


def test_anti_affinity_spreads_replicas_one_per_host_then_says_why() -> None:
    """``ErrReasonAntiAffinityRulesNotMatch`` (Unschedulable) once every host holds one replica."""
    s = scheduler([zoned("a1", "a"), zoned("a2", "a")])
    spec = {"affinity": affinity(anti_required=[term(in_values("app", "web"), HOST)])}
    placed = []
    for k in range(2):
        replica = pod(f"w{k}", labels={"app": "web"}, spec=spec)
        node_name = s.place_once(replica, 0.0)
        assert node_name is not None
        placed.append(node_name)
    assert sorted(placed) == ["a1", "a2"]
    node_name, message = s.try_schedule(pod("w2", labels={"app": "web"}, spec=spec))
    assert node_name is None
    assert message.startswith("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.")


def test_existing_pods_anti_affinity_keeps_a_plain_pod_away() -> None:
    """``satisfyExistingPodsAntiAffinity``: a pod without terms is rejected by a placed pod's terms."""
    guard = pod(
        "guard",
        labels={"app": "guard"},
        node="a1",
        spec={"affinity": affinity(anti_required=[term(in_values("app", "noisy"), ZONE)])},
    )
    s = scheduler([zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")], [guard])
    assert s.decide(pod("n", labels={"app": "noisy"})).nodes == ("b1",)
    assert s.decide(pod("q", labels={"app": "quiet"})).nodes != ("b1",)


def test_cached_shapes_see_the_pods_placed_since() -> None:
    """Pods of one shape share cached filters; the pod-aware verdict is judged in every cycle."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b")])
    spec = {"affinity": affinity(anti_required=[term(in_values("app", "web"), ZONE)])}
    first = s.place_once(pod("w0", labels={"app": "web"}, spec=spec), 0.0)
    second = s.place_once(pod("w1", labels={"app": "web"}, spec=spec), 0.0)
    assert {first, second} == {"a1", "b1"}
    assert s.place_once(pod("w2", labels={"app": "web"}, spec=spec), 0.0) is None


def test_preemption_removes_the_pod_whose_anti_affinity_blocks() -> None:
    """DefaultPreemption's dry run with RemovePod: evicting the lower-priority blocker makes room."""
    blocker = pod(
        "blocker",
        labels={"app": "batch"},
        node="a1",
        spec={"affinity": affinity(anti_required=[term(in_values("app", "web"), HOST)])},
    )
    s = scheduler([zoned("a1", "a")], [blocker])
    web = pod("web", labels={"app": "web"})
    web.priority = 1000
    s.state.assignments[blocker.key].pod.priority = 0
    decision = s.decide(web)
    assert decision.message.startswith(
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."
    )
    assert decision.nominations == (("a1", ("default/blocker",)),)


def test_preferred_affinity_scores_the_zone_of_matching_pods() -> None:
    """scoring.go: the weight of a preferred term per matching pod in the domain, normalised to 0..100."""
    plugin = InterPodAffinity()
    incoming = pod("p", spec={"affinity": affinity(preferred=[(50, term(in_values("app", "db"), ZONE))])})
    nodes = [zoned("a1", "a"), zoned("b1", "b"), zoned("b2", "b")]
    existing = [pod("db", labels={"app": "db"}, node="b2")]
    assert scores(plugin, incoming, nodes, existing) == [0, 100, 100]


def test_hard_pod_affinity_weight_scores_existing_pods_required_terms() -> None:
    """scoring.go ``processExistingPod``: an existing pod's required affinity term matching the
    incoming pod adds ``hardPodAffinityWeight``; weight 0 turns it off."""
    friend = pod(
        "friend",
        node="b1",
        spec={"affinity": affinity(required=[term(in_values("app", "web"), ZONE)])},
        labels={"app": "friend"},
    )
    nodes = [zoned("a1", "a"), zoned("b1", "b")]
    web = pod("web", labels={"app": "web"})
    assert scores(InterPodAffinity(), web, nodes, [friend]) == [0, 100]
    assert scores(InterPodAffinity(hard_pod_affinity_weight=0), web, nodes, [friend]) == [0, 0]


def test_ignore_preferred_terms_of_existing_pods_skips_prescore() -> None:
    """``ignorePreferredTermsOfExistingPods``: PreScore returns Skip for a pod without preferred terms."""
    fan = pod(
        "fan",
        node="b1",
        labels={"app": "fan"},
        spec={"affinity": affinity(preferred=[(10, term(in_values("app", "web"), ZONE))])},
    )
    nodes = [zoned("a1", "a"), zoned("b1", "b")]
    web = pod("web", labels={"app": "web"})
    assert scores(InterPodAffinity(), web, nodes, [fan]) == [0, 100]
    plugin = InterPodAffinity(ignore_preferred_terms_of_existing_pods=True)
    assert not plugin.scores_pod(PodContext(web, ClusterState(nodes)))


def test_match_label_keys_are_merged_into_the_selector_from_the_pods_own_labels() -> None:
    """``matchLabelKeys`` (1.34, on by default): ``key In [own value]`` joins the selector."""
    spec = {
        "affinity": affinity(anti_required=[term(in_values("app", "web"), HOST, matchLabelKeys=["version"])])
    }
    old = pod("old", labels={"app": "web", "version": "1"}, node="a1")
    nodes = [zoned("a1", "a"), zoned("a2", "a")]
    v2 = pod("v2", labels={"app": "web", "version": "2"}, spec=spec)
    assert filter_statuses(InterPodAffinity(), v2, nodes, [old]) == [SUCCESS, SUCCESS]
    v1 = pod("v1", labels={"app": "web", "version": "1"}, spec=spec)
    assert filter_statuses(InterPodAffinity(), v1, nodes, [old]) == [
        Status(Code.UNSCHEDULABLE, (ANTI_AFFINITY_NOT_MATCH,)),
        SUCCESS,
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"hardPodAffinityWeight": 101},
            "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {"hardPodAffinityWeight": -1},
            "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
        ),
        ({"bogus": 1}, 'unknown field "bogus"'),
    ],
)
def test_plugin_args_are_validated_as_upstream(args: dict[str, object], error: str) -> None:
    """``ValidateInterPodAffinityArgs``: a bad value stops kube-scheduler from starting."""
    with pytest.raises(ProfileError, match=error.replace("[", r"\[").replace("]", r"\]")):
        build_profile(ProfileConfig(plugin_args={"InterPodAffinity": args}))


def test_default_profile_runs_it_with_weight_2() -> None:
    profile = build_profile(ProfileConfig())
    assert "InterPodAffinity" in [f.name for f in profile.pod_filters]
    assert ("InterPodAffinity", 2) in [(p.name, w) for p, w in profile.pod_scores]


def test_cluster_autoscaler_trial_placement_counts_the_pods_it_put() -> None:
    """``filterOutSchedulable`` runs the scheduler's filters on a snapshot where the pods it placed
    count (``AddPod``): two replicas with hostname anti-affinity do not both fit on one empty node."""
    state = ClusterState([zoned("a1", "a")])
    trial = TrialPlacement(state, build_profile(ProfileConfig()), set())
    spec = {"affinity": affinity(anti_required=[term(in_values("app", "web"), HOST)])}
    assert trial.place(pod("w0", labels={"app": "web"}, spec=spec)) == 0
    assert trial.place(pod("w1", labels={"app": "web"}, spec=spec)) is None
    assert trial.place(pod("other", labels={"app": "db"})) == 0


def test_cluster_autoscaler_drain_simulation_forgets_the_drained_pods() -> None:
    """The drain simulation takes the node's pods away (``RemovePod``): a replica moved off a drained
    node is not kept away by its own old copy's anti-affinity."""
    spec = {"affinity": affinity(anti_required=[term(in_values("app", "web"), ZONE)])}
    moving = pod("w0", labels={"app": "web"}, spec=spec, node="a1")
    state = ClusterState([zoned("a1", "a"), zoned("a2", "a")])
    state.assign(moving, "a1", 0.0)
    trial = TrialPlacement(state, build_profile(ProfileConfig()), {0})
    assert trial.place(moving) is None  # its own copy still on a1 repels it from zone a
    trial.unschedule([moving])
    assert trial.place(moving) == 1


EXPLAIN_SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec: {nodeName: a1, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec: {nodeName: b1, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: web}}, topologyKey: topology.kubernetes.io/zone}
"""


def test_explain_gives_the_anti_affinity_verdict_read_from_manifests(tmp_path: Path) -> None:
    """``gpufleet explain``: the manifests' podAntiAffinity is read (no ``not modelled``) and judged."""
    path = tmp_path / "s.yaml"
    path.write_text(EXPLAIN_SCENARIO)
    [entry] = explain_scenario(load_scenario([path]))
    assert entry["pod"] == "default/web-2"
    assert entry["message"] == (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_configuration_disables_the_plugins_or_changes_their_weights() -> None:
    """``mergePluginSet``: a disabled default is gone from every point; a re-listed one takes its weight."""
    off = build_profile(
        ProfileConfig(plugins={"multiPoint": PluginSet(disabled=("InterPodAffinity", "PodTopologySpread"))})
    )
    names = {p.name for p in off.pod_filters} | {p.name for p, _ in off.pod_scores}
    assert not names & {"InterPodAffinity", "PodTopologySpread"}
    heavier = build_profile(
        ProfileConfig(
            plugins={"score": PluginSet((PluginRef("InterPodAffinity", 7),), ("InterPodAffinity",))}
        )
    )
    assert [(p.name, w) for p, w in heavier.pod_scores] == [("PodTopologySpread", 2), ("InterPodAffinity", 7)]
    assert "InterPodAffinity" in [f.name for f in heavier.pod_filters]


NAMESPACE_SELECTOR = EXPLAIN_SCENARIO.replace(
    "- {labelSelector: {matchLabels: {app: web}}, topologyKey: topology.kubernetes.io/zone}",
    "- {labelSelector: {matchLabels: {app: web}}, namespaceSelector: {matchLabels: {team: x}},"
    " topologyKey: topology.kubernetes.io/zone}",
)
TEAM_X = """
apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {team: x}}
"""


def test_namespace_selector_reads_the_namespace_documents_labels(tmp_path: Path) -> None:
    """``GetNamespaceLabelsSnapshot`` / ``mergeAffinityTermNamespacesIfNotEmpty``: the Namespace's labels
    decide; without any Namespace document the selector cannot be judged, and explain says so."""
    path = tmp_path / "s.yaml"
    path.write_text(NAMESPACE_SELECTOR)
    [unknown] = explain_scenario(load_scenario([path]))
    assert unknown["cannot_judge"] == [
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector"
    ]
    path.write_text(NAMESPACE_SELECTOR + "---" + TEAM_X)
    [judged] = explain_scenario(load_scenario([path]))
    assert judged["message"].startswith(
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
    )


def test_a_pod_placed_requeues_the_pod_whose_affinity_it_satisfies() -> None:
    """The queueing hint on a Pod add event (``isSchedulableAfterPodChange``): the waiting pod goes back
    to the queue when a pod matching all its required affinity terms is placed, not for another pod."""
    s = scheduler([zoned("a1", "a"), zoned("b1", "b")])
    web = pod("web", spec={"affinity": affinity(required=[term(in_values("app", "db"), ZONE)])})
    s.add(web, 0.0)
    assert [o.kind for o in s.run(0.0)] == ["unschedulable"]
    s.add(pod("cache", labels={"app": "cache"}), 1.0)
    assert [(o.pod.name, o.kind) for o in s.run(1.0)] == [("cache", "bound")]
    assert "default/web" in s.queue.unschedulable
    s.add(pod("db", labels={"app": "db"}), 2.0)
    outcomes = s.run(2.0) + s.run(20.0)
    assert [(o.pod.name, o.kind) for o in outcomes] == [("db", "bound"), ("web", "bound")]
