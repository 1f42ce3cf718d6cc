"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/runtime/framework_test.go`` and ``registry_test.go``,
ported case by case: the framework runtime (``framework.go``: ``NewFramework``, ``expandMultiPointPlugins``,
``RunPreFilterPlugins``, ``RunFilterPlugins``, ``RunPostFilterPlugins``, ``RunPreScorePlugins``,
``RunScorePlugins``, ``RunPermitPlugins``) and the plugin ``Registry``, against gpufleet's
``profile.build_profile`` / ``profile.expand``, ``Scheduler`` and ``scheduling.registry``.

Upstream's fake plugins (``TestPlugin`` and its ``injectedResult``, ``TestScorePlugin``,
``TestScoreWithNormalizePlugin``, ``PluginNotImplementingScore``, ...) are gpufleet plugins of the same names
here. Where upstream builds a framework from a registry and a profile, the fakes are put in gpufleet's
registry for the test (``monkeypatch``) and a profile of them alone is built: the ``multiPoint`` defaults
disabled with ``"*"``, and a QueueSort added where upstream's ``newFrameworkWithQueueSortAndBind`` adds one.
The injected results are the plugins' ``pluginConfig`` args, as upstream injects them.

Where upstream runs one extension point on its own (``RunFilterPlugins`` on one node, ...), gpufleet has no
such entry: a scheduling attempt of a pod on upstream's nodes is run with a hand-built profile of the fakes
(as ``test_schedule_one.py`` does) and what it shows is compared: the pod placed or not, its message, the
plugins that rejected it (``Scheduler.rejectors``: the status's plugin) and, for the status code, whether
preemption is offered the nodes (a spy PostFilter records the nodes the attempt left resolvable: an
Unschedulable status) or not (UnschedulableAndUnresolvable).

A PreFilter or Filter plugin's Error status aborts the attempt with the error (``framework.PluginError``:
no FitError, no PostFilter, no rejector); those cases are ported. The other extension points' plugins return
scores or verdicts, never errors: upstream's cases of them returning an Error status are skipped, except
where a rule makes the error gpufleet's too (a score out of range, a refused configuration). gpufleet
models the extension points QueueSort, PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score, Permit
and Bind; Reserve (the state's assignment), PreBindPreFlight, PreBind and PostBind
are not plugin lists, so they are left out of the lists compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from builders import Skip, cases, cluster, make_pod, scheduler_config_errors

from gpufleet.cluster.state import BoolArray, IntArray, NodeRow
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling import registry
from gpufleet.scheduling.framework import (
    SUCCESS,
    Bind,
    Code,
    DynamicFilter,
    NodesPreFilter,
    Permit,
    Plugin,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    PreEnqueue,
    PreFilter,
    QueueSort,
    ScoreRangeError,
    StaticScore,
    Status,
    filter_error,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import fit_error
from gpufleet.scheduling.plugins.priority_sort import PrioritySort
from gpufleet.scheduling.profile import Profile, ProfileError, build_profile, expand, merged_plugin_sets
from gpufleet.scheduling.queue import QueuedPod
from gpufleet.scheduling.scheduler import Scheduler

UPSTREAM = "framework_test.go"
NAME = "default-scheduler"
INJECT_REASON = "injected status"  # injectReason
INJECT_FILTER_REASON = "injected filter status"  # injectFilterReason
NODES = ("node1", "node2")  # the file's ``nodes``

QUEUE_SORT_PLUGIN = "no-op-queue-sort-plugin"
BIND_PLUGIN = "bind-plugin"
SCORE_WITH_NORMALIZE_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_2 = "score-with-normalize-plugin-2"
SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_PLUGIN_2 = "score-plugin-2"
NOT_IMPLEMENTING_SCORE = "plugin-not-implementing-score"
DUPLICATE_PLUGIN = "duplicate-plugin"
TEST_PLUGIN = "test-plugin"
PRE_ENQUEUE_PLUGIN = "preEnqueue-plugin"
#: ``defaultWeights`` of ``buildScoreConfigDefaultWeights``
DEFAULT_WEIGHTS = {SCORE_WITH_NORMALIZE_1: 1, SCORE_WITH_NORMALIZE_2: 2, SCORE_PLUGIN_1: 1}

NO_ERRORS = (
    "an Error status of a PreScore, Score, PostFilter or Permit plugin has no gpufleet counterpart: gpufleet "
    "models the Error statuses of PreFilter and Filter plugins (framework.PluginError), its other plugins "
    "return scores or verdicts, never errors"
)
NO_EXTENSIONS = (
    "PreFilterExtensions (AddPod/RemovePod) have no gpufleet counterpart: its pod-aware plugins judge the "
    "pods placed (and those held for preemption) afresh, with no per-plugin update hooks to call or count"
)
NO_METRICS = "the framework's Prometheus metrics are not modelled by gpufleet"
NO_BINDING_CYCLE = (
    "gpufleet has no Reserve, PreBindPreFlight, PreBind or Bind plugin list: Reserve is the state's "
    "assignment and binding is a state change (DefaultBinder), with no plugin statuses to run"
)
ONE_PERMIT = (
    "a gpufleet profile runs one Permit plugin (Coscheduling's gang wait): several Permit plugins in a row "
    "cannot be configured"
)
PERMIT_WAIT = (
    "gpufleet's Permit Wait is a gang's (Coscheduling): a pod waits for its PodGroup, with no wait of a "
    "pod alone"
)


# -- the fakes ---------------------------------------------------------------------------------------
class NoOpQueueSort(QueueSort):
    """``TestQueueSortPlugin``."""

    name = QUEUE_SORT_PLUGIN

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        return ()


class NoOpBind(Bind):
    """``TestBindPlugin``."""

    name = BIND_PLUGIN


class InjectedScore(StaticScore):
    """``TestScorePlugin``: every node scores ``scoreRes`` (from its args); ``skipped``: its PreScore
    returned Skip (upstream's ``SetSkipScorePlugins``), so Score must not run."""

    name = SCORE_PLUGIN_1

    def __init__(self, score_res: int = 0, score_status: int = 0) -> None:
        self.score_res = score_res
        self.score_status = score_status
        self.skipped = False

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Plugin:
        return cls(int(args.get("scoreRes", 0)), int(args.get("scoreStatus", 0)))

    def applies(self, pod: Pod) -> bool:
        return not self.skipped

    def raw(self, pod: Pod, node: Node) -> int:
        assert self.score_status == 0, "the Score of a plugin whose PreScore returned Skip ran"
        return self.score_res


class InjectedScore2(InjectedScore):
    name = SCORE_PLUGIN_2


class InjectedNormalizeScore(InjectedScore):
    """``TestScoreWithNormalizePlugin``: scores ``scoreRes``, then NormalizeScore sets every node's score to
    ``normalizeRes``."""

    name = SCORE_WITH_NORMALIZE_1

    def __init__(self, score_res: int = 0, score_status: int = 0, normalize_res: int = 0) -> None:
        super().__init__(score_res, score_status)
        self.normalize_res = normalize_res

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Plugin:
        return cls(
            int(args.get("scoreRes", 0)), int(args.get("scoreStatus", 0)), int(args.get("normalizeRes", 0))
        )

    def normalize(self, raw: IntArray) -> IntArray:
        return np.full_like(raw, self.normalize_res)


class InjectedNormalizeScore2(InjectedNormalizeScore):
    name = SCORE_WITH_NORMALIZE_2


class NotImplementingScore(Plugin):
    """``PluginNotImplementingScore``: no extension point at all."""

    name = NOT_IMPLEMENTING_SCORE


class DuplicatePlugin(PreFilter):
    """``TestDuplicatePlugin``: a PreFilter."""

    name = DUPLICATE_PLUGIN

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        return SUCCESS


class AllPoints(QueueSort, PreFilter, DynamicFilter, PostFilter, StaticScore, Permit, Bind):
    """``TestPlugin``: implements every extension point (gpufleet's: see the module docstring)."""

    name = TEST_PLUGIN

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        return ()

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        return SUCCESS

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return np.ones(len(idx), dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        return True

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))

    def raw(self, pod: Pod, node: Node) -> int:
        return 0

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        return SUCCESS, None


class NoOpPreEnqueue(PreEnqueue):
    """``TestPreEnqueuePlugin``."""

    name = PRE_ENQUEUE_PLUGIN

    def pre_enqueue(self, pod: Pod) -> Status:
        return SUCCESS


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Upstream's ``registry`` of fakes, put in gpufleet's registry for the test."""
    known = registry.plugins()
    for cls in (
        NoOpQueueSort,
        NoOpBind,
        InjectedScore,
        InjectedScore2,
        InjectedNormalizeScore,
        InjectedNormalizeScore2,
        NotImplementingScore,
        DuplicatePlugin,
        AllPoints,
        NoOpPreEnqueue,
    ):
        monkeypatch.setitem(known, cls.name, cls)
    yield


Points = dict[str, tuple[PluginRef, ...]]


def profile_config(
    plugins: Points,
    args: dict[str, dict[str, object]] | None = None,
    *,
    multi_disabled: Sequence[str] = (),
    disabled: dict[str, tuple[str, ...]] | None = None,
    queue_sort_and_bind: bool = True,
) -> ProfileConfig:
    """A profile of these plugins alone (``multiPoint`` defaults disabled with ``"*"``); with
    ``queue_sort_and_bind``, upstream's ``newFrameworkWithQueueSortAndBind``: the no-op QueueSort and Bind
    plugins where none is given."""
    points = dict(plugins)
    if queue_sort_and_bind:
        points.setdefault("queueSort", (PluginRef(QUEUE_SORT_PLUGIN),))
        points.setdefault("bind", (PluginRef(BIND_PLUGIN),))
    sets = {point: PluginSet(refs, (disabled or {}).get(point, ())) for point, refs in points.items()}
    for point, names in (disabled or {}).items():
        sets.setdefault(point, PluginSet((), names))
    multi = sets.get("multiPoint", PluginSet())
    sets["multiPoint"] = PluginSet(multi.enabled, ("*", *multi_disabled))
    return ProfileConfig(NAME, sets, plugin_args=dict(args or {}))


def score_config(*names: str) -> Points:
    """``buildScoreConfigDefaultWeights``: these plugins at Score, weighted by ``defaultWeights`` (0 where it
    has none)."""
    return {"score": tuple(PluginRef(n, DEFAULT_WEIGHTS.get(n, 0)) for n in names)}


# -- TestInitFrameworkWithScorePlugins ----------------------------------------------------------------
INIT_WITH_SCORE: list[Any] = [
    ("enabled Score plugin doesn't exist in registry", score_config("notExist"), True),
    (
        "enabled Score plugin doesn't extend the ScorePlugin interface",
        score_config(NOT_IMPLEMENTING_SCORE),
        True,
    ),
    ("Score plugins are nil", {}, False),
    ("enabled Score plugin list is empty", score_config(), False),
    ("enabled plugin only implements ScorePlugin interface", score_config(SCORE_PLUGIN_1), False),
    (
        "enabled plugin implements ScoreWithNormalizePlugin interface",
        score_config(SCORE_WITH_NORMALIZE_1),
        False,
    ),
]


@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(
    ("plugins", "init_err"), cases("TestInitFrameworkWithScorePlugins", INIT_WITH_SCORE, 2)
)
def test_init_framework_with_score_plugins(plugins: Points, init_err: bool) -> None:
    """A plugin kube-scheduler does not know is refused by the configuration's validation (gpufleet's
    loader: ``plugin "notExist" does not exist``); one enabled at Score that is no Score plugin by
    ``build_profile``."""
    body = {
        "profiles": [
            {
                "plugins": {
                    point: {"enabled": [{"name": r.name} for r in refs]} for point, refs in plugins.items()
                }
            }
        ]
    }
    errors = scheduler_config_errors(body)
    try:
        build_profile(profile_config(plugins))
    except ProfileError as exc:
        errors.append(str(exc))
    assert bool(errors) == init_err, errors


# -- TestNewFrameworkErrors ---------------------------------------------------------------------------
@pytest.mark.usefixtures("fakes")
def test_new_framework_errors_duplicate_plugin_name() -> None:
    """TestNewFrameworkErrors/duplicate plugin name: one plugin enabled twice at one extension point."""
    config = profile_config(
        {"preFilter": (PluginRef(DUPLICATE_PLUGIN, 1), PluginRef(DUPLICATE_PLUGIN, 1))},
        {DUPLICATE_PLUGIN: {}},
    )
    with pytest.raises(ProfileError, match="already registered"):
        build_profile(config)


@pytest.mark.usefixtures("fakes")
def test_new_framework_errors_duplicate_plugin_config() -> None:
    """TestNewFrameworkErrors/duplicate plugin config: ``repeated config for plugin``; gpufleet's
    ``ProfileConfig`` keeps args by name, so the configuration's validation refuses the repeat."""
    body = {
        "profiles": [
            {
                "plugins": {"preFilter": {"enabled": [{"name": DUPLICATE_PLUGIN, "weight": 1}]}},
                "pluginConfig": [{"name": DUPLICATE_PLUGIN}, {"name": DUPLICATE_PLUGIN}],
            }
        ]
    }
    assert any("pluginConfig[1]" in e and "Duplicate value" in e for e in scheduler_config_errors(body)), (
        scheduler_config_errors(body)
    )


# -- TestNewFrameworkMultiPointExpansion --------------------------------------------------------------
MODELLED_POINTS = ("queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "permit", "bind")
ALL_OF_TEST_PLUGIN = {point: (TEST_PLUGIN,) for point in MODELLED_POINTS}


def listed(**points: Sequence[str | tuple[str, int]]) -> dict[str, tuple[str | tuple[str, int], ...]]:
    return {point: tuple(names) for point, names in points.items() if names}


def ref(name: str, weight: int | None = None) -> PluginRef:
    return PluginRef(name, weight)


EXPANSION: list[Any] = [
    (
        "plugin expansion",
        {"multiPoint": (ref(TEST_PLUGIN, 5),)},
        {},
        {},
        {**ALL_OF_TEST_PLUGIN, "score": ((TEST_PLUGIN, 5),)},
        None,
    ),
    (
        "disable MultiPoint plugin at some extension points",
        {"multiPoint": (ref(TEST_PLUGIN),)},
        {},
        {"preScore": (TEST_PLUGIN,), "score": (TEST_PLUGIN,)},
        {p: v for p, v in ALL_OF_TEST_PLUGIN.items() if p not in ("preScore", "score")},
        None,
    ),
    (
        "Multiple MultiPoint plugins",
        {"multiPoint": (ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1))},
        {},
        {},
        {
            **ALL_OF_TEST_PLUGIN,
            "preScore": (TEST_PLUGIN, SCORE_PLUGIN_1),
            "score": ((TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)),
        },
        None,
    ),
    (
        "disable MultiPoint extension",
        {"multiPoint": (ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1))},
        {},
        {"preScore": ("*",)},
        {
            **{p: v for p, v in ALL_OF_TEST_PLUGIN.items() if p != "preScore"},
            "score": ((TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)),
        },
        None,
    ),
    (
        "Reorder MultiPoint plugins (specified extension takes precedence)",
        {
            "multiPoint": (ref(SCORE_WITH_NORMALIZE_1), ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1)),
            "score": (ref(SCORE_PLUGIN_1), ref(TEST_PLUGIN)),
        },
        {},
        {},
        {
            **ALL_OF_TEST_PLUGIN,
            "preScore": (SCORE_WITH_NORMALIZE_1, TEST_PLUGIN, SCORE_PLUGIN_1),
            "score": ((SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)),
        },
        "upstream's ScoreWithNormalize fake has no PreScore, gpufleet's StaticScore always has one",
    ),
    (
        "Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
        {
            "multiPoint": (ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1)),
            "score": (ref(SCORE_WITH_NORMALIZE_1), ref(SCORE_PLUGIN_1), ref(TEST_PLUGIN)),
        },
        {},
        {},
        {
            **ALL_OF_TEST_PLUGIN,
            "preScore": (TEST_PLUGIN, SCORE_PLUGIN_1),
            "score": ((SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)),
        },
        None,
    ),
    (
        "Override MultiPoint plugins weights",
        {
            "multiPoint": (ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1)),
            "score": (ref(SCORE_PLUGIN_1, 5), ref(TEST_PLUGIN, 3)),
        },
        {},
        {},
        {
            **ALL_OF_TEST_PLUGIN,
            "preScore": (TEST_PLUGIN, SCORE_PLUGIN_1),
            "score": ((SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)),
        },
        None,
    ),
    (
        "disable and enable MultiPoint plugins with '*'",
        {"multiPoint": (ref(QUEUE_SORT_PLUGIN), ref(BIND_PLUGIN), ref(SCORE_PLUGIN_1))},
        {},
        {},
        {
            "queueSort": (QUEUE_SORT_PLUGIN,),
            "preScore": (SCORE_PLUGIN_1,),
            "score": ((SCORE_PLUGIN_1, 1),),
            "bind": (BIND_PLUGIN,),
        },
        None,
    ),
    (
        "disable and enable MultiPoint plugin by name",
        {"multiPoint": (ref(BIND_PLUGIN), ref(QUEUE_SORT_PLUGIN), ref(SCORE_PLUGIN_1))},
        {"multi_disabled": (SCORE_PLUGIN_1,)},
        {},
        {
            "queueSort": (QUEUE_SORT_PLUGIN,),
            "preScore": (SCORE_PLUGIN_1,),
            "score": ((SCORE_PLUGIN_1, 1),),
            "bind": (BIND_PLUGIN,),
        },
        None,
    ),
    (
        "Expect 'already registered' error",
        {"multiPoint": (ref(TEST_PLUGIN), ref(TEST_PLUGIN))},
        {},
        {},
        "already registered",
        None,
    ),
    (
        "Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
        {
            "multiPoint": (ref(TEST_PLUGIN), ref(SCORE_PLUGIN_1)),
            "score": (ref(SCORE_PLUGIN_1, 5), ref(SCORE_PLUGIN_2, 5), ref(TEST_PLUGIN, 3)),
        },
        {},
        {},
        {
            **ALL_OF_TEST_PLUGIN,
            "preScore": (TEST_PLUGIN, SCORE_PLUGIN_1),
            "score": ((SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3), (SCORE_PLUGIN_2, 5)),
        },
        None,
    ),
]


def list_plugins(config: ProfileConfig) -> dict[str, tuple[str | tuple[str, int], ...]]:
    """``ListPlugins``: each modelled extension point's plugins in order after the multiPoint expansion
    (``expand``, as ``build_profile`` reads it), the Score plugins with the weights the built profile
    gives them."""
    profile = build_profile(config)
    merged = merged_plugin_sets(config)
    weights = {plugin.name: weight for plugin, weight in profile.static_scores}
    out: dict[str, tuple[str | tuple[str, int], ...]] = {}
    for point in MODELLED_POINTS:
        names = [r.name for r in expand(point, merged)]
        if names:
            out[point] = tuple((n, weights[n]) for n in names) if point == "score" else tuple(names)
    return out


@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(
    ("plugins", "options", "disabled", "want", "note"),
    cases("TestNewFrameworkMultiPointExpansion", EXPANSION, 5),
)
def test_new_framework_multi_point_expansion(
    plugins: Points,
    options: dict[str, Any],
    disabled: dict[str, tuple[str, ...]],
    want: Any,
    note: str | None,
) -> None:
    """``expandMultiPointPlugins``: a plugin named at a point keeps that point's place and weight (the point's
    own order first), the other multiPoint plugins follow, then the rest of the point's; disabled at a
    point (or ``*``) it is left out there; enabled twice in multiPoint is refused. ``note``: where the
    fakes differ, the expected list is gpufleet's and says why."""
    config = profile_config(plugins, disabled=disabled, queue_sort_and_bind=False, **options)
    if isinstance(want, str):
        with pytest.raises(ProfileError, match=want):
            build_profile(config)
        return
    assert list_plugins(config) == listed(**want)


# -- TestPreEnqueuePlugins ----------------------------------------------------------------------------
@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(
    ("names", "want"),
    [
        pytest.param((), [], id="TestPreEnqueuePlugins/no PreEnqueuePlugin registered"),
        pytest.param(
            (PRE_ENQUEUE_PLUGIN,),
            [PRE_ENQUEUE_PLUGIN],
            id="TestPreEnqueuePlugins/one PreEnqueuePlugin registered",
        ),
    ],
)
def test_pre_enqueue_plugins(names: tuple[str, ...], want: list[str]) -> None:
    profile = build_profile(profile_config({"preEnqueue": tuple(PluginRef(n) for n in names)}))
    assert [p.name for p in profile.pre_enqueues] == want


# -- the runtime harness: one scheduling attempt with a hand-built profile -----------------------------
class SpyPostFilter(PostFilter):
    """Records the nodes the attempt left resolvable (where preemption may help: Unschedulable), and says
    nothing."""

    name = "SpyPostFilter"

    def __init__(self) -> None:
        self.resolvable: list[str] | None = None

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        nodes = request.ctx.state.nodes
        self.resolvable = sorted(nodes[int(i)].name for i in request.resolvable)
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))


def scheduler_for(profile: Profile, nodes: Sequence[str] = NODES) -> Scheduler:
    """A scheduler of ``profile`` on upstream's ``nodes`` (names only, no capacity)."""
    state = cluster([Node(n) for n in nodes])
    sched = Scheduler(SchedulerConfig("conformance", [ProfileConfig()]), state, GangView(state))
    sched.profiles[NAME] = profile
    return sched


def attempt(profile: Profile, nodes: Sequence[str] = NODES) -> tuple[Scheduler, str | None, str]:
    """One scheduling attempt of a pod that requests nothing: the scheduler, the node or None, and the
    message."""
    sched = scheduler_for(profile, nodes)
    node, message = sched.try_schedule(make_pod(name="p"))
    return sched, node, message


def profile_of(*plugins: Plugin, post_filters: Sequence[PostFilter] = ()) -> Profile:
    profile = Profile(NAME, PrioritySort())
    for plugin in plugins:
        if isinstance(plugin, PreFilter):
            profile.pre_filters.append(plugin)
        elif isinstance(plugin, DynamicFilter):
            profile.filters.append(plugin)
        elif isinstance(plugin, StaticScore):
            profile.static_scores.append((plugin, 1))
        else:
            raise TypeError(plugin)
    profile.post_filters = list(post_filters)
    return profile


# -- TestRunPreFilterPlugins --------------------------------------------------------------------------
class InjectedPreFilter(PreFilter):
    """``TestPlugin``'s PreFilter returning ``PreFilterStatus``; appends its name to ``ran``."""

    def __init__(self, name: str, code: Code, ran: list[str]) -> None:
        self.name = name  # type: ignore[misc]
        self.code = code
        self.ran = ran

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        self.ran.append(self.name)
        return Status(self.code, (INJECT_REASON,) if self.code != Code.SUCCESS else (), self.name)


S, U, UU, SKIP = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SKIP
# (name, [(plugin, PreFilterStatus)], want skipped, want code)
RUN_PRE_FILTER: list[Any] = [
    ("all PreFilter returned success", [("success1", S), ("success2", S)], set(), S),
    (
        "one PreFilter plugin returned success, but another PreFilter plugin returned non-success",
        [("success", S), ("error", Code.ERROR)],
        set(),
        Code.ERROR,
    ),
    (
        "one PreFilter plugin returned skip, but another PreFilter plugin returned non-success",
        [("skip", SKIP), ("error", Code.ERROR)],
        {"skip"},
        Code.ERROR,
    ),
    (
        "all PreFilter plugins returned skip",
        [("skip1", SKIP), ("skip2", SKIP), ("skip3", SKIP)],
        {"skip1", "skip2", "skip3"},
        S,
    ),
    (
        "some PreFilter plugins returned skip",
        [("skip1", SKIP), ("success1", S), ("skip2", SKIP), ("success2", S)],
        {"skip1", "skip2"},
        S,
    ),
    (
        "one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed",
        [("unschedulable", U), ("skip", SKIP)],
        {"skip"},
        U,
    ),
    (
        "one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins aren't executed",
        [("unresolvable", UU), ("skip", SKIP)],
        set(),
        UU,
    ),
]


@pytest.mark.parametrize(
    ("plugins", "want_skipped", "want_code"), cases("TestRunPreFilterPlugins", RUN_PRE_FILTER, 3)
)
def test_run_pre_filter_plugins(
    plugins: list[tuple[str, Code]], want_skipped: set[str], want_code: Code
) -> None:
    """The PreFilters in order: Skip goes on, Unschedulable is kept while the rest still run (preemption may
    then help on every node), UnschedulableAndUnresolvable stops them (no node worth preempting on), an
    Error aborts the attempt with it. The skipped plugins are those that ran and returned Skip."""
    ran: list[str] = []
    fakes = [InjectedPreFilter(name, code, ran) for name, code in plugins]
    spy = SpyPostFilter()
    sched, node, message = attempt(profile_of(*fakes, post_filters=[spy]))
    codes = dict(plugins)
    assert {name for name in ran if codes[name] == SKIP} == want_skipped
    if want_code == S:
        assert node is not None and spy.resolvable is None
        return
    rejector = next(name for name, code in plugins if code == want_code)
    assert node is None
    if want_code == Code.ERROR:  # the attempt's error, not a FitError: no plugin rejected, no PostFilter
        assert message == f'running PreFilter plugin "{rejector}": {INJECT_REASON}'
        assert sched.rejectors == set() and spy.resolvable is None
        return
    assert message == fit_error(len(NODES), Counter(), INJECT_REASON)
    assert sched.rejectors == {rejector}
    assert spy.resolvable == (list(NODES) if want_code == U else [])


def test_run_pre_filter_plugins_all_nodes_filtered_out_by_prefilter_result() -> None:
    """TestRunPreFilterPlugins/all nodes are filtered out by prefilter result, but other plugins aren't
    executed because we consider all nodes are filtered out by UnschedulableAndUnresolvable: a
    ``PreFilterResult`` of no node rejects the pod with ``node(s) didn't satisfy plugin <name>``, no node
    worth preempting on. (gpufleet's NodesPreFilters narrow the nodes apart from the status PreFilters,
    so whether the later "skip" PreFilter ran is not compared.)"""

    class RejectAllNodes(NodesPreFilter):
        name = "reject-all-nodes"

        def nodes(self, pod: Pod) -> set[str] | None:
            return set()

        def reads(self, pod: Pod) -> tuple[object, ...]:
            return ()

    spy = SpyPostFilter()
    profile = profile_of(post_filters=[spy])
    profile.node_prefilters.append(RejectAllNodes())
    sched, node, message = attempt(profile)
    assert node is None
    assert message == fit_error(len(NODES), Counter(), "node(s) didn't satisfy plugin reject-all-nodes")
    assert sched.rejectors == {"reject-all-nodes"}
    assert spy.resolvable == []


# -- TestFilterPlugins --------------------------------------------------------------------------------
class InjectedFilter(DynamicFilter):
    """``TestPlugin``'s Filter returning ``FilterStatus`` on every node; ``skipped``: its PreFilter returned
    Skip (``SetSkipFilterPlugins``), so its Filter must not run."""

    def __init__(self, name: str, code: Code, skipped: bool = False) -> None:
        self.name = name  # type: ignore[misc]
        self.code = code
        self.unresolvable = code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        self.skipped = skipped

    def skips(self, pod: Pod) -> bool:
        return self.skipped

    def _verdict(self) -> bool:
        assert not self.skipped, "the Filter of a plugin whose PreFilter returned Skip ran"
        if self.code == Code.ERROR:  # ``errInjectedFilterStatus``
            raise filter_error(self.name, INJECT_FILTER_REASON)
        return self.code == Code.SUCCESS

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return np.full(len(idx), self._verdict(), dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        return self._verdict()

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        return [(INJECT_FILTER_REASON, ~self.passes(ctx, idx))]


# (name, [(plugin, FilterStatus)], skipped plugins, want: None (success) or (code, plugin))
FILTER: list[Any] = [
    ("SuccessFilter", [("TestPlugin", S)], set(), None),
    ("ErrorFilter", [("TestPlugin", Code.ERROR)], set(), (Code.ERROR, "TestPlugin")),
    ("UnschedulableFilter", [("TestPlugin", U)], set(), (U, "TestPlugin")),
    ("UnschedulableAndUnresolvableFilter", [("TestPlugin", UU)], set(), (UU, "TestPlugin")),
    (
        "ErrorAndErrorFilters",
        [("TestPlugin1", Code.ERROR), ("TestPlugin2", Code.ERROR)],
        set(),
        (Code.ERROR, "TestPlugin1"),
    ),
    (
        "UnschedulableAndUnschedulableFilters",
        [("TestPlugin1", U), ("TestPlugin2", U)],
        set(),
        (U, "TestPlugin1"),
    ),
    (
        "UnschedulableAndUnschedulableAndUnresolvableFilters",
        [("TestPlugin1", UU), ("TestPlugin2", U)],
        set(),
        (UU, "TestPlugin1"),
    ),
    ("SuccessAndSuccessFilters", [("TestPlugin1", S), ("TestPlugin2", S)], set(), None),
    ("SuccessAndSkipFilters", [("TestPlugin1", S), ("TestPlugin2", Code.ERROR)], {"TestPlugin2"}, None),
    (
        "ErrorAndSuccessFilters",
        [("TestPlugin1", Code.ERROR), ("TestPlugin2", S)],
        set(),
        (Code.ERROR, "TestPlugin1"),
    ),
    (
        "SuccessAndErrorFilters",
        [("TestPlugin1", S), ("TestPlugin2", Code.ERROR)],
        set(),
        (Code.ERROR, "TestPlugin2"),
    ),
    ("SuccessAndUnschedulableFilters", [("TestPlugin1", S), ("TestPlugin2", U)], set(), (U, "TestPlugin2")),
]


@pytest.mark.parametrize(("plugins", "skipped", "want"), cases("TestFilterPlugins", FILTER, 3))
def test_filter_plugins(
    plugins: list[tuple[str, Code]], skipped: set[str], want: tuple[Code, str] | None
) -> None:
    """``RunFilterPlugins`` on one node: the first rejecting plugin's status is the node's (its code, its
    plugin, its message), the rest not run; a plugin its PreFilter skipped is not run. An Error status
    aborts the attempt with it (``framework.PluginError``)."""
    fakes = [InjectedFilter(name, code, name in skipped) for name, code in plugins]
    spy = SpyPostFilter()
    sched, node, message = attempt(profile_of(*fakes, post_filters=[spy]), nodes=["node1"])
    if want is None:
        assert node == "node1"
        return
    code, plugin = want
    assert node is None
    if code == Code.ERROR:  # the attempt's error (``running "<plugin>" filter plugin: ...``), no PostFilter
        assert message == f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}'
        assert sched.rejectors == set() and spy.resolvable is None
        return
    assert message == fit_error(1, Counter({INJECT_FILTER_REASON: 1}))
    assert sched.rejectors == {plugin}
    assert spy.resolvable == (["node1"] if code == U else [])


# -- TestPostFilterPlugins ----------------------------------------------------------------------------
class InjectedPostFilter(PostFilter):
    """``TestPlugin``'s PostFilter returning ``PostFilterStatus``: on Success it makes the pod schedulable
    (gpufleet: nominates it to node1)."""

    def __init__(self, name: str, code: Code, ran: list[str]) -> None:
        self.name = name  # type: ignore[misc]
        self.code = code
        self.ran = ran

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        self.ran.append(self.name)
        if self.code == Code.SUCCESS:
            return PostFilterResult(Status(Code.SUCCESS, (INJECT_REASON,), self.name), nominated="node1")
        return PostFilterResult(Status(self.code, (INJECT_REASON,), self.name))


class Rejecting(DynamicFilter):
    """Every node Unschedulable, so the PostFilters run."""

    name = "Rejecting"

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return np.zeros(len(idx), dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        return False

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        return [(INJECT_FILTER_REASON, np.ones(len(idx), dtype=bool))]


# (name, [(plugin, PostFilterStatus)], want ran, want: "nominated" or the PostFilter message)
POST_FILTER: list[Any] = [
    ("a single plugin makes a Pod schedulable", [("TestPlugin", S)], ["TestPlugin"], "nominated"),
    (
        "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable",
        [("TestPlugin1", U), ("TestPlugin2", S)],
        ["TestPlugin1", "TestPlugin2"],
        "nominated",
    ),
    (
        "plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable",
        [("TestPlugin1", S), ("TestPlugin2", U)],
        ["TestPlugin1"],
        "nominated",
    ),
    (
        "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable "
        "(plugin1 Error)",
        Skip(NO_ERRORS),
    ),
    (
        "plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable",
        [("TestPlugin1", U), ("TestPlugin2", UU), ("TestPlugin3", U)],
        ["TestPlugin1", "TestPlugin2"],
        INJECT_REASON,
    ),
    (
        "both plugins failed to make a Pod schedulable",
        [("TestPlugin1", U), ("TestPlugin2", U)],
        ["TestPlugin1", "TestPlugin2"],
        f"{INJECT_REASON}, {INJECT_REASON}",
    ),
]


@pytest.mark.parametrize(("plugins", "want_ran", "want"), cases("TestPostFilterPlugins", POST_FILTER, 3))
def test_post_filter_plugins(plugins: list[tuple[str, Code]], want_ran: list[str], want: str) -> None:
    """``RunPostFilterPlugins``: the first Success ends them (the pod nominated); an
    UnschedulableAndUnresolvable one ends them with its message alone (a third plugin, added here, is not
    run); the Unschedulable ones' messages are joined."""
    ran: list[str] = []
    fakes = [InjectedPostFilter(name, code, ran) for name, code in plugins]
    sched = scheduler_for(profile_of(Rejecting(), post_filters=fakes))
    pod = make_pod(name="p")
    placement = sched._find_node(sched.profiles[NAME], pod.shape(), PodContext(pod, sched.state))
    assert ran == want_ran
    if want == "nominated":
        assert placement.nominated == "node1"
    else:
        assert placement.nominated is None
        assert placement.message == fit_error(2, Counter({INJECT_FILTER_REASON: 2}), "", want)


# -- TestFilterPluginsWithNominatedPods ---------------------------------------------------------------
class HeldSpy(DynamicFilter):
    """Passes every node; records the pods held on nodes for the pod being filtered (``addNominatedPods``:
    the nominated pods of at least its priority, upstream's AddPod calls)."""

    name = "TestPlugin2"

    def __init__(self) -> None:
        self.sched: Scheduler | None = None
        self.held: list[str] = []

    def _record(self) -> None:
        assert self.sched is not None
        self.held = [pod.name for pod, _ in self.sched.held]

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        self._record()
        return np.ones(len(idx), dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        self._record()
        return True


def priority_pod(name: str, priority: int) -> Pod:
    """``lowPriorityPod`` (0) / ``highPriorityPod`` (1000)."""
    return replace(make_pod(name=name), priority=priority)


# (name, pod priority, nominated pod priority or None, want held)
WITH_NOMINATED: list[Any] = [
    ("node has no nominated pod", 0, None, []),
    ("node has a high-priority nominated pod and all filters succeed", 0, 1000, ["high"]),
    ("node has a high-priority nominated pod and pre filters fail", Skip(NO_EXTENSIONS)),
    ("node has a low-priority nominated pod and pre filters return unschedulable", 1000, 0, []),
]


@pytest.mark.parametrize(
    ("priority", "nominated", "want_held"), cases("TestFilterPluginsWithNominatedPods", WITH_NOMINATED, 3)
)
def test_filter_plugins_with_nominated_pods(
    priority: int, nominated: int | None, want_held: list[str]
) -> None:
    """``RunFilterPluginsWithNominatedPods``: a pod nominated to the node of at least the pod's priority is
    held there while the filters run (a lower one is not, so its AddPod's Unschedulable never matters);
    the filters pass, so does the node."""
    spy = HeldSpy()
    sched = scheduler_for(profile_of(spy), ["testNode"])
    spy.sched = sched
    pod = priority_pod("low" if priority == 0 else "high", priority)
    if nominated is not None:
        nominee = priority_pod("high" if nominated else "low", nominated)
        sched.nominated[nominee.key] = "testNode"
        sched.nominees[nominee.key] = nominee
    assert sched.decide(pod).nodes == ("testNode",)
    assert spy.held == want_held


def test_filter_plugins_with_nominated_pods_node_has_a_high_priority_nominated_pod_and_filters_fail() -> None:
    """TestFilterPluginsWithNominatedPods/node has a high-priority nominated pod and filters fail (out of
    the table: an error, not a node): the Filter's Error status, with the nominated pod held, is the
    attempt's error."""
    sched = scheduler_for(profile_of(InjectedFilter("TestPlugin2", Code.ERROR)), ["testNode"])
    nominee = priority_pod("high", 1000)
    sched.nominated[nominee.key] = "testNode"
    sched.nominees[nominee.key] = nominee
    decision = sched.decide(priority_pod("low", 0))
    assert decision.nodes == ()
    assert decision.message == f'running "TestPlugin2" filter plugin: {INJECT_FILTER_REASON}'


# -- TestRunPreScorePlugins ---------------------------------------------------------------------------
# (name, [(plugin, PreScoreStatus)], want skipped)
RUN_PRE_SCORE: list[Any] = [
    ("all PreScorePlugins returned success", [("success1", S), ("success2", S)], set()),
    (
        "one PreScore plugin returned success, but another PreScore plugin returned non-success",
        Skip(NO_ERRORS),
    ),
    ("one PreScore plugin returned skip, but another PreScore plugin returned non-success", Skip(NO_ERRORS)),
    (
        "all PreScore plugins returned skip",
        [("skip1", SKIP), ("skip2", SKIP), ("skip3", SKIP)],
        {"skip1", "skip2", "skip3"},
    ),
    (
        "some PreScore plugins returned skip",
        [("skip1", SKIP), ("success1", S), ("skip2", SKIP), ("success2", S)],
        {"skip1", "skip2"},
    ),
]


class ScoredOrSkipped(StaticScore):
    """A Score plugin whose PreScore returns Success or Skip; records the nodes its Score ran on."""

    def __init__(self, name: str, code: Code) -> None:
        self.name = name  # type: ignore[misc]
        self.code = code
        self.scored: list[str] = []

    def applies(self, pod: Pod) -> bool:
        return self.code != Code.SKIP

    def raw(self, pod: Pod, node: Node) -> int:
        self.scored.append(node.name)
        return 1 if node.name == "node1" else 2  # (not all equal: the scores are read)


@pytest.mark.parametrize(("plugins", "want_skipped"), cases("TestRunPreScorePlugins", RUN_PRE_SCORE, 2))
def test_run_pre_score_plugins(plugins: list[tuple[str, Code]], want_skipped: set[str]) -> None:
    """A plugin whose PreScore returned Skip is skipped at Score (``GetSkipScorePlugins``): its Score is not
    run; the others score every feasible node."""
    fakes = [ScoredOrSkipped(name, code) for name, code in plugins]
    best = scheduler_for(profile_of(*fakes)).decide(make_pod(name="p")).nodes
    assert best == (("node2",) if len(want_skipped) < len(fakes) else NODES)
    assert {f.name for f in fakes if not f.scored} == want_skipped
    assert all(sorted(f.scored) == list(NODES) for f in fakes if f.name not in want_skipped)


# -- TestRunScorePlugins ------------------------------------------------------------------------------
# (name, plugins, args, skipped, want TotalScore of each node or ScoreRangeError)
RUN_SCORE: list[Any] = [
    ("no Score plugins", score_config(), {}, set(), 0),
    ("single Score plugin", score_config(SCORE_PLUGIN_1), {SCORE_PLUGIN_1: {"scoreRes": 1}}, set(), 1),
    (
        "single ScoreWithNormalize plugin",
        score_config(SCORE_WITH_NORMALIZE_1),
        {SCORE_WITH_NORMALIZE_1: {"scoreRes": 10, "normalizeRes": 5}},
        set(),
        5,
    ),
    (
        "3 Score plugins, 2 NormalizeScore plugins",
        score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1, SCORE_WITH_NORMALIZE_2),
        {
            SCORE_PLUGIN_1: {"scoreRes": 1},
            SCORE_WITH_NORMALIZE_1: {"scoreRes": 3, "normalizeRes": 4},
            SCORE_WITH_NORMALIZE_2: {"scoreRes": 4, "normalizeRes": 5},
        },
        set(),
        15,
    ),
    ("score fails", Skip(NO_ERRORS)),
    ("normalize fails", Skip(NO_ERRORS)),
    (
        "Score plugin return score greater than MaxNodeScore",
        score_config(SCORE_PLUGIN_1),
        {SCORE_PLUGIN_1: {"scoreRes": 101}},
        set(),
        ScoreRangeError,
    ),
    (
        "Score plugin return score less than MinNodeScore",
        score_config(SCORE_PLUGIN_1),
        {SCORE_PLUGIN_1: {"scoreRes": -1}},
        set(),
        ScoreRangeError,
    ),
    (
        "ScoreWithNormalize plugin return score greater than MaxNodeScore",
        score_config(SCORE_WITH_NORMALIZE_1),
        {SCORE_WITH_NORMALIZE_1: {"normalizeRes": 101}},
        set(),
        ScoreRangeError,
    ),
    (
        "ScoreWithNormalize plugin return score less than MinNodeScore",
        score_config(SCORE_WITH_NORMALIZE_1),
        {SCORE_WITH_NORMALIZE_1: {"normalizeRes": -1}},
        set(),
        ScoreRangeError,
    ),
    (
        "single Score plugin with MultiPointExpansion",
        {"multiPoint": (PluginRef(SCORE_PLUGIN_1),), "score": (PluginRef(SCORE_PLUGIN_1, 3),)},
        {SCORE_PLUGIN_1: {"scoreRes": 1}},
        set(),
        3,
    ),
    (
        "one success plugin, one skip plugin",
        score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1),
        {SCORE_PLUGIN_1: {"scoreRes": 1}, SCORE_WITH_NORMALIZE_1: {"scoreStatus": 1}},
        {SCORE_WITH_NORMALIZE_1},
        1,
    ),
    (
        "all plugins are skipped in prescore",
        score_config(SCORE_PLUGIN_1),
        {SCORE_PLUGIN_1: {"scoreStatus": 1}},
        {SCORE_PLUGIN_1},
        0,
    ),
    (
        "skipped prescore plugin number greater than the number of score plugins",
        Skip(
            "gpufleet's PreScore Skip is each plugin's own answer (StaticScore.applies), not a set in the "
            "cycle state that could name a plugin the profile does not have"
        ),
    ),
]


@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(("plugins", "args", "skipped", "want"), cases("TestRunScorePlugins", RUN_SCORE, 4))
def test_run_score_plugins(
    plugins: Points, args: dict[str, dict[str, object]], skipped: set[str], want: int | type[Exception]
) -> None:
    """``RunScorePlugins`` on ``nodes``: each plugin's scores, normalised where it has NormalizeScore, must
    lie in [0, 100] (else an error), then are weighted (a weight of 0 or none is 1) and summed; a plugin
    its PreScore skipped adds nothing and is not run."""
    profile = build_profile(profile_config(plugins, args))
    for plugin, _ in profile.static_scores:
        assert isinstance(plugin, InjectedScore)
        plugin.skipped = plugin.name in skipped
    sched = scheduler_for(profile)
    pod = make_pod(name="p")
    if isinstance(want, type):
        with pytest.raises(want, match="it should in the range of \\[0, 100\\] after normalizing"):
            total_scores(sched, pod)
        return
    assert total_scores(sched, pod) == dict.fromkeys(NODES, want)


def total_scores(sched: Scheduler, pod: Pod) -> dict[str, int]:
    """``prioritizeNodes``' TotalScore of every feasible node (gpufleet's cached totals)."""
    cache = sched._cache(sched.profiles[NAME], pod.shape(), PodContext(pod, sched.state))
    idx = cache.feasible_nodes()
    return {sched.state.nodes[int(i)].name: int(s) for i, s in zip(idx, cache.total_scores(idx), strict=True)}


# -- TestPermitPlugins --------------------------------------------------------------------------------
class InjectedPermit(Permit):
    """``TestPlugin``'s Permit returning ``PermitStatus``."""

    name = "TestPlugin"

    def __init__(self, code: Code) -> None:
        self.code = code

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        reasons = (INJECT_REASON,) if self.code != Code.SUCCESS else ()
        return Status(self.code, reasons, self.name), None

    def wait_time(self, group: PodGroup) -> float:
        return 0.0


# (name, PermitStatus or None, want: "bound" or the FitError message)
PERMIT: list[Any] = [
    ("NilPermitPlugin", None, "bound"),
    ("SuccessPermitPlugin", S, "bound"),
    ("UnschedulablePermitPlugin", U, fit_error(1, Counter({INJECT_REASON: 1}))),
    ("ErrorPermitPlugin", Skip(NO_ERRORS)),
    ("UnschedulableAndUnresolvablePermitPlugin", UU, fit_error(1, Counter({INJECT_REASON: 1}))),
    ("WaitPermitPlugin", Skip(PERMIT_WAIT)),
    ("SuccessSuccessPermitPlugin", Skip(ONE_PERMIT)),
    ("ErrorAndErrorPlugins", Skip(ONE_PERMIT)),
]


@pytest.mark.parametrize(("code", "want"), cases("TestPermitPlugins", PERMIT, 2))
def test_permit_plugins(code: Code | None, want: str) -> None:
    """``RunPermitPlugins``: Success lets the pod bind; a rejection, Unschedulable or
    UnschedulableAndUnresolvable (``IsRejected``), fails it with the plugin's message and plugin."""
    profile = profile_of()
    profile.permit = None if code is None else InjectedPermit(code)
    sched = scheduler_for(profile, NODES[:1])
    state = sched.state
    pod = make_pod(name="p")
    sched.add(pod, 0.0)
    outcomes = sched.run(0.0)
    assert len(outcomes) == 1
    if want == "bound":
        assert outcomes[0].kind == "bound" and outcomes[0].node == NODES[0]
        return
    assert outcomes[0].kind == "unschedulable" and outcomes[0].message == want
    assert pod.key not in state.assignments


# -- registry_test.go ---------------------------------------------------------------------------------
def mock_noop_plugin(name: str) -> type[Plugin]:
    """``NewMockNoopPluginFactory``: a plugin class of its own (upstream's uuid-named plugin)."""
    return type(f"Mock{id(name)}", (Plugin,), {"name": name})


# (name, registered before, name to register, want error)
REGISTER: list[Any] = [
    ("valid Register", {}, "pluginFactory1", False),
    ("Register duplicate factories", {"pluginFactory1"}, "pluginFactory1", True),
]


@pytest.mark.parametrize(("before", "to_register", "should_error"), cases("TestRegister", REGISTER, 3))
def test_register(
    monkeypatch: pytest.MonkeyPatch, before: set[str], to_register: str, should_error: bool
) -> None:
    """A second plugin of a registered name is refused and the first kept."""
    known = registry.plugins()
    first = {name: mock_noop_plugin(name) for name in before}
    for name, cls in first.items():
        monkeypatch.setitem(known, name, cls)
    if not before:  # absent now, and again after the test (monkeypatch restores in reverse order)
        monkeypatch.setitem(known, to_register, Plugin)
        monkeypatch.delitem(known, to_register)
    second = mock_noop_plugin(to_register)
    if should_error:
        with pytest.raises(ValueError, match="registered twice"):
            registry.register(second)
        assert known[to_register] is first[to_register]
    else:
        assert registry.register(second) is second
        assert known[to_register] is second


NOT_MODELLED: list[tuple[str, str, str]] = [
    *(
        (
            "TestDecodeInto",
            case,
            "a plugin's args reach gpufleet as the mapping the manifest reader decoded "
            "(JSON and YAML alike); there is no runtime.Unknown to decode",
        )
        for case in ("test decode for JSON config", "test decode for YAML config")
    ),
    *(
        (
            "TestMerge",
            case,
            "gpufleet has one registry, filled by each plugin's @register; there are no "
            "registries to merge (a duplicate name is refused as in TestRegister)",
        )
        for case in ("valid Merge", "Merge duplicate factories")
    ),
    *(
        (
            "TestUnregister",
            case,
            "gpufleet's registry has no Unregister: a plugin is registered where it is defined, once",
        )
        for case in ("valid Unregister", "Unregister non-existent plugin factory")
    ),
    ("TestPreFilterPlugins", "TestPreFilterPlugin", NO_EXTENSIONS),
    *(
        ("TestRunPreFilterExtensionRemovePod", case, NO_EXTENSIONS)
        for case in (
            "no plugins are skipped and all RemovePod() returned success",
            "one RemovePod() returned error",
            "one RemovePod() is skipped",
        )
    ),
    *(
        ("TestRunPreFilterExtensionAddPod", case, NO_EXTENSIONS)
        for case in (
            "no plugins are skipped and all AddPod() returned success",
            "one AddPod() returned error",
            "one AddPod() is skipped",
        )
    ),
    *(
        ("TestPreBindPlugins", case, NO_BINDING_CYCLE)
        for case in (
            "NoPreBindPlugin",
            "SuccessPreBindPlugins",
            "UnschedulablePreBindPlugin",
            "ErrorPreBindPlugin",
            "UnschedulablePreBindPlugin (UnschedulableAndUnresolvable)",
            "SuccessErrorPreBindPlugins",
            "ErrorSuccessPreBindPlugin",
            "SuccessSuccessPreBindPlugin",
            "ErrorAndErrorPlugins",
            "UnschedulableAndSuccessPreBindPlugin",
        )
    ),
    *(
        ("TestPreBindPreFlightPlugins", case, NO_BINDING_CYCLE)
        for case in (
            "Skip when there's no PreBind Plugin",
            "Success when PreBindPreFlight returns Success",
            "Skip when all PreBindPreFlight returns Skip",
            "Error when PreBindPreFlight returns Error",
            "Error when PreBindPreFlight returns Unschedulable",
        )
    ),
    *(
        ("TestReservePlugins", case, NO_BINDING_CYCLE)
        for case in (
            "NoReservePlugin",
            "SuccessReservePlugins",
            "UnschedulableReservePlugin",
            "ErrorReservePlugin",
            "UnschedulableReservePlugin (UnschedulableAndUnresolvable)",
            "SuccessSuccessReservePlugins",
            "ErrorErrorReservePlugins",
            "SuccessErrorReservePlugins",
            "ErrorSuccessReservePlugin",
            "UnschedulableAndSuccessReservePlugin",
        )
    ),
    *(
        ("TestRunBindPlugins", case, NO_BINDING_CYCLE)
        for case in (
            "simple success",
            "error on second",
            "all skip",
            "error on third, but not reached",
            "no bind plugin, returns default binder",
            "invalid status",
            "simple error",
            "success on second, returns success",
            "invalid status, returns error",
            "error after success status, returns success",
            "success before invalid status, returns success",
            "success after error status, returns error",
        )
    ),
    *(
        ("TestRecordingMetrics", f"{point} - {code}", NO_METRICS)
        for point, code in (
            ("PreFilter", "Success"),
            ("PreScore", "Success"),
            ("Score", "Success"),
            ("Reserve", "Success"),
            ("Unreserve", "Success"),
            ("PreBind", "Success"),
            ("Bind", "Success"),
            ("PostBind", "Success"),
            ("Permit", "Success"),
            ("PreFilter", "Error"),
            ("PreScore", "Error"),
            ("Score", "Error"),
            ("Reserve", "Error"),
            ("PreBind", "Error"),
            ("Bind", "Error"),
            ("Permit", "Error"),
            ("Permit", "Wait"),
        )
    ),
    *(
        ("TestPermitWaitDurationMetric", case, NO_METRICS)
        for case in ("WaitOnPermit - No Wait", "WaitOnPermit - Wait Timeout")
    ),
    *(
        (
            "TestWaitOnPermit",
            case,
            "waiting pods are allowed or rejected through the framework handle's WaitingPod; gpufleet's "
            "Permit wait is Coscheduling's gang wait (tests/conformance/test_coscheduling.py)",
        )
        for case in ("Reject Waiting Pod", "Allow Waiting Pod")
    ),
    *(
        (
            "TestListPlugins",
            case,
            "the listed plugins of a custom profile are compared in TestNewFrameworkMultiPointExpansion "
            "above; the rest is the Go framework's struct layout",
        )
        for case in ("Add empty plugin", "Add multiple plugins")
    ),
    *(
        ("TestClose", case, "plugins hold no resources to close (io.Closer) in gpufleet")
        for case in ("close doesn't return error", "close returns error")
    ),
]


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        pytest.param(test, reason, id=f"{test}/{case}" if case else test)
        for test, case, reason in NOT_MODELLED
    ],
)
def test_not_modelled(test: str, reason: str) -> None:
    pytest.skip(f"{UPSTREAM} {test}: {reason}")
