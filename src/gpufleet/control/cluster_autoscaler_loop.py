"""cluster-autoscaler's control loop: scan, scale up, scale down, warm nodes.

Every ``scanInterval`` (10 s) while there is something to look at: pods the scheduler
marked unschedulable are estimated against each pool's template (``autoscaling.scale_up``,
upcoming nodes first; the template carries the ResourceSlices of a pool that publishes them) and
an expander picks a pool, within the cluster-wide resource limits (``autoscaling.resource_limits``), its
new nodes split with its similar pools under ``--balance-similar-node-groups``
(``autoscaling.node_group_balancing``); when none grows, each pod left gets a ``no-scale-up`` event with
cluster-autoscaler's ``NotTriggerScaleUp`` message (again only when that message changes);
nodes of pools above their ``min`` (``PreFilteringScaleDownNodeProcessor``) below the utilisation threshold
whose pods fit elsewhere become unneeded (a node whose pods could not move is not looked at again for
``unremovableNodeRecheckTimeout``, 5 minutes, whatever changes; the loop scans again then; a scan looks for
no more than ``unneededNodesLimit``) and are removed
once unneeded for more than ``scaleDownUnneededTime`` (a node that is not Ready for more than
``scaleDownUnreadyTime``, none with ``scaleDownUnreadyEnabled: false``), not within ``scaleDownDelayAfterAdd``
of a scale-up, at most ``maxScaleDownParallelism`` deletions at once and ``maxDrainParallelism`` drains, those
in progress counted (drained: pods evicted with their grace period,
then the node deleted); pools with ``warm`` keep that many empty GPU-ready nodes beyond what pods need. Each
scan leaves cluster-autoscaler's scale-down gauges as upstream's would be (``ScaleDownGauges``). A launch the
cloud refuses backs the pool off (5 minutes, doubling up to 30: ``utils/backoff/exponential_backoff.go``), and
so does a node that has not registered its GPUs within ``maxNodeProvisionTime`` (it is deleted at the first
scan after that time). With more nodes ``Unready`` (not Ready, registered 15 minutes or more before) than
``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of the cluster's nodes, a scan does
nothing (``IsClusterHealthy``); a group with that many of its nodes missing among the Ready is skipped by
scale-up, ``not ready for scale-up`` (``IsNodeGroupHealthy``; ``autoscaling.cluster_state``). The scan that
finds the cluster unhealthy logs a ``cluster-unhealthy`` event, the first that finds it healthy again a
``cluster-healthy`` one, each with the status ConfigMap's ``Health`` condition (its node counts); while the
cluster is unhealthy, or a group not ready for scale-up, ``pod_hints`` says so for a pending pod. A
``zeroOrMaxNodeScaling`` pool grows by all its nodes at once; a launch the cloud refuses deletes them all
(``overrideNodesToDeleteForZeroOrMax``), and the nodes it scales down are deleted as one batch, once the last
of them is drained (``GroupDeletionScheduler``). After each scan's scale-down the unneeded nodes get the soft
taint ``DeletionCandidateOfClusterAutoscaler=<unix time>:PreferNoSchedule`` and the nodes needed again
lose it, at most ``maxBulkSoftTaintCount`` (10) a scan (``autoscaling.soft_taints``; ``soft-taint`` and
``soft-taint-removed`` events): the scheduler's TaintToleration scores those nodes lower.

ProvisioningRequests (``autoscaling.provisioning_request``): each scan first expires their bookings and fails
or deletes the old ones (``provReqProcessor.refresh``), then takes the next one available (``Provisioned``
false: after its backoff, 1 minute doubling up to 10) and provisions it: check-capacity looks for room,
best-effort-atomic grows one group for all its pods or none; each condition set is a ``provisioning-request``
event. A pod consuming a request (``autoscaling.x-k8s.io/consume-provisioning-request``) triggers no scale-up
of its own (``ProvisioningRequestPodsFilter``: a ``no-scale-up`` event says so), and the pods of the requests
whose capacity is booked are put in the scale-up snapshot before the pending pods (``bookCapacity``); a node
they go to is no scale-down candidate while booked (upstream's booked pods are in the scale-down snapshot too:
here the node is simply kept, whatever its utilisation). Not modelled: check-capacity batch processing, and
the wrapper orchestrator's alternation between a loop for ProvisioningRequests and one for other pods (here
both run in each scan).

The decisions are ``autoscaling.cluster_autoscaler`` (request in, reply out); this loop keeps the
timer and its own bookkeeping, reads the cluster and acts through a ``control.port.NodeGroupPort``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownRequest,
    ScaleUp,
    ScaleUpRequest,
    WarmGroup,
    has_movable_pods,
    keep_warm,
    recently_unremovable,
    scale_down,
    scale_up,
)
from gpufleet.autoscaling.cluster_state import (
    MAX_NODE_STARTUP_S,
    NOT_READY_FOR_AUTOSCALING,
    HealthCondition,
    Readiness,
    acceptable_range,
    cluster_healthy,
    halted_hint,
    health_condition,
    node_group_healthy,
    readiness,
)
from gpufleet.autoscaling.expanders import pool_priority
from gpufleet.autoscaling.node_group_balancing import Balancing
from gpufleet.autoscaling.provisioning_request import (
    BOOKING_EXPIRED,
    FAILED,
    INITIAL_RETRY_S,
    PROVISIONED,
    RESERVATION_TIME_S,
    ProvisioningRequest,
    ProvisionRequest,
    booked_nodes,
    booked_pods,
    filter_consumers,
    next_request,
    provision,
    refresh,
    should_book,
)
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.autoscaling.resource_limits import cluster_maxima, cluster_totals, resources_left
from gpufleet.autoscaling.scale_down import (
    SIMULATION_REASONS,
    Unremovable,
    UnremovableReason,
    UtilizationRule,
)
from gpufleet.autoscaling.scale_up import NOT_READY, PoolOption
from gpufleet.autoscaling.soft_taints import (
    DELETION_CANDIDATE_TAINT_KEY,
    deletion_candidate_taint,
    has_deletion_candidate_taint,
    update_soft_deletion_taints,
    with_deletion_candidate,
    without_deletion_candidate,
)
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.port import LaunchStatus, NodeGroup, NodeGroupPort
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.model.simulation import AutoscalerSettings
from gpufleet.scheduling.profile import build_profile
from gpufleet.workloads.daemonset import daemon_should_run


@dataclass
class ScaleEvent:
    t_s: float
    #: scale-up | scale-up-failed | scale-down | provision-timeout | spot-reclaim | no-scale-up |
    #: cluster-unhealthy | cluster-healthy | soft-taint | soft-taint-removed | provisioning-request (a
    #: ProvisioningRequest's condition set: its key in ``pods``, ``Type=Status Reason: Message`` in
    #: ``reason``; or ``deleted``)
    kind: str
    pool: str | None
    nodes: tuple[str, ...]
    pods: tuple[str, ...] = ()
    reason: str = ""
    #: a cluster-unhealthy or cluster-healthy event's node counts (``HealthCondition.node_counts``)
    node_counts: Mapping[str, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
            "t_s": self.t_s,
            "kind": self.kind,
            "pool": self.pool,
            "nodes": list(self.nodes),
            "pods": list(self.pods),
            "reason": self.reason,
        }
        if self.node_counts is not None:
            out["node_counts"] = dict(self.node_counts)
        return out


@dataclass
class ScaleDownGauges:
    """cluster-autoscaler's scale-down gauges as its scans leave them: the nodes unneeded
    (``metrics.UpdateUnneededNodesCount``, every scan) and the nodes unremovable by reason
    (``UpdateUnremovableNodesCount``, every scan out of cooldown, from ``countsByReason`` of the
    planner's unremovable nodes). Upstream sets only the reasons a scan counted and resets none: a reason
    no scan finds any more keeps its last count."""

    unneeded: int = 0
    unremovable: dict[UnremovableReason, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ListedCandidates:
    """Scale-down's candidates of a scan and what they were made of (``_candidates``)."""

    static_version: int
    going: frozenset[str]
    groups: list[tuple[NodeGroup, str, int]]  # each autoscaled group, its name and min
    sets: list[tuple[frozenset[str], frozenset[str], frozenset[str]]]  # its nodes, launches, warm nodes
    readiness: tuple[frozenset[str], frozenset[str]]  # the unready nodes, and those still starting
    candidates: list[Candidate]


class ClusterAutoscalerLoop:
    def __init__(
        self,
        port: NodeGroupPort,
        clock: Clock,
        settings: AutoscalerSettings,
        expander_priorities: Sequence[tuple[int, str]],
        seed: int,
        events: list[ScaleEvent] | None = None,
        start_time_s: float = 0.0,
        provisioning_requests: Sequence[ProvisioningRequest] = (),
    ):
        """``expander_priorities``: the priority expander's ConfigMap (priority, pool-name regex);
        ``events``: the log its events go to (shared with the cloud's, in the simulator); ``start_time_s``:
        the Unix time of the clock's 0 (what the soft taints' values read); ``provisioning_requests``: the
        ProvisioningRequests it handles (``--enable-provisioning-requests``)."""
        self.port = port
        self.clock = clock
        self.settings = settings
        self.utilization = UtilizationRule(
            settings.scale_down_utilization_threshold,
            settings.scale_down_gpu_utilization_threshold,
            settings.ignore_daemonsets_utilization,
        )
        self.expander_priorities = expander_priorities
        groups = port.node_groups.values()
        self.enabled = any(g.pool.autoscaled or g.pool.warm for g in groups) or bool(provisioning_requests)
        self.keeps_warm = any(g.pool.warm for g in groups)
        self.profile = build_profile(ProfileConfig())
        self.rng = np.random.default_rng([seed, 2])
        self.armed_at: float | None = None
        self.unneeded_since: dict[str, float] = {}
        self.deleting: set[str] = set()  # nodes it is draining to delete
        self.draining: set[str] = set()  # those of them it drains (the others were empty)
        #: the deletions the last scan started (drained or not), and when: a scan at the same instant (a
        #: change arms one) counts them in progress though their nodes are gone (upstream's loop scans once
        #: a tick, and an empty node's deletion takes --node-delete-delay-after-taint, 5 s, after its taint)
        self._started: tuple[float, dict[str, bool]] = (-math.inf, {})
        self.last_scale_up_s = -math.inf
        self.events: list[ScaleEvent] = [] if events is None else events
        self.not_triggered: dict[str, str] = {}  # pod -> its last NotTriggerScaleUp message
        #: while the last scan found the cluster unhealthy: since when, and its Health condition then
        self.unhealthy: tuple[float, HealthCondition] | None = None
        #: the groups the last scale-up found not ready for scale-up, each with its Health condition's text
        self.unready_groups: dict[str, str] = {}
        self._assessed: tuple[object, ...] | None = None
        self._unanswered: tuple[object, ...] | None = None  # what the last scan asked that grew nothing
        #: the nodes of no group (``_resources_left``) at a ``static_version``, and what they have in all
        self._groupless: tuple[int, list[Node], Counter[str]] = (-1, [], Counter())
        self._memo = RemovalMemo()  # scale-down verdicts that still stand (autoscaling.removal_memo)
        self._listed: ListedCandidates | None = None  # the last scan's scale-down candidates
        #: the candidates the last scan found not unneeded, and why (they stand until the next assessing scan)
        self._not_unneeded: tuple[tuple[str, Unremovable], ...] = ()
        #: the nodes the removal simulation found unremovable, each not checked again until then
        self._unremovable_until: dict[str, float] = {}
        self.gauges = ScaleDownGauges()
        self._cut = False  # the last scan stopped at unneededNodesLimit
        self.start_time_s = start_time_s
        #: the nodes with the soft DeletionCandidate taint (None: not read from the cluster yet)
        self._soft_tainted: set[str] | None = None
        #: the ProvisioningRequests, their conditions as it set them, and each one's retry backoff
        self.provisioning_requests: list[ProvisioningRequest] = list(provisioning_requests)
        self._provreq_retry: dict[str, float] = {}

    # -- the loop ----------------------------------------------------------------------------
    def arm(self, at: float | None = None) -> None:
        if not self.enabled:
            return
        interval = self.settings.scan_interval_s
        t = math.ceil((at if at is not None else self.clock.now) / interval - 1e-9) * interval
        if self.armed_at is None or t < self.armed_at:
            self.armed_at = t
            self.clock.at(t, Priority.CONTROLLER, lambda: self._scan(t), background=True)

    def _scan_after(self, t: float) -> float:
        """The first scan strictly after ``t`` (what upstream's strict ``Before(now)`` checks first let
        through)."""
        interval = self.settings.scan_interval_s
        return (math.floor(t / interval + 1e-9) + 1) * interval

    def _scan(self, t: float) -> None:
        if self.armed_at != t:
            return
        self.armed_at = None
        groups = self.port.node_groups.values()
        healthy = self._cluster_healthy()
        if healthy:
            acted = self._provision() | self._scale_up() | self._scale_down()
            acted |= self._update_soft_taints() | self._keep_warm()
        else:  # RunOnce stops here: the unneeded nodes are forgotten (CleanUpUnneededNodes), looked for again
            acted, self.unneeded_since, self._assessed = False, {}, None
        launching = any(g.launching for g in groups)
        busy = acted or not healthy or self.unneeded_since or self._going() or launching
        if busy:
            self.arm(t + self.settings.scan_interval_s)
        elif self.port.unschedulable_pods():
            backoffs = [g.backoff_until for g in groups if g.backed_off(t)]
            if backoffs:  # (a backoff holds at its last instant: the scan after it)
                self.arm(self._scan_after(min(backoffs)))
        if self._unremovable_until:
            self.arm(self._recheck_at(t))
        if wakeups := [w for w in self._provisioning_wakeups() if w >= t]:
            self.arm(self._scan_after(min(wakeups)))
        started = [since + MAX_NODE_STARTUP_S for since in self.port.unready_nodes().values()]
        if later := [s for s in started if s > t]:  # an unready node still starting becomes a candidate
            self.arm(min(later))

    def _cluster_healthy(self) -> bool:
        """``IsClusterHealthy``: unhealthy when its ``Unready`` nodes (not Ready, registered at least
        ``MAX_NODE_STARTUP_S`` ago) are more than ``--ok-total-unready-count`` and more than
        ``--max-total-unready-percentage`` of all its nodes. Then ``RunOnce`` neither scales up nor down
        (``Cluster is not ready for autoscaling``), and gpufleet's warm nodes wait too; launches still time
        out (``updateScaleRequests`` runs before)."""
        unready = self.port.unready_nodes()
        if len(unready) <= self.settings.ok_total_unready_count:
            if self.unhealthy is not None:
                self._health_changed(unready, True)
            return True
        settings = self.settings
        total = readiness(unready, unready, self.clock.now)  # (only the nodes not Ready can be Unready)
        nodes = self.port.state.size_active
        ok, percentage = settings.ok_total_unready_count, settings.max_total_unready_percentage
        healthy = cluster_healthy(total, nodes, ok, percentage)
        if not healthy or self.unhealthy is not None:
            self._health_changed(unready, healthy)
        return healthy

    def _health(self, unready: Mapping[str, float], healthy: bool) -> HealthCondition:
        """The cluster-wide ``Health`` condition (``GetStatus``' ``buildHealthStatusClusterwide``): every
        active node registered; a launch registered without its GPUs still starting, as in a group."""
        state = self.port.state
        counted = readiness(unready, unready, self.clock.now)
        launches = tuple(
            n
            for g in self.port.node_groups.values()
            for n in sorted(g.launching)
            if n in state.index and n not in unready
        )
        counted = Readiness((), counted.unready, counted.not_started + launches)
        return health_condition(healthy, counted, state.size_active)

    def _health_changed(self, unready: Mapping[str, float], healthy: bool) -> None:
        """Keep the cluster's Health condition while it is unhealthy; at each change log an event:
        ``cluster-unhealthy`` (upstream logs ``Cluster is not ready for autoscaling`` and records the
        ``ClusterUnhealthy`` Event on its status ConfigMap, every loop; gpufleet once, with the Unready nodes)
        or ``cluster-healthy`` (the status ConfigMap's Health condition back to ``Healthy``)."""
        now, health = self.clock.now, self._health(unready, healthy)
        if healthy:
            self.unhealthy = None
            event = ScaleEvent(now, "cluster-healthy", None, (), reason=health.message())
        else:
            was = self.unhealthy
            self.unhealthy = (now if was is None else was[0], health)
            if was is not None:
                return
            names = tuple(sorted(n for n, since in unready.items() if since + MAX_NODE_STARTUP_S <= now))
            reason = f"{NOT_READY_FOR_AUTOSCALING}: {health.message()}"
            event = ScaleEvent(now, "cluster-unhealthy", None, names, reason=reason)
        self.events.append(replace(event, node_counts=health.node_counts()))

    def pod_hints(self, key: str) -> list[str]:
        """What cluster-autoscaler's state says about pending pod ``key`` it would look at, as of its last
        scan: that it is halted, the cluster unhealthy (its Health condition, since when, the two flags);
        else, if the pod's last ``NotTriggerScaleUp`` said ``not ready for scale-up``, which groups are not
        and their Health condition."""
        if self.unhealthy is not None:
            since, health = self.unhealthy
            ok, percentage = self.settings.ok_total_unready_count, self.settings.max_total_unready_percentage
            return [halted_hint(health, ok, percentage, f"is halted since {since:g} s")]
        if NOT_READY not in self.not_triggered.get(key, ""):
            return []
        return [
            f"cluster-autoscaler: node group {name} is {NOT_READY} ({message})"
            for name, message in sorted(self.unready_groups.items())
        ]

    def _group_readiness(self, group: NodeGroup, unready: Mapping[str, float]) -> Readiness | None:
        """The group's registered nodes as ``updateReadinessStats`` counts them (None when none is): a launch
        that registered without its GPUs is not Ready yet (``ResourceUnready``), still starting."""
        state, now = self.port.state, self.clock.now
        registered = [n for n in sorted(group.nodes) if n in state.index]
        if not registered:
            return None
        counted = readiness((n for n in registered if n not in group.launching), unready, now)
        launches = tuple(n for n in registered if n in group.launching)
        return Readiness(counted.ready, counted.unready, counted.not_started + launches)

    def _unhealthy_groups(self, groups: Sequence[NodeGroup]) -> dict[str, str]:
        """The groups ``IsNodeGroupHealthy`` finds unhealthy: more of their nodes missing among the Ready
        below the acceptable minimum (its size less its launches: the scale-up in flight) than
        ``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of its registered nodes.
        With every node Ready none is (each registered node not launched is Ready). Each with its Health
        condition's text (``buildHealthStatusNodeGroup``: the counts, ``cloudProviderTarget``, min, max)."""
        unready, settings = self.port.unready_nodes(), self.settings
        if not unready:
            return {}
        out = {}
        for g in groups:
            acceptable = acceptable_range(len(g.nodes), scale_up_increase=len(g.launching))
            counted = self._group_readiness(g, unready)
            ok, percentage = settings.ok_total_unready_count, settings.max_total_unready_percentage
            if not node_group_healthy(acceptable, counted, ok, percentage):
                health = health_condition(False, counted or Readiness())
                out[g.name] = (
                    f"{health.message()} cloudProviderTarget={acceptable.current_target} "
                    f"(minSize={g.pool.min}, maxSize={g.pool.max})"
                )
        return out

    def _recheck_at(self, t: float) -> float:
        """When scale-down must look again at the nodes the removal simulation found unremovable, though
        nothing changed: at the next scan, which finds those it just found recently unremovable
        (``FilterOutUnremovable``), else at the first scan at or after one's time is up
        (``unremovable.Nodes.Update`` drops it then)."""
        interval = self.settings.scan_interval_s
        if any(why.reason in SIMULATION_REASONS for _, why in self._not_unneeded):
            return t + interval
        return max(min(self._unremovable_until.values()), t + interval)

    def _going(self) -> AbstractSet[str]:
        """Nodes on their way out: those it drains, and those someone else does (a spot notice)."""
        others = self.port.nodes_going_away()
        return self.deleting | others if others else self.deleting

    # -- scale-up ----------------------------------------------------------------------------
    def _daemons(self, template: Node) -> tuple[Pod, ...]:
        """The DaemonSet pods that would run on a node of this template (``daemon_should_run``)."""
        return tuple(pod for pod in self.port.daemonset_templates() if daemon_should_run(pod, template))

    def _room(self) -> int:
        limit = self.settings.max_nodes_total
        if limit is None:
            return 1 << 30
        state = self.port.state
        alive = sum(len(g.nodes) for g in self.port.node_groups.values()) + sum(
            1 for n in state.node_names() if state.nodes[state.index[n]].pool is None
        )
        return max(limit - alive, 0)

    def _resources_left(self) -> dict[str, int]:
        """``Manager.ResourcesLeft``: each cluster-wide limit less what the cluster has, each group counted
        as its size (launched, not deleted) times its template, each node of no group as itself."""
        state = self.port.state
        groups = [(g.pool.template, len(g.nodes)) for g in self.port.node_groups.values()]
        version, nodes, others = self._groupless
        if version != state.static_version:  # (a node joined, left or changed: counted again if of no group)
            every = (state.nodes[state.index[n]] for n in state.node_names())
            now = [node for node in every if node.pool is None]
            if len(now) != len(nodes) or any(a is not b for a, b in zip(now, nodes, strict=True)):
                others = cluster_totals((node, 1) for node in now)
            self._groupless = state.static_version, now, others
        return resources_left(cluster_maxima(self.settings), groups, others)

    def _balancing(self, room: int) -> Balancing | None:
        """``--balance-similar-node-groups``: the labels ignored, and the nodes one scale-up may add in
        all."""
        settings = self.settings
        if not settings.balance_similar_node_groups:
            return None
        return Balancing(settings.balancing_ignore_labels, min(room, settings.max_nodes_per_scale_up or room))

    def _option(self, group: NodeGroup, room: int) -> PoolOption:
        max_nodes = group.pool.max if group.pool.max is not None else len(group.nodes)
        return PoolOption(
            group.name,
            group.pool.template,
            self._daemons(group.pool.template),
            min(max_nodes - len(group.nodes), room, self.settings.max_nodes_per_scale_up or room),
            group.upcoming(),
            group.pool.price_per_hour,
            pool_priority(group.name, self.expander_priorities),
            tuple(group.slices_for(group.pool.template.name)),
            len(group.nodes),
            max_nodes,
            group.pool.zero_or_max_node_scaling,
        )

    def _scale_up(self) -> bool:
        """Ask ``scale_up`` for the pods the scheduler could not place. When the last scan asked the same
        of the same cluster and no group grew, the answer is the same and is not asked again: nothing
        grows, no pod's reason changed (no random draw is made either, with no estimate to choose from).
        Not with DRA, whose claims are allocated apart from the columns. Without pending pods nothing is
        asked: ``scale_up`` would grow nothing and give no pod a reason."""
        # pods consuming a ProvisioningRequest trigger no scale-up (``ProvisioningRequestPodsFilter``)
        pending, told = filter_consumers(self.port.unschedulable_pods())
        for key, message in told:  # (told again only when its message changed, as NotTriggerScaleUp's)
            if self.not_triggered.get(key) != message:
                self.not_triggered[key] = message
                self.events.append(ScaleEvent(self.clock.now, "no-scale-up", None, (), (key,), message))
        if not pending:
            self._unanswered = None
            return False
        now, room, groups = self.clock.now, self._room(), self.port.node_groups
        booked = booked_pods(self.provisioning_requests)
        state = self.port.state
        options = [self._option(g, room) for g in groups.values() if g.pool.autoscaled]
        backed_off = frozenset(o.name for o in options if groups[o.name].backed_off(now))
        self.unready_groups = self._unhealthy_groups([g for g in groups.values() if g.pool.autoscaled])
        unhealthy = frozenset(self.unready_groups)
        # no pod goes to a node being deleted, nor to an upcoming one already registered (GPUs not yet):
        # its template copy stands for it (``RunOnce`` takes ``registeredUpcoming`` out of the snapshot)
        registered = {n for g in groups.values() if g.pool.autoscaled for n in g.launching}
        exclude = frozenset(state.index[n] for n in self._going() | registered if n in state.index)
        total_reached = room == 0 and self.settings.max_nodes_total is not None
        left = self._resources_left()
        asked = (
            state.change_pos,
            state.static_version,
            pending,
            options,
            backed_off,
            unhealthy,
            exclude,
            total_reached,
            left,
            tuple(p.key for p in booked),
        )
        if state.dra is None and asked == self._unanswered:
            return False
        reply = scale_up(
            ScaleUpRequest(
                now,
                state,
                self.profile,
                pending,
                options,
                backed_off,
                self.settings.expander,
                self.rng,
                exclude,
                total_reached,
                self.not_triggered,
                left,
                self._balancing(room),
                unhealthy,
                room if self.settings.max_nodes_total is not None else None,
                placed_first=booked,
            )
        )
        self._unanswered = asked if reply.scale_up is None else None
        for key, reason in reply.not_triggered:
            self.not_triggered[key] = reason
            message = f"pod didn't trigger scale-up: {reason}"
            self.events.append(ScaleEvent(now, "no-scale-up", None, (), (key,), message))
        up = reply.scale_up
        if up is None:
            return False
        self._execute(up)
        return True

    def _execute(self, up: ScaleUp) -> None:
        """``ExecuteScaleUps``: each group of the split, one after another."""
        now, groups = self.clock.now, self.port.node_groups
        for name, nodes in up.split:
            group = groups[name]
            if group.pool.zero_or_max_node_scaling:
                self._scale_up_atomic(group, nodes, up.pods)
                continue
            launched = [n for _ in range(nodes) if (n := self.launch(group, up.pods)) is not None]
            if launched:
                self.last_scale_up_s = now
                self.events.append(ScaleEvent(now, "scale-up", group.name, tuple(launched), up.pods))

    def _provisioning_wakeups(self) -> list[float]:
        """When a ProvisioningRequest next needs a loop (at the scan after it: both checks are a strict
        ``Before(now)``): a booking's expiry (``Provisioned`` true 10 minutes ago), a retry's backoff's end
        (``Provisioned`` false)."""
        out = []
        for r in self.provisioning_requests:
            c = r.condition(PROVISIONED)
            if c is None or r.is_true(FAILED) or r.is_true(BOOKING_EXPIRED):
                continue
            if c.status is True:
                out.append(c.last_transition + RESERVATION_TIME_S)
            elif c.status is False:
                out.append(c.last_transition + self._provreq_retry.get(r.key, INITIAL_RETRY_S))
        return out

    def _provision(self) -> bool:
        """The ProvisioningRequests' part of a loop (``provisioning_request``): their bookings expire and the
        old ones go (``provReqProcessor.refresh``), the next one available is taken
        (``GetPodsFromNextRequest``) and provisioned (``provReqOrchestrator.ScaleUp``), its scale-up executed.
        Each condition set is a ``provisioning-request`` event naming the request."""
        if not self.provisioning_requests:
            return False
        now = self.clock.now
        before = {r.key: r.conditions for r in self.provisioning_requests}
        requests, old = refresh(self.provisioning_requests, now)
        injected = next_request([r for r in requests if r.key not in old], now, self._provreq_retry)
        self._provreq_retry = dict(injected.retry_s)
        requests, up = list(injected.requests), None
        if injected.chosen is not None:
            room, groups, state = self._room(), self.port.node_groups, self.port.state
            options = [self._option(g, room) for g in groups.values() if g.pool.autoscaled]
            registered = {n for g in groups.values() if g.pool.autoscaled for n in g.launching}
            exclude = frozenset(state.index[n] for n in self._going() | registered if n in state.index)
            ask = ProvisionRequest(
                now, state, self.profile, requests, injected.chosen.key, options, exclude=exclude,
                backed_off=frozenset(o.name for o in options if groups[o.name].backed_off(now)),
                expander=self.settings.expander, rng=self.rng, resources_left=self._resources_left(),
                nodes_left=room if self.settings.max_nodes_total is not None else None,
            )  # fmt: skip
            done = provision(ask)
            requests, up = list(done.requests), done.scale_up
        self.provisioning_requests = requests
        for r in requests:
            for c in r.conditions:
                if c not in before.get(r.key, ()):
                    status = {True: "True", False: "False", None: "Unknown"}[c.status]
                    message = f"{c.type}={status} {c.reason}: {c.message}"
                    self.events.append(ScaleEvent(now, "provisioning-request", None, (), (r.key,), message))
        for key in old:
            self.events.append(ScaleEvent(now, "provisioning-request", None, (), (key,), "deleted"))
        if up is not None:
            self._execute(up)
        return up is not None or any(before.get(r.key) != r.conditions for r in requests) or bool(old)

    def _scale_up_atomic(self, group: NodeGroup, nodes: int, for_pods: tuple[str, ...]) -> None:
        """A ``ZeroOrMaxNodeScaling`` group grows by all its nodes in one request (``increaseSize`` with
        ``atomic``: ``AtomicIncreaseSize``): when the cloud refuses one of them, the group is backed off and
        the failed scale-up's cleanup deletes all the group's nodes, none kept
        (``deleteCreatedNodesWithErrors``, ``overrideNodesToDeleteForZeroOrMax``;
        ``AllowNonAtomicScaleUpToMax`` is not modelled)."""
        now = self.clock.now
        launched: list[str] = []
        for _ in range(nodes):
            name = self.launch(group, for_pods)
            if name is None:
                break
            launched.append(name)
        else:
            if launched:
                self.last_scale_up_s = now
                self.events.append(ScaleEvent(now, "scale-up", group.name, tuple(launched), for_pods))
            return
        doomed = tuple(sorted(group.nodes - self.deleting))
        for name in doomed:
            self.port.delete_node(name)
        if doomed:
            reason = "atomic scale-up failed: all the group's nodes deleted (ZeroOrMaxNodeScaling)"
            self.events.append(ScaleEvent(now, "scale-up-failed", group.name, doomed, for_pods, reason))
        for key in for_pods:
            self.port.pod_waits_for_node(key, provisioning=self._still_provisioning(key))

    # -- nodes -------------------------------------------------------------------------------
    def launch(self, group: NodeGroup, for_pods: tuple[str, ...] = (), warm: bool = False) -> str | None:
        """Ask the cloud for a node; a refusal (a stock-out) backs the group off. A node that may not
        register its GPUs within ``maxNodeProvisionTime`` is checked at the first scan after that time
        (``updateScaleRequests``: timed out once ``ExpectedAddTime.Before(now)``, this scan's time plus
        ``maxNodeProvisionTime``)."""
        now = self.clock.now
        name = self.port.launch(group.name, for_pods, warm)
        if name is None:
            group.back_off(now, self.settings)
            self.events.append(ScaleEvent(now, "scale-up-failed", group.name, (), for_pods, "stock-out"))
            return None
        launch = group.launching[name]
        limit = self.settings.max_node_provision_time_s
        ready_after = launch.gpu_ready_after_s
        if ready_after is None or ready_after > limit:
            self.clock.at(
                self._scan_after(now + limit),
                Priority.ARRIVAL,
                partial(self._provision_timeout, group, name, launch),
            )
        return name

    def _provision_timeout(self, group: NodeGroup, name: str, launch: LaunchStatus) -> None:
        if group.launching.get(name) is not launch:
            return
        now = self.clock.now
        for_pods = launch.for_pods
        group.back_off(now, self.settings)
        self.events.append(
            ScaleEvent(
                now,
                "provision-timeout",
                group.name,
                (name,),
                for_pods,
                "GPUs not registered within maxNodeProvisionTime",
            )
        )
        self.port.delete_node(name)
        for key in for_pods:
            self.port.pod_waits_for_node(key, provisioning=self._still_provisioning(key))

    def _still_provisioning(self, key: str) -> bool:
        return any(
            key in launch.for_pods for g in self.port.node_groups.values() for launch in g.launching.values()
        )

    # -- scale-down --------------------------------------------------------------------------
    def _readiness(self) -> tuple[frozenset[str], frozenset[str]]:
        """The nodes that are not Ready, and those of them still starting: not Ready within
        ``MAX_NODE_STARTUP_S`` of registering (``updateReadinessStats``' ``NotStarted``, which
        ``GetUpcomingNodes`` counts as upcoming and ``RunOnce`` takes out of scale-down's candidates)."""
        unready, now = self.port.unready_nodes(), self.clock.now
        return frozenset(unready), frozenset(n for n, t in unready.items() if now < t + MAX_NODE_STARTUP_S)

    def _candidates(self) -> list[Candidate]:
        """The nodes of autoscaled groups above their ``min`` (``PreFilteringScaleDownNodeProcessor``: a
        group's nodes, launches included, as its target size), neither starting (launched and GPUs not
        registered, or not Ready and still starting), warm nor going, in name order, each with whether it
        is Ready. The last scan's list stands while what it was made of does: each group's nodes,
        launches, warm nodes, name and ``min``, the nodes going, the nodes not Ready, and the cluster's
        nodes (``static_version``)."""
        going, state, readiness = self._going(), self.port.state, self._readiness()
        groups = [g for g in self.port.node_groups.values() if g.pool.autoscaled]
        made_of = [(g, g.name, g.pool.min) for g in groups]
        kept = self._listed
        if (
            kept is not None
            and kept.static_version == state.static_version
            and kept.going == going
            and kept.groups == made_of
            and kept.readiness == readiness
            and all(
                g.nodes == nodes and g.launching.keys() == launching and g.warm == warm
                for g, (nodes, launching, warm) in zip(groups, kept.sets, strict=True)
            )
        ):
            return kept.candidates
        out = []
        unready, starting = readiness
        for group in groups:
            if len(group.nodes) <= group.pool.min:
                continue
            atomic = group.pool.zero_or_max_node_scaling
            registered = sum(1 for name in group.nodes if name in state.index) if atomic else 0
            for name in sorted(group.nodes - group.launching.keys() - group.warm - going - starting):
                if name in state.index:
                    ready = name not in unready
                    size, low = len(group.nodes), group.pool.min
                    out.append(Candidate(name, group.name, size, low, ready, atomic, registered))
        sets = [(frozenset(g.nodes), frozenset(g.launching), frozenset(g.warm)) for g in groups]
        self._listed = ListedCandidates(state.static_version, frozenset(going), made_of, sets, readiness, out)
        return out

    def _unbooked(self, candidates: list[Candidate]) -> list[Candidate]:
        """The candidates that hold no booked ProvisioningRequest capacity (``booked_nodes``: upstream's
        booked pods in the scale-down snapshot keep their nodes; here such a node is no candidate)."""
        if not any(should_book(r) for r in self.provisioning_requests):
            return candidates
        state = self.port.state
        exclude = frozenset(state.index[n] for n in self._going() if n in state.index)
        held = booked_nodes(state, self.profile, self.provisioning_requests, exclude)
        return [c for c in candidates if c.node not in held]

    def _scale_down(self) -> bool:
        port, now, st = self.port, self.clock.now, self.port.state
        budgets = port.disruption_budgets
        going = self._going()
        # verdicts depend only on the cluster's state: unchanged since the last scan, they stand (and the
        # candidates with them, but for a group's crossing its min as it grows or shrinks)
        above_min = tuple(len(g.nodes) > g.pool.min for g in port.node_groups.values() if g.pool.autoscaled)
        going_key = tuple(sorted(going))
        bookings = tuple(r.key for r in self.provisioning_requests if should_book(r))
        key = (
            st.change_pos, st.static_version, going_key, port.pods_version(), self._readiness(), above_min,
            bookings,
        )  # fmt: skip
        # ... and a node found unremovable is assessed again once its time is up, and every candidate again
        # after a scan that stopped at unneededNodesLimit (its limit is higher now)
        assessing = (
            key != self._assessed or self._cut or any(t <= now for t in self._unremovable_until.values())
        )
        self._assessed = key
        reply = scale_down(
            ScaleDownRequest(
                now,
                st,
                self.profile,
                self._unbooked(self._candidates()) if assessing or self.unneeded_since else (),
                self.utilization,
                self.settings.scale_down_unneeded_time_s,
                self.settings.scale_down_delay_after_add_s,
                self.last_scale_up_s,
                self.unneeded_since,
                frozenset(going),
                budgets,
                self._disruptions_allowed() if budgets and assessing else {},
                frozenset(port.daemon_pod_keys()),
                port.computes_on_gpus if self.settings.gpu_aware_scale_down else None,
                assess=assessing,
                memo=self._memo,
                unready_enabled=self.settings.scale_down_unready_enabled,
                unready_time_s=self.settings.scale_down_unready_time_s,
                deletions={g.name: len(g.nodes & self.deleting) for g in port.node_groups.values()},
                unremovable_until=self._unremovable_until,
                recheck_timeout_s=self.settings.unremovable_node_recheck_timeout_s,
                max_parallelism=self.settings.max_scale_down_parallelism,
                max_drain_parallelism=self.settings.max_drain_parallelism,
                in_progress=self._in_progress(now),
                unneeded_before=self.gauges.unneeded,
                update_interval_s=self._update_interval(),
            )
        )
        self.unneeded_since, self._unremovable_until = reply.unneeded_since, reply.unremovable_until
        self._cut = reply.cut
        self._not_unneeded = reply.not_unneeded if assessing else self._not_assessed_again()
        self.gauges.unneeded = reply.unneeded_count
        if not reply.cooldown:  # countsByReason of the candidates' reasons and RemovableAt's
            self.gauges.unremovable.update(
                Counter(why.reason for _, why in (*self._not_unneeded, *reply.unremovable))
            )
        started = self._started[1] if self._started[0] == now else {}
        self._started = now, started
        graces: dict[str, float] = {}
        for c in reply.remove:
            self.deleting.add(c.node)
            started[c.node] = has_movable_pods(st, c.node)  # (StartDeletionWithDrain)
            if started[c.node]:
                self.draining.add(c.node)
            graces[c.node] = port.drain(c.node)
            self.events.append(ScaleEvent(now, "scale-down", c.group, (c.node,)))
        # GroupDeletionScheduler.addToBatcher: a ZeroOrMaxNodeScaling group's nodes are deleted as one batch,
        # once the last of them is drained
        batch: dict[str, float] = {}
        for c in reply.remove:
            batch[c.group] = max(batch.get(c.group, 0.0), graces[c.node])
        for c in reply.remove:
            grace = batch[c.group] if c.atomic else graces[c.node]
            self.clock.at(now + grace, Priority.COMPLETION, partial(self._deleted, c.node))
        return reply.acted

    def _update_soft_taints(self) -> bool:
        """``updateSoftDeletionTaints``, after each scan's scale-down (``autoscaling.soft_taints``): the
        unneeded nodes of its groups get the DeletionCandidate taint, its groups' other nodes lose it, nodes
        being deleted left alone, within ``--max-bulk-soft-taint-count``; each scan that changes some logs a
        ``soft-taint`` and/or ``soft-taint-removed`` event. True when some were left for the next scan."""
        budget = self.settings.max_bulk_soft_taint_count
        if budget == 0:
            return False
        state = self.port.state
        tainted = self._soft_tainted
        if tainted is None:  # (the cluster's own: a snapshot's nodes may carry it)
            tainted = {
                n for n in state.node_names() if has_deletion_candidate_taint(state.nodes[state.index[n]])
            }
            self._soft_tainted = tainted
        tainted.intersection_update(state.index)  # a deleted node took its taint with it
        if not tainted and not self.unneeded_since:
            return False
        selected = {n for g in self.port.node_groups.values() if g.pool.autoscaled for n in g.nodes}
        unneeded = [state.nodes[state.index[n]] for n in sorted(self.unneeded_since) if n in selected]
        needed = [
            state.nodes[state.index[n]] for n in sorted(tainted - self.unneeded_since.keys()) if n in selected
        ]
        update = update_soft_deletion_taints(unneeded, needed, self.deleting, budget)
        now = self.clock.now
        for name in update.clean:
            self.port.set_node_taints(name, without_deletion_candidate(state.nodes[state.index[name]]))
            tainted.discard(name)
        unix = self.start_time_s + now
        for name in update.mark:
            self.port.set_node_taints(name, with_deletion_candidate(state.nodes[state.index[name]], unix))
            tainted.add(name)
        if update.clean:
            self.events.append(ScaleEvent(now, "soft-taint-removed", None, update.clean))
        if update.mark:
            taint = deletion_candidate_taint(unix)
            reason = f"{DELETION_CANDIDATE_TAINT_KEY}={taint.value}:{taint.effect}"
            self.events.append(ScaleEvent(now, "soft-taint", None, update.mark, reason=reason))
        return update.skipped > 0

    def _not_assessed_again(self) -> tuple[tuple[str, Unremovable], ...]:
        """The last scan's candidates that are not unneeded, as a scan of the unchanged cluster finds them:
        the same, but a node the removal simulation found unremovable is now recently so."""
        until = self._unremovable_until
        return tuple(
            (name, recently_unremovable(until[name]) if name in until else why)
            for name, why in self._not_unneeded
        )

    def _disruptions_allowed(self) -> dict[str, int]:
        """Each PodDisruptionBudget's ``disruptionsAllowed``, by ``namespace/name``."""
        return {f"{b.namespace}/{b.name}": n for b, n in self.port.pod_disruption_budgets()}

    def _in_progress(self, now: float) -> tuple[int, int]:
        """The deletions it has in progress, empty nodes and drained ones (``DeletionsInProgress``): its nodes
        not gone yet, and those whose deletion started at this instant."""
        going = {name: name in self.draining for name in self.deleting}
        if self._started[0] == now:
            going.update(self._started[1])
        drains = sum(going.values())
        return len(going) - drains, drains

    def _update_interval(self) -> float:
        """The planner's smallest update interval (``minUpdateInterval``): ``ScaleDownUnneededTime`` (a
        nanosecond when 0) until the loop's second run, its period after (upstream's loop runs every
        ``scanInterval``; gpufleet skips the scans that would find nothing new). The smaller of the two: at
        the first run, with nothing unneeded before, both give the limit twice the parallelism."""
        return min(self.settings.scale_down_unneeded_time_s or 1e-9, self.settings.scan_interval_s)

    def _deleted(self, name: str) -> None:
        self.deleting.discard(name)
        self.draining.discard(name)
        self.port.delete_node(name)

    # -- warm nodes --------------------------------------------------------------------------
    def _keep_warm(self) -> bool:
        warm_groups = [g for g in self.port.node_groups.values() if g.pool.warm]
        if not warm_groups:
            return False
        groups = [
            WarmGroup(
                g.name,
                g.pool.warm,
                g.pool.max if g.pool.max is not None else len(g.nodes) + g.pool.warm,
                len(g.nodes),
                tuple(sorted(g.warm)),
                sum(1 for launch in g.launching.values() if launch.warm),
            )
            for g in warm_groups
        ]
        reply = keep_warm(groups, self.port.state)
        for g in warm_groups:
            g.warm.difference_update(reply.used)
        acted = False
        for name, count in reply.launch:
            group = self.port.node_groups[name]
            for _ in range(count):
                if self.launch(group, warm=True) is None:
                    break
                acted = True
        return acted
