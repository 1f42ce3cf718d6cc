"""A shape cache that follows the nodes joining, leaving, cordoned and relabelled re-judges only the rows
``ClusterState.static_rows`` names (and, for ImageLocality, whose raw score weighs every node, the whole
column): after any sequence of such changes and of bindings, every field of it equals that of a cache built
afresh on a cluster as it is, for pods with node selectors, required and preferred node affinity, pinned
node names, tolerations and images, and so does the static filters' memo shared between shapes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint, Toleration
from gpufleet.model.pod import Pod, PreferredTerm, Requirement, SelectorTerm
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.profile import Profile, build_profiles
from gpufleet.scheduling.shape_cache import VERDICTS_KEPT, ShapeCache

IMAGE = "registry.example/train:latest"
TIERS = ({"tier": "a"}, {"tier": "b"}, {"tier": "c", "zone": "z1"}, {})
TAINTS: tuple[tuple[Taint, ...], ...] = (
    (),
    (Taint("dedicated", "gpu", NO_SCHEDULE),),
    (Taint("spot", "yes", PREFER_NO_SCHEDULE),),
    (Taint("spot", "yes", PREFER_NO_SCHEDULE), Taint("old", "", PREFER_NO_SCHEDULE)),
)


def probes() -> list[Pod]:
    tier_ab = SelectorTerm((Requirement("tier", "In", ("a", "b")),))
    zone = SelectorTerm((Requirement("zone", "Exists"),))
    return [
        gpu_pod("plain", 1),
        gpu_pod("selector", 2, node_selector={"tier": "a"}),
        gpu_pod("affinity", 1, required_terms=(tier_ab,), preferred_terms=(PreferredTerm(5, zone),)),
        gpu_pod(
            "pinned",
            1,
            required_terms=(SelectorTerm(fields=(Requirement("metadata.name", "In", ("n1", "n4", "n6")),)),),
        ),
        gpu_pod("tolerant", 1, tolerations=(Toleration("dedicated", "Equal", "gpu", NO_SCHEDULE),)),
        gpu_pod("image", 1, images=(IMAGE,)),
        gpu_pod("cpu-only", 0, cpu=4, mem_gi=8, images=(IMAGE, "other:1")),
    ]


def profiles() -> list[Profile]:
    """The default profile, and one whose dynamic score reads the device level (DotProd)."""
    plugins = {"score": PluginSet((PluginRef("DotProd", 1000),), ()), "postFilter": PluginSet((), ("*",))}
    dot = ProfileConfig("dot", plugins=plugins)
    return build_profiles(SchedulerConfig("default-scheduler")) + build_profiles(
        SchedulerConfig("dot", profiles=[dot])
    )


def node(k: int, gpus: int, tier: int, taints: int, image: bool) -> Node:
    made = gpu_node(f"n{k}", gpus, labels=TIERS[tier], taints=TAINTS[taints])
    if image:
        made.images = {IMAGE: (200 + 100 * k) * 2**20}
    return made


def fresh(cache: ShapeCache) -> ShapeCache:
    """A cache built on the cluster as it is, with nothing kept from before (no shared static memo)."""
    state = cache.state
    kept, state.memo = state.memo, {}
    try:
        return ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
    finally:
        state.memo = kept


def assert_same(cache: ShapeCache, built: ShapeCache) -> None:
    assert cache.static_reason == built.static_reason
    assert cache.considered.tolist() == built.considered.tolist()
    assert cache.static_pass.tolist() == built.static_pass.tolist()
    assert cache.all_rows == built.all_rows
    assert [(p, w, raw.tolist()) for p, w, raw in cache.static_raw] == [
        (p, w, raw.tolist()) for p, w, raw in built.static_raw
    ]
    for field in ("dyn", "ok", "masked"):
        assert getattr(cache, field).tolist() == getattr(built, field).tolist(), field
    assert cache.top_nodes() == built.top_nodes()
    assert cache.feasible_nodes().tolist() == built.feasible_nodes().tolist()
    assert cache.feasible_list() == built.feasible_list()


#: (what, which node, GPUs or a pod's size, labels, taints or a cordon, images)
Step = tuple[str, int, int, int, int, bool]
step = st.tuples(
    st.sampled_from(["add", "remove", "cordon", "label", "bind", "unbind", "image"]),
    st.integers(0, 50),
    st.integers(0, 8),
    st.integers(0, 3),
    st.integers(0, 3),
    st.booleans(),
)


def apply(state: ClusterState, op: Step, bound: list[str]) -> None:
    what, which, size, tier, taints, flag = op
    names = state.node_names()
    pick = names[which % len(names)]
    if what == "add":
        state.add_node(node(state.size, size, tier, taints, flag))
    elif what == "remove" and len(names) > 1:
        row = state.index[pick]
        bound[:] = [key for key in bound if state.assignments[key].node != row]
        state.remove_node(pick)
    elif what == "cordon":
        state.cordon(pick, flag)
    elif what == "label":
        state.set_labels(pick, TIERS[tier])
    elif what == "bind":
        pod = gpu_pod(f"b{state.change_pos}", size % 3, cpu=2, mem_gi=4)
        state.assign(pod, pick, 0.0)
        bound.append(pod.key)
    elif what == "unbind" and bound:
        state.unassign(bound.pop(which % len(bound)))
    elif what == "image":
        state.add_images(pick, {IMAGE: 300 * 2**20})


@settings(max_examples=40, deadline=None)
@given(
    start=st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 3), st.integers(0, 3), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    steps=st.lists(step, min_size=1, max_size=14),
    every=st.integers(1, 4),
)
def test_a_cache_patched_row_by_row_equals_one_built_afresh(
    start: list[tuple[int, int, int, bool]], steps: list[Step], every: int
) -> None:
    """Caches refreshed after every step, and caches refreshed only every ``every`` steps (several rows
    changed at once), agree with fresh ones on every field after each refresh."""
    state = ClusterState([node(k, *spec) for k, spec in enumerate(start)])
    caches = [ShapeCache(profile, PodContext(pod, state)) for profile in profiles() for pod in probes()]
    bound: list[str] = []
    for k, op in enumerate(steps, 1):
        apply(state, op, bound)
        for cache in caches if k % every == 0 or k == len(steps) else ():
            cache.refresh()
            assert_same(cache, fresh(cache))


def test_a_new_resource_column_rebuilds_the_cache() -> None:
    """A resource no node had before names no row: the cache and the memo start over, and still agree."""
    state = ClusterState([gpu_node(f"n{k}", 2) for k in range(3)])
    cache = ShapeCache(profiles()[0], PodContext(gpu_pod("p", 1), state))
    extra = gpu_node("n3", 2)
    extra.allocatable = {**extra.allocatable, "example.com/fpga": 1}
    state.add_node(extra)
    state.cordon("n0")
    cache.refresh()
    assert cache.columns == len(state.resources)
    assert_same(cache, fresh(cache))


def test_the_static_verdicts_kept_stay_bounded_as_pinned_pods_come_for_new_nodes() -> None:
    """A DaemonSet's pod is pinned to its node (a ``metadata.name`` field term): nodes that autoscaling
    makes through a long run each bring a placement constraint set of their own, and the verdicts kept
    for them start over past ``VERDICTS_KEPT`` instead of growing for good; a pod's verdicts are still
    right after that."""
    state = ClusterState([gpu_node("n0", 2)])
    profile = profiles()[0]
    for k in range(1, VERDICTS_KEPT + 40):
        state.add_node(gpu_node(f"n{k}", 2))
        pinned = SelectorTerm(fields=(Requirement("metadata.name", "In", (f"n{k}",)),))
        cache = ShapeCache(
            profile, PodContext(gpu_pod(f"ds-n{k}", 0, cpu=1, required_terms=(pinned,)), state)
        )
        assert cache.considered.tolist() == [k]
        assert len(state.memo["static-filters"]) <= VERDICTS_KEPT  # type: ignore[arg-type]
