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

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.cluster_state import BoolArray, ClusterState, IntArray

if TYPE_CHECKING:
    from gpufleet.scheduling.gangs import GangView

MAX_NODE_SCORE = 100

#: One node's (allocatable, requested, non-zero requested) rows as Python integers.
NodeRow = tuple[list[int], list[int], list[int]]


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code in (Code.SUCCESS, Code.SKIP)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status()


@dataclass
class PodContext:
    """One pod in one scheduling cycle: its request vectors over the cluster's resource columns."""

    pod: Pod
    state: ClusterState
    req: IntArray = field(init=False)
    nonzero: IntArray = field(init=False)
    #: per-shape scratch space where plugins keep what they derive once per pod shape
    memo: dict[object, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.req, self.nonzero = self.state.pod_vectors(self.pod)


class Plugin:
    name: ClassVar[str]
    #: extension points this plugin implements (multiPoint expands into these)
    points: ClassVar[frozenset[str]]


class StaticFilter(Plugin):
    """A filter that depends only on the node object; every rejection is unresolvable."""

    def reject(self, pod: Pod, node: Node) -> str | None:
        raise NotImplementedError


class DynamicFilter(Plugin):
    """A filter over allocation columns, evaluated for many nodes at once."""

    #: its rejections are UnschedulableAndUnresolvable: preemption is not tried for them
    unresolvable = False

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        raise NotImplementedError

    def unresolvable_on(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        """Of the nodes in ``idx`` (those it rejects among them), which it rejects unresolvably:
        preemption cannot help there."""
        return np.full(len(idx), self.unresolvable, dtype=bool)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        """For the nodes in ``idx``, each reason and which of them it applies to."""
        raise NotImplementedError

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        """``passes`` for node index ``node`` with resource row ``row`` (its own, or as preemption
        would leave it), in Python integers: re-checking the node a binding changed costs far less
        than a NumPy call. Must agree with ``passes`` (tested)."""
        raise NotImplementedError


class StaticScore(Plugin):
    """A score that depends only on the node object, normalised over the scored nodes."""

    def raw(self, pod: Pod, node: Node) -> int:
        raise NotImplementedError

    def applies(self, pod: Pod) -> bool:
        """False when PreScore would return Skip: the plugin adds nothing for this pod."""
        return True

    def normalize(self, raw: IntArray) -> IntArray:
        return raw


class DynamicScore(Plugin):
    #: its score of a node depends on more than the node's resource row (its GPUs' shares), so it is
    #: always evaluated over arrays (``score_node`` is never asked)
    array_only = False
    #: its scores depend on the whole cluster (the pods it runs), so every node is re-scored whenever
    #: anything changed
    volatile = False

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        raise NotImplementedError

    def score_node(self, ctx: PodContext, row: NodeRow) -> int:
        """``score`` for one node, in Python integers; must agree with ``score`` (tested)."""
        raise NotImplementedError


class PreFilter(Plugin):
    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        raise NotImplementedError


def default_normalize(raw: IntArray, reverse: bool) -> IntArray:
    """``helper.DefaultNormalizeScore``: scale to 0..100 by the maximum, optionally reversed."""
    top = int(raw.max()) if raw.size else 0
    if top == 0:
        return np.full_like(raw, MAX_NODE_SCORE if reverse else 0)
    scaled = MAX_NODE_SCORE * raw // top
    return MAX_NODE_SCORE - scaled if reverse else scaled
