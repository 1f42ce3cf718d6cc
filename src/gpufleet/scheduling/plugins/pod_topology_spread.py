"""PodTopologySpread (``pkg/scheduler/framework/plugins/podtopologyspread``), Kubernetes 1.34.10.

Constraints: the pod's own ``topologySpreadConstraints`` (``matchLabelKeys`` merged into the
selector; ``minDomains`` 1, ``nodeAffinityPolicy`` Honor and ``nodeTaintsPolicy`` Ignore when
unset), else the plugin's default constraints with the pod's default selector
(``buildDefaultConstraints``): ``defaultingType: System`` (the default) gives hostname maxSkew 3
and zone maxSkew 5, ScheduleAnyway; ``List`` gives ``defaultConstraints``. Upstream's default
selector merges the selectors of the Services, ReplicationControllers, ReplicaSets and StatefulSets
selecting the pod (``helper.DefaultSelector``). gpufleet has no Services and keeps no controller's
selector; a controller's selector matches its pods' labels, so a pod controlled by a Deployment
(gpufleet's controller stands for its ReplicaSet), ReplicaSet, StatefulSet or ReplicationController
is selected by its own labels, less those a StatefulSet gives each pod (``pod-name``, ``pod-index``,
``controller-revision-hash``); any other pod gets no default constraints.

Pods counted (``countPodsMatchSelector``): of the incoming pod's namespace, not terminating,
matched by a non-empty selector, on nodes that carry every constraint's topology key and pass the
node inclusion policies (required node affinity and nodeSelector; untolerated NoSchedule /
NoExecute taints).

Filter (DoNotSchedule): a node without a constraint's key is
``node(s) didn't match pod topology spread constraints (missing required label)``
(UnschedulableAndUnresolvable); else ``matchNum + selfMatch - minMatchNum > maxSkew`` is
``node(s) didn't match pod topology spread constraints`` (Unschedulable), ``minMatchNum`` being 0
while fewer than ``minDomains`` domains exist.

Score (ScheduleAnyway, ``scoring.go``): over the filtered nodes, per constraint
``count * log(domains + 2) + maxSkew - 1`` (hostname: the pods on the node itself, the domains
being the filtered nodes), rounded; nodes lacking a key are ignored (score 0) unless the
constraints are the system defaults; NormalizeScore gives ``100 * (max + min - s) / max``.
Both are computed over node columns for all the nodes at once (``pod_aware``), the pods counted per
node kept by the pod index (``PodIndex.live_counts``).

Queueing hints (``EventsToRegister``, ``plugin.go``), over the DoNotSchedule constraints: a pod of the
namespace on a node added or deleted that a selector matches, or relabelled into or out of one, or the
pod itself given a toleration where a constraint honours taints (``isSchedulableAfterPodChange``); a
node added or deleted with every topology key, or one updated that gained or lost them or changed a
key's value or its taints (``isSchedulableAfterNodeChange``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, cast

import numpy as np

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Taint, tolerated
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    Selector,
    TopologySpreadConstraint,
    selects,
)
from gpufleet.scheduling.events import (
    ActionType,
    ClusterEvent,
    EventPod,
    EventWithHint,
    HintError,
    QueueingHint,
    Resource,
    as_objects,
)
from gpufleet.scheduling.framework import MAX_NODE_SCORE, ArgsError, Code, PodContext
from gpufleet.scheduling.pod_aware import (
    CountingState,
    PodAwareFilter,
    PodAwareScore,
    Rejection,
    domain_column,
)
from gpufleet.scheduling.registry import register

CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
NODE_LABEL_NOT_MATCH = CONSTRAINTS_NOT_MATCH + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SYSTEM, LIST = "System", "List"
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(3, HOSTNAME, SCHEDULE_ANYWAY, None),
    TopologySpreadConstraint(5, ZONE, SCHEDULE_ANYWAY, None),
)
#: controllers whose selector ``DefaultSelector`` reads (gpufleet's Deployment stands for its ReplicaSet)
SELECTING_OWNERS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
#: labels a StatefulSet gives each pod, never in its selector
PER_POD_LABELS = (
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "controller-revision-hash",
)


def default_selector(pod: Pod) -> Selector:
    """The selector of the controller owning the pod, as its labels (empty when there is none)."""
    if pod.owner is None or pod.owner.kind not in SELECTING_OWNERS:
        return ()
    return tuple(Requirement(k, "In", (v,)) for k, v in sorted(pod.labels.items()) if k not in PER_POD_LABELS)


@lru_cache(maxsize=1024)
def _with_selector(
    constraints: tuple[TopologySpreadConstraint, ...], selector: Selector
) -> tuple[TopologySpreadConstraint, ...]:
    return tuple(replace(c, selector=selector) for c in constraints)


def has_keys(node: Node, constraints: Sequence[TopologySpreadConstraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    return all(c.topology_key in node.labels for c in constraints)


def included(c: TopologySpreadConstraint, pod: Pod, node: Node) -> bool:
    """``matchNodeInclusionPolicies``."""
    if c.node_affinity_policy == HONOR and not pod.matches_node_selector(node):
        return False
    if c.node_taints_policy == HONOR:
        blocking = (t for t in node.taints if t.effect in (NO_SCHEDULE, NO_EXECUTE))
        if any(not tolerated(t, pod.tolerations) for t in blocking):
            return False
    return True


def included_column(c: TopologySpreadConstraint, pod: Pod, state: ClusterState) -> BoolArray | None:
    """``included`` for every node row, None when every node is included; kept per node set."""
    selective = bool(pod.node_selector) or pod.required_terms is not None
    honor_affinity = c.node_affinity_policy == HONOR and selective
    honor_taints = c.node_taints_policy == HONOR
    if not honor_affinity and not honor_taints:
        return None
    key = (
        c.node_affinity_policy,
        c.node_taints_policy,
        tuple(sorted(pod.node_selector.items())),
        pod.required_terms,
        pod.tolerations if honor_taints else (),
    )
    memo = cast(tuple[int, dict[object, BoolArray]], state.memo.get("spread-included", (-1, {})))
    if memo[0] != state.static_version:
        memo = (state.static_version, {})
        state.memo["spread-included"] = memo
    column = memo[1].get(key)
    if column is None:
        column = memo[1][key] = np.array([included(c, pod, n) for n in state.nodes], dtype=bool)
    return column


@dataclass
class SpreadState(CountingState):
    """``preFilterState``: per DoNotSchedule constraint, the matching pods per topology value."""

    state: ClusterState
    pod: Pod
    constraints: tuple[TopologySpreadConstraint, ...]
    matched: list[Counter[str]]  # TpValueToMatchNum
    #: whether a count may be below zero (``RemovePod`` of a pod the PreFilter left out, a terminating
    #: one): till then no count is, and ``judge`` needs the smallest only where a count nears maxSkew
    negative: bool = False

    def update_with_pod(self, placed: Pod, node: Node, delta: int) -> None:
        """``updateWithPod`` (AddPod / RemovePod)."""
        if placed.namespace != self.pod.namespace or not has_keys(node, self.constraints):
            return
        for c, matched in zip(self.constraints, self.matched, strict=True):
            if selects(c.selector, placed.labels) and included(c, self.pod, node):
                value = node.labels[c.topology_key]
                matched[value] += delta
                if delta < 0 and matched[value] < 0:
                    self.negative = True

    def update_with_node(self, node: Node) -> None:
        """A node added (cluster-autoscaler's template copy) is a domain of each constraint whose key
        it carries and whose inclusion policies it passes, with no pods until some are counted (the
        PreFilter counts every such node's domain)."""
        if not has_keys(node, self.constraints):
            return
        for c, matched in zip(self.constraints, self.matched, strict=True):
            if included(c, self.pod, node):
                matched.setdefault(node.labels[c.topology_key], 0)

    def clone(self) -> SpreadState:
        return replace(self, matched=[Counter(m) for m in self.matched])

    def drained(self, rows: Sequence[int], taint: Taint) -> SpreadState:
        """A drained node's ghost carries ``taint`` (cluster-autoscaler's ``replaceWithTaintedGhostNode``):
        a constraint with ``nodeTaintsPolicy: Honor`` whose pod does not tolerate it no longer counts the
        ghost (``matchNodeInclusionPolicies``), so a domain no other counted node keeps is gone; under
        ``Ignore`` the ghost's domain stays, with no pods."""
        if all(c.node_taints_policy != HONOR for c in self.constraints) or tolerated(
            taint, self.pod.tolerations
        ):
            return self
        copy = self.clone()
        copy.beyond = self.beyond
        state = self.state
        keys = state.active.copy()
        for c in self.constraints:
            keys &= domain_column(state, c.topology_key).has
        keys[list(rows)] = False
        for c, matched in zip(self.constraints, copy.matched, strict=True):
            if c.node_taints_policy != HONOR:
                continue
            column = domain_column(state, c.topology_key)
            inc = included_column(c, self.pod, state)
            kept = keys if inc is None else keys & inc
            for row in rows:
                code = int(column.codes[row])
                if column.has[row] and not (kept & (column.codes == code)).any():
                    matched.pop(column.values[code], None)
        return copy

    def passes(self, nodes: IntArray) -> BoolArray:
        """``judge`` over node columns: each node's domain count looked up by its value's code."""
        ok = np.ones(len(nodes), dtype=bool)
        for c, matched in zip(self.constraints, self.matched, strict=True):
            column = domain_column(self.state, c.topology_key)
            ok &= column.has[nodes]
            if not matched and c.min_domains <= 0:  # ``least`` is infinite: no count exceeds it
                continue
            least = 0 if len(matched) < c.min_domains else min(matched.values())
            self_match = 1 if selects(c.selector, self.pod.labels) else 0
            by_code = np.zeros(len(column.values), dtype=np.int64)
            for value, count in matched.items():
                code = column.code_of.get(value)
                if code is not None:
                    by_code[code] = count
            ok &= by_code[column.codes[nodes]] + self_match - least <= c.max_skew
        return ok

    def judge(self, node: int) -> Rejection | None:
        """(Where no count is below zero, the smallest is looked for only when the node's own count
        is above maxSkew: preemption judges node after node, and a hostname constraint has as many
        counts as nodes.)"""
        labels = self.node_at(node).labels
        for c, matched in zip(self.constraints, self.matched, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                return NODE_LABEL_NOT_MATCH, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            count = matched.get(value, 0) + (1 if selects(c.selector, self.pod.labels) else 0)
            if count <= c.max_skew and not self.negative:
                continue
            least = min(matched.values()) if matched else math.inf
            if len(matched) < c.min_domains:
                least = 0
            if count - least > c.max_skew:
                return CONSTRAINTS_NOT_MATCH, Code.UNSCHEDULABLE
        return None


@register
class PodTopologySpread(PodAwareFilter, PodAwareScore):
    name = "PodTopologySpread"
    origin = "kube-scheduler"

    def __init__(
        self,
        default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS,
        system_defaulted: bool = True,
    ) -> None:
        self.default_constraints = default_constraints
        self.system_defaulted = system_defaulted
        #: the default constraints per ``whenUnsatisfiable``, sorted once
        self._defaults = {
            action: tuple(c for c in default_constraints if c.when_unsatisfiable == action)
            for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
        }

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> PodTopologySpread:
        """``PodTopologySpreadArgs`` as ``ValidatePodTopologySpreadArgs`` checks them."""
        errors: list[str] = []
        for key in args:
            if key not in ("defaultConstraints", "defaultingType"):
                raise ArgsError(f'unknown field "{key}"')
        kind = args.get("defaultingType") or SYSTEM
        raw = args.get("defaultConstraints") or []
        if kind not in (SYSTEM, LIST):
            errors.append(
                f'defaultingType: Unsupported value: "{kind}": supported values: "{LIST}", "{SYSTEM}"'
            )
        elif kind == SYSTEM and raw:
            errors.append(f'defaultingType: Invalid value: "{kind}": when .defaultConstraints are not empty')
        constraints: list[TopologySpreadConstraint] = []
        for i, item in enumerate(raw if isinstance(raw, list) else []):
            path = f"defaultConstraints[{i}]"
            body = item if isinstance(item, dict) else {}
            skew = body.get("maxSkew", 0)
            if not isinstance(skew, int) or isinstance(skew, bool) or skew <= 0:
                errors.append(f"{path}.maxSkew: Invalid value: {skew}: not in valid range (0, inf)")
            key = str(body.get("topologyKey") or "")
            if not key:
                errors.append(f"{path}.topologyKey: Required value: can not be empty")
            action = str(body.get("whenUnsatisfiable") or "")
            if not action:
                errors.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
            elif action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errors.append(
                    f'{path}.whenUnsatisfiable: Unsupported value: "{action}": '
                    f'supported values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'
                )
            if body.get("labelSelector") is not None:
                errors.append(
                    f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                    "as they deduced for each pod"
                )
            if any(c.topology_key == key and c.when_unsatisfiable == action for c in constraints):
                errors.append(f'defaultConstraints[{i}]: Duplicate value: "{{{key}, {action}}}"')
            constraints.append(
                TopologySpreadConstraint(skew if isinstance(skew, int) else 0, key, action, None)
            )
        if errors:
            raise ArgsError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        if kind == SYSTEM:
            return cls()
        return cls(tuple(constraints), system_defaulted=False)

    def constraints(self, pod: Pod, action: str) -> tuple[TopologySpreadConstraint, ...]:
        """``filterTopologySpreadConstraints`` of the pod's own, else ``buildDefaultConstraints``."""
        if pod.spread_constraints:
            return tuple(
                c.resolved(pod.labels) for c in pod.spread_constraints if c.when_unsatisfiable == action
            )
        defaults = self._defaults.get(action, ())
        selector = default_selector(pod) if defaults else ()
        return _with_selector(defaults, selector) if selector else ()

    # -- PreFilter and Filter ----------------------------------------------------------------
    def pre_filter_pods(self, ctx: PodContext) -> SpreadState | None:
        state, pod = ctx.state, ctx.pod
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None
        columns = [domain_column(state, c.topology_key) for c in constraints]
        keys = state.active.copy()
        for column in columns:
            keys &= column.has
        matched: list[Counter[str]] = []
        for c, column in zip(constraints, columns, strict=True):
            rows = keys if (inc := included_column(c, pod, state)) is None else keys & inc
            idx = np.flatnonzero(rows)
            codes = column.codes[idx]
            counts = state.placed.live_counts(c.selector, pod.namespace, state.size)[idx]
            sums = np.bincount(codes, weights=counts, minlength=len(column.values))
            present = np.bincount(codes, minlength=len(column.values))  # a domain with 0 pods still counts
            matched.append(
                Counter({column.values[k]: int(sums[k]) for k in np.flatnonzero(present).tolist()})
            )
        return SpreadState(state, pod, constraints, matched)

    def events_to_register(self) -> Sequence[EventWithHint]:
        pod_changes = (
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE
        )
        node_changes = (
            ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        )
        return (
            EventWithHint(ClusterEvent(Resource.POD, pod_changes), self.after_pod_change),
            EventWithHint(ClusterEvent(Resource.NODE, node_changes), self.after_node_change),
        )

    def after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodChange``: a pod of the namespace on a node (``involvedInTopologySpreading``)
        added or deleted that a DoNotSchedule constraint selects, or relabelled into or out of one; the
        pod itself given a toleration where a constraint honours taints."""
        before, after = as_objects(EventPod, old, new)

        def involved(p: EventPod) -> bool:
            return p.pod.key == pod.key or (bool(p.node_name) and p.pod.namespace == pod.namespace)

        if (after is not None and not involved(after)) or (before is not None and not involved(before)):
            return QueueingHint.SKIP
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if before is not None and after is not None:
            if (
                after.pod.key == pod.key
                and after.pod.tolerations != before.pod.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            was, now = before.pod.labels, after.pod.labels
            moved = was != now and any(
                selects(c.selector, was) != selects(c.selector, now) for c in constraints
            )
            return QueueingHint.QUEUE if moved else QueueingHint.SKIP
        one = after or before
        if one is None:
            raise HintError("expected a Pod, got None")
        return (
            QueueingHint.QUEUE
            if any(selects(c.selector, one.pod.labels) for c in constraints)
            else QueueingHint.SKIP
        )

    def after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: a node added or deleted that carries every constraint's key; an
        updated one that gained or lost them, or carries them with a key's value or its taints changed."""
        before, after = as_objects(Node, old, new)
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        was = before is not None and has_keys(before, constraints)
        now = after is not None and has_keys(after, constraints)
        if before is not None and after is not None:
            if was != now:
                return QueueingHint.QUEUE
            changed = any(
                before.labels.get(c.topology_key) != after.labels.get(c.topology_key) for c in constraints
            )
            return (
                QueueingHint.QUEUE
                if now and (changed or before.taints != after.taints)
                else QueueingHint.SKIP
            )
        if before is None and after is None:
            raise HintError("expected a Node, got None")
        return QueueingHint.QUEUE if was or now else QueueingHint.SKIP

    # -- PreScore, Score, NormalizeScore --------------------------------------------------------
    def scores_pod(self, ctx: PodContext) -> bool:
        pod = ctx.pod
        if pod.spread_constraints:
            return any(c.when_unsatisfiable == SCHEDULE_ANYWAY for c in pod.spread_constraints)
        return bool(self._defaults[SCHEDULE_ANYWAY]) and bool(default_selector(pod))

    def pod_scores(self, ctx: PodContext, nodes: IntArray) -> IntArray | None:
        state, pod = ctx.state, ctx.pod
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints or not state.index:
            return None
        columns = [domain_column(state, c.topology_key) for c in constraints]
        keys: BoolArray | None = None  # the nodes not ignored: with every key, when all are required
        if pod.spread_constraints or not self.system_defaulted:
            keys = np.logical_and.reduce([column.has for column in columns])
        kept = nodes if keys is None else nodes[keys[nodes]]
        counts: dict[Selector, IntArray] = {}
        score = np.zeros(len(kept), dtype=np.float64)
        for c, column in zip(constraints, columns, strict=True):
            if c.selector not in counts:
                counts[c.selector] = state.placed.live_counts(c.selector, pod.namespace, state.size)
            matching = counts[c.selector]
            if c.topology_key == HOSTNAME:  # the pods on the node itself, the domains the scored nodes
                count, domains = matching[kept], len(kept)
            else:  # the pods in the node's domain, of the nodes included; the domains of the scored nodes
                scored = np.zeros(len(column.values), dtype=bool)
                scored[column.codes[kept]] = True
                rows = matching > 0
                for mask in (keys, included_column(c, pod, state)):
                    if mask is not None:
                        rows &= mask
                idx = np.flatnonzero(rows)
                per_domain = np.bincount(column.codes[idx], weights=matching[idx], minlength=len(scored))
                count, domains = per_domain.astype(np.int64)[column.codes[kept]], int(scored.sum())
            weight = math.log(domains + 2)
            score += np.where(column.has[kept], count * weight + (c.max_skew - 1), 0.0)
        raw = np.floor(score + 0.5).astype(np.int64)  # math.Round of a non-negative score
        if keys is None:
            return normalize(raw)
        out = np.zeros(len(nodes), dtype=np.int64)  # ignored nodes score 0
        out[keys[nodes]] = normalize(raw)
        return out


def normalize(raw: IntArray) -> IntArray:
    """``NormalizeScore`` of the nodes not ignored: ``100 * (max + min - s) // max`` (100 if max is 0)."""
    if not len(raw):
        return raw
    low, high = int(raw.min()), max(0, int(raw.max()))
    if high == 0:
        return np.full(len(raw), MAX_NODE_SCORE, dtype=np.int64)
    return MAX_NODE_SCORE * (high + low - raw) // high
