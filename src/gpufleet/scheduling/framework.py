"""The scheduling framework's types: status codes, the per-pod cycle context, plugin kinds.

Mirrors kube-scheduler's framework (``pkg/scheduler/framework/interface.go``): plugins
implement extension points; Filter plugins run in order and the first rejection stops the
rest for that node; Score plugins give 0..100 per node, optionally normalised over the
scored nodes, and are summed with weights.

gpufleet evaluates filters and scores over arrays of nodes at once. A *static* plugin
depends only on node objects (labels, taints, schedulability) and is evaluated once per
pod shape per node set; a *dynamic* plugin depends on what is allocated and is evaluated
on NumPy columns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EventWithHint

if TYPE_CHECKING:
    from gpufleet.model.workloads import PodGroup
    from gpufleet.scheduling.gangs import GangView
    from gpufleet.scheduling.pod_aware import Placed, PodAwareFilter, PodCycle
    from gpufleet.scheduling.queue import QueuedPod

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


#: The codes of a status that lets the pod go on (a module constant: an enum member read through its class
#: costs more than the test, which every PreFilter's status of every cycle takes)
_PASSING = (Code.SUCCESS, Code.SKIP)


@dataclass(frozen=True)
class Status:
    """``framework.Status``: a plugin's answer (its code), the reasons it gives, and the plugin."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code in _PASSING

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status()


class PluginError(Exception):
    """A plugin's ``Error`` status (``framework.AsStatus(err)``): not a verdict on a node but a failure
    of the attempt. kube-scheduler stops filtering (``findNodesThatPassFilters`` cancels the other
    nodes), runs no PostFilter (no preemption) and fails the attempt with the error, not a FitError:
    ``handleSchedulingFailure`` records ``FailedScheduling`` with the error's text and the condition
    reason ``SchedulerError``, and the pod, rejected by no plugin, goes back through the backoff queue.
    A plugin raises it from any extension point with :func:`filter_error` (or its own words); the
    scheduler catches it once per attempt, so filtering pays nothing for it."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status

    @property
    def message(self) -> str:
        return self.status.message


def filter_error(plugin: str, error: str) -> PluginError:
    """``RunFilterPlugins``' wording of a Filter plugin's Error status: ``running "<plugin>" filter
    plugin: <error>``, the plugin named as the status's."""
    return PluginError(Status(Code.ERROR, (f'running "{plugin}" filter plugin: {error}',), plugin))


@dataclass
class PodContext:
    """One pod in one scheduling cycle: its request vectors over the cluster's resource columns."""

    pod: Pod
    state: ClusterState
    req: IntArray = field(init=False)
    nonzero: IntArray = field(init=False)
    #: per-shape scratch space where plugins keep what they derive once per pod shape
    memo: dict[object, object] = field(default_factory=dict)
    #: the cycle's time (a what-if that is given none: 0)
    now: float = 0.0

    def __post_init__(self) -> None:
        self.req, self.nonzero = self.state.pod_vectors(self.pod)


class ArgsError(ValueError):
    """``pluginConfig`` args a plugin cannot be built from (kube-scheduler refuses to start)."""


class Plugin:
    """A scheduler plugin. Its extension points are the base classes below it extends (``points``),
    as a Go plugin's are the framework interfaces it implements; it is built from its
    ``pluginConfig`` args by ``from_args`` and found by name in ``scheduling.registry``."""

    name: ClassVar[str]
    #: who defines it: "kube-scheduler" (in-tree), "scheduler-plugins", or "gpufleet"
    origin: ClassVar[str] = "gpufleet"
    #: the extension points a base class stands for (set on the base classes only)
    extension_points: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def points(cls) -> frozenset[str]:
        """The extension points this plugin implements: multiPoint expands into these."""
        return frozenset().union(*(vars(base).get("extension_points", frozenset()) for base in cls.__mro__))

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Plugin:
        """The plugin as its ``pluginConfig`` args configure it (none by default)."""
        return cls()

    def events_to_register(self) -> Sequence[EventWithHint] | None:
        """``EnqueueExtensions.EventsToRegister``: the cluster events that may make a pod this plugin
        rejected schedulable, each with its queueing hint (``queueing_hints``); None where the plugin
        does not say: then every event moves such a pod."""
        return None


class QueueSort(Plugin):
    extension_points = frozenset({"queueSort"})

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        raise NotImplementedError


class Permit(Plugin):
    extension_points = frozenset({"permit"})

    def permit(self, ctx: PodContext, gangs: GangView) -> tuple[Status, PodGroup | None]:
        """SUCCESS (with the gang it completes, whose waiting pods go on), WAIT for the gang, or a
        rejection (Unschedulable, with its message: the pod is not placed)."""
        raise NotImplementedError

    def wait_time(self, group: PodGroup) -> float:
        """How long a pod of ``group`` may wait at Permit."""
        raise NotImplementedError

    def unreserve(self, group: PodGroup, now: float) -> None:
        """A pod of ``group`` waiting at Permit was rejected at ``now`` (``Unreserve``)."""


class Wording:
    """A scheduler whose messages are not kube-scheduler's (Volcano's): a plugin that extends this gives
    its profile the words for an unschedulable pod."""

    def fit_error(
        self, num_nodes: int, histogram: Counter[str], pre_filter_msg: str, post_filter_msg: str
    ) -> str:
        """The message of a pod no node takes (kube-scheduler's is ``messages.fit_error``)."""
        raise NotImplementedError

    def gang_rejected(self, message: str) -> str:
        """What the waiting members of a gang let go say, given the failing member's message."""
        raise NotImplementedError


class Bind(Plugin):
    extension_points = frozenset({"bind"})


def placement_facts(pod: Pod) -> tuple[object, ...]:
    """All that a node-only plugin may read of a pod: its placement constraints, the names of what it
    requests, its GPU share and the GPU memory it needs (not the amounts of its requests)."""
    return (tuple(sorted(pod.requests)), pod.behavior.gpu_memory_bytes, *pod.shape()[1:8])


class StaticFilter(Plugin):
    """A filter that depends only on the node object; every rejection is unresolvable."""

    extension_points = frozenset({"filter"})

    def reject(self, pod: Pod, node: Node) -> str | None:
        raise NotImplementedError

    def reads(self, pod: Pod) -> tuple[object, ...]:
        """What of the pod its verdicts read: pods equal in it are judged alike on every node, so they
        share one static filtering (``placement_facts`` unless a filter says it reads less)."""
        return placement_facts(pod)

    def reject_each(self, pod: Pod, nodes: list[Node]) -> list[str | None]:
        """``reject`` of each node (a filter whose verdict reads less than the whole node may share it
        between nodes alike in what it reads: ``reject_alike``)."""
        return [self.reject(pod, node) for node in nodes]

    def reject_alike(
        self,
        pod: Pod,
        nodes: list[Node],
        alike: Callable[[Node], Hashable],
        judged: dict[Hashable, str | None],
    ) -> list[str | None]:
        """``reject`` of each node, judged once per value of ``alike`` (all that the verdict reads of a
        node), ``judged`` holding verdicts known already."""
        verdicts: list[str | None] = []
        for node in nodes:
            key = alike(node)
            if key in judged:
                verdicts.append(judged[key])
            else:
                verdicts.append(judged.setdefault(key, self.reject(pod, node)))
        return verdicts


class DynamicFilter(Plugin):
    """A filter over allocation columns, evaluated for many nodes at once."""

    extension_points = frozenset({"filter"})

    #: its rejections are UnschedulableAndUnresolvable: preemption is not tried for them
    unresolvable = False
    #: a node it rejects stays rejected while pods only join the node (it rejects for lack of room)
    monotone = False

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        raise NotImplementedError

    def unresolvable_on(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        """Of the nodes in ``idx`` (those it rejects among them), which it rejects unresolvably:
        preemption cannot help there."""
        return np.full(len(idx), self.unresolvable, dtype=bool)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        """For the nodes in ``idx``, each reason and which of them it applies to."""
        raise NotImplementedError

    def diagnose(
        self, ctx: PodContext, idx: IntArray
    ) -> tuple[BoolArray, list[tuple[str, BoolArray]], BoolArray]:
        """``passes``, ``reason_masks`` and ``unresolvable_on`` of the nodes ``idx`` at once: a failed cycle's
        diagnosis asks all three of the same nodes, and a filter may read them once for the three."""
        return self.passes(ctx, idx), self.reason_masks(ctx, idx), self.unresolvable_on(ctx, idx)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        """``passes`` for node index ``node`` with resource row ``row`` (its own, or as preemption
        would leave it), in Python integers: re-checking the node a binding changed costs far less
        than a NumPy call. Must agree with ``passes`` (tested)."""
        raise NotImplementedError

    def row_only(self, pod: Pod) -> bool:
        """Whether ``passes_node`` reads nothing of the node but ``row`` for this pod: then nodes with
        equal rows get one answer (the shape cache asks once per row)."""
        return False

    def skips(self, pod: Pod) -> bool:
        """True where its PreFilter returns Skip for this pod (``framework.Skip``: the Filter is then not
        run): it passes every node, so the shape cache leaves it out."""
        return False


class StaticScore(Plugin):
    """A score that depends only on the node object, normalised over the scored nodes."""

    extension_points = frozenset({"preScore", "score"})

    def raw(self, pod: Pod, node: Node) -> int:
        raise NotImplementedError

    def raw_column(self, pod: Pod, state: ClusterState, idx: list[int]) -> list[int]:
        """``raw`` for the nodes ``idx``; a score that also weighs the other nodes (ImageLocality's
        spread of an image) overrides it."""
        return [self.raw(pod, state.nodes[i]) for i in idx]

    def applies(self, pod: Pod) -> bool:
        """False when PreScore would return Skip: the plugin adds nothing for this pod."""
        return True

    def normalize(self, raw: IntArray) -> IntArray:
        return raw


class DynamicScore(Plugin):
    extension_points = frozenset({"preScore", "score"})

    #: its score of a node depends on more than the node's resource row (its GPUs' shares), so it is
    #: always evaluated over arrays (``score_node`` is never asked)
    array_only = False
    #: its scores depend on the whole cluster (the pods it runs), so every node is re-scored whenever
    #: anything changed
    volatile = False
    #: its scores are not kube-scheduler's 0..100 and only their order counts (Random's raw draws, as the
    #: FGD authors' simulator draws them): ``check_score_range`` is not applied to them
    unbounded = False

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        raise NotImplementedError

    def score_node(self, ctx: PodContext, row: NodeRow) -> int:
        """``score`` for one node, in Python integers, from its resource row alone (nodes with equal rows
        score the same); must agree with ``score`` (tested)."""
        raise NotImplementedError


class PreEnqueue(Plugin):
    """Decides whether a pod may enter the scheduling queue at all (``PreEnqueuePlugin``): a pod it
    turns away is kept aside, never tried, until it is updated (its gates removed)."""

    extension_points = frozenset({"preEnqueue"})

    def pre_enqueue(self, pod: Pod) -> Status:
        raise NotImplementedError


class PreFilter(Plugin):
    extension_points = frozenset({"preFilter"})

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        raise NotImplementedError


class NodesPreFilter(Plugin):
    """A PreFilter whose result narrows the nodes considered (``PreFilterResult.NodeNames``); the
    others are rejected with ``node(s) didn't satisfy plugin(s) [<name>]``. Where the results of a
    profile's node PreFilters leave no node at all, the pod is rejected at PreFilter
    (``shape_cache.node_names_conflict``)."""

    extension_points = frozenset({"preFilter"})

    def nodes(self, pod: Pod) -> set[str] | None:
        """The only nodes the pod may go to, or None for all."""
        raise NotImplementedError

    def reads(self, pod: Pod) -> tuple[object, ...]:
        """What of the pod ``nodes`` reads (as ``StaticFilter.reads``)."""
        return placement_facts(pod)


@dataclass(frozen=True)
class PostFilterRequest:
    """What a PostFilter plugin is given when no node fits the pod."""

    ctx: PodContext
    resolvable: IntArray  # the nodes whose rejection was Unschedulable, not unresolvable
    num_nodes: int
    filters: list[DynamicFilter]
    static_filters: list[StaticFilter]
    gangs: GangView
    #: the node the pod is nominated to (``status.nominatedNodeName``), if any
    nominated: int | None = None
    #: the pod's pod-aware filters (InterPodAffinity, PodTopologySpread), None when they all Skip
    pods: PodCycle | None = None
    #: the profile's pod-aware filters (a gang's dry run judges every member with them) ...
    pod_filters: Sequence[PodAwareFilter] = ()
    #: ... and the pods nominated to nodes that they hold there for the pod (``PodCycle.holding``)
    held: Sequence[Placed] = ()


@dataclass(frozen=True)
class PostFilterResult:
    """A PostFilter plugin's answer: its status (reasons join the FitError's message) and, on
    success, the node it nominates with the victims to evict there."""

    status: Status
    nominated: str | None = None
    victims: tuple[str, ...] = ()
    #: every candidate ranked as well as ``nominated`` (itself first), as (node, victims)
    ties: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the preemptor's gang: each other not-yet-placed member and the node planned for it
    gang_nominations: tuple[tuple[str, str], ...] = ()
    #: a gang whose waiting members must let go (Coscheduling)
    release_group: PodGroup | None = None
    #: ResourceClaims (keys) to deallocate, so a later attempt may allocate them elsewhere (DynamicResources)
    deallocate: tuple[str, ...] = ()
    #: no candidate: the pod's nomination is cleared (``NewPostFilterResultWithNominatedNode("")``)
    clears_nomination: bool = False


class PostFilter(Plugin):
    extension_points = frozenset({"postFilter"})

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        raise NotImplementedError


class ScoreRangeError(RuntimeError):
    """A Score plugin gave a node a score outside [MIN_NODE_SCORE, MAX_NODE_SCORE] after NormalizeScore.
    kube-scheduler's ``RunScorePlugins`` fails the cycle with an Error status then; gpufleet's plugins are
    its own code, so it is a bug, raised."""


def check_score_range(plugin: str, scores: IntArray | list[int]) -> None:
    """``RunScorePlugins``' check of each plugin's normalised scores (before its weight applies): every one
    in ``[0, 100]``, else ``plugin "X" returns an invalid score N, it should in the range of [0, 100] after
    normalizing``."""
    if len(scores) == 0:
        return
    low, high = (min(scores), max(scores)) if isinstance(scores, list) else (scores.min(), scores.max())
    if low < MIN_NODE_SCORE or high > MAX_NODE_SCORE:
        bad = low if low < MIN_NODE_SCORE else high
        raise ScoreRangeError(
            f"plugin {plugin!r} returns an invalid score {bad}, it should in the range of "
            f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
        )


def default_normalize(raw: IntArray, reverse: bool) -> IntArray:
    """``helper.DefaultNormalizeScore``: scale to 0..100 by the maximum, optionally reversed."""
    top = int(raw.max()) if raw.size else 0
    if top == 0:
        return np.full_like(raw, MAX_NODE_SCORE if reverse else 0)
    scaled = MAX_NODE_SCORE * raw // top
    return MAX_NODE_SCORE - scaled if reverse else scaled
