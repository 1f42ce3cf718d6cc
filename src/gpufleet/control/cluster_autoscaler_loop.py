"""cluster-autoscaler's control loop: scan, scale up, scale down, warm nodes.

Every ``scanInterval`` (10 s) while there is something to look at, at most once an interval (upstream's loop:
a change at the instant of a scan is looked at by the next one): pods the scheduler marked unschedulable are
estimated against each pool's template (``autoscaling.scale_up``, upcoming nodes first; the template carries
the ResourceSlices of a pool that publishes them) and an expander picks a pool, within the cluster-wide
resource limits (``autoscaling.resource_limits``), its new nodes split with its similar pools under
``--balance-similar-node-groups`` (``autoscaling.node_group_balancing``); when none grows, each pod left gets
a ``no-scale-up`` event with cluster-autoscaler's ``NotTriggerScaleUp`` message (again only when that message
changes); nodes of pools above their ``min`` (``PreFilteringScaleDownNodeProcessor``) below the utilisation
threshold whose pods fit elsewhere become unneeded (the pending pods scale-up's ``filterOutSchedulable`` put
on a node counted among its pods: upstream's scale-down reads the snapshot they were packed into; a node whose
pods could not move is not looked at again for ``unremovableNodeRecheckTimeout``, 5 minutes, whatever changes;
the loop scans again then; a scan looks for no more than ``unneededNodesLimit``) and are removed once unneeded
for more than ``scaleDownUnneededTime`` (a node that is not Ready, its kubelet down or its GPUs not
registered, for more than ``scaleDownUnreadyTime``, none with ``scaleDownUnreadyEnabled: false``), not within
``scaleDownDelayAfterAdd`` of a scale-up nor ``scaleDownDelayAfterDelete`` of a scan that started deletions,
none at all with ``scaleDownEnabled: false`` (the soft taints neither), at most ``maxScaleDownParallelism``
deletions at once and ``maxDrainParallelism`` drains, those in progress counted (drained: pods evicted in
``drainPriorityConfig``'s priority groups, with their grace period cut to the group's or to
``maxGracefulTerminationSec``, refused evictions retried, then the node deleted, or given back when the drain
fails or when the second look ``nodeDeleteDelayAfterTaint`` after the scan finds a pod that now blocks it, or
a pod on a node chosen empty: ``control.cluster_autoscaler_actuation``; the drainability rules as
``skipNodesWithSystemPods`` and ``skipNodesWithCustomControllerPods`` keep them); pools
with ``warm`` keep that many empty GPU-ready nodes beyond what pods need. Each scan leaves
cluster-autoscaler's scale-down gauges as upstream's would be (``ScaleDownGauges``). The nodes a
``zeroOrMaxNodeScaling`` pool scales down are deleted as one batch, once the last of them is drained
(``GroupDeletionScheduler``). Pods below ``expendablePodsPriorityCutoff`` (-10) are expendable: they never
trigger a scale-up, scale-down ignores them and a drain leaves them to end with their node; a pending pod a
scheduler nominated to a node (``NodeGroupPort.nominated_nodes``) waits there, no scale-up candidate
(``autoscaling.expendable``). A pending pod younger than ``newPodScaleUpDelay`` (or its ``pod-scale-up-delay``
annotation) triggers no scale-up; the loop scans again once it is old enough (``autoscaling.young_pods``).
When the pods left are all very new (the oldest less than 2 s old, or the oldest GPU pod less than 30 s old),
the scan neither scales up nor deletes a node, and the loop scans again once they are no longer new
(``autoscaling.new_pods``); with ``bypassedSchedulerNames`` there is no such wait, and the pending pods of
those schedulers that none processed count among the unschedulable ones.

Its parts, each in its own module: the cluster's and its groups' health, which halts a scan or skips a group
(``control.cluster_autoscaler_health``); the ProvisioningRequests, handled first in each scan
(``control.cluster_autoscaler_provisioning``); the groups as scale-up sees them
(``control.cluster_autoscaler_scale_up_options``) and the launches that carry a scale-up out, with their
backoffs, each group's scale-up request and its timeout, and the removal of nodes that never registered,
done at the start of each scan (``control.cluster_autoscaler_scale_up_executor``); the soft taints put
after each scan's scale-down (``control.cluster_autoscaler_soft_taints``); the events all of them log
(``control.cluster_autoscaler_events``).

The decisions are ``autoscaling.cluster_autoscaler`` (request in, reply out); this loop keeps the
timer and its own bookkeeping, reads the cluster and acts through a ``control.port.NodeGroupPort``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownRequest,
    ScaleUp,
    ScaleUpRequest,
    WarmGroup,
    cooling,
    has_movable_pods,
    keep_warm,
    pending_on,
    recalls,
    recently_unremovable,
    scale_down,
    scale_up,
    unneeded_nodes_limit,
)
from gpufleet.autoscaling.cluster_state import MAX_NODE_STARTUP_S, HealthCondition
from gpufleet.autoscaling.drainability import LONG_TERMINATING_EXTRA_S
from gpufleet.autoscaling.expendable import expendable_on
from gpufleet.autoscaling.new_pods import wait_hint
from gpufleet.autoscaling.provisioning_request import ProvisioningRequest, ProvisionRequest, filter_consumers
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.autoscaling.scale_down import (
    AS_IS,
    SIMULATION_REASONS,
    SnapshotPods,
    Unremovable,
    UnremovableReason,
    UtilizationRule,
    long_terminating_on,
)
from gpufleet.autoscaling.young_pods import young_pods
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.cluster_autoscaler_actuation import Actuator, Removal, disruptions_allowed
from gpufleet.control.cluster_autoscaler_events import ScaleEvent as ScaleEvent
from gpufleet.control.cluster_autoscaler_health import ClusterHealth, UnreadyNodes, unready_nodes
from gpufleet.control.cluster_autoscaler_provisioning import ProvisioningRequests
from gpufleet.control.cluster_autoscaler_scale_up_executor import ScaleUpExecutor
from gpufleet.control.cluster_autoscaler_scale_up_options import ScaleUpOptions
from gpufleet.control.cluster_autoscaler_soft_taints import SoftTaints
from gpufleet.control.port import NodeGroup, NodeGroupPort
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.model.simulation import AutoscalerSettings
from gpufleet.scheduling.profile import build_profile


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

    membership: tuple[int, int]  # ``ClusterState.membership``: which nodes are in the cluster
    going: frozenset[str]
    groups: list[tuple[NodeGroup, str, int]]  # each autoscaled group, its name and min
    sets: list[tuple[frozenset[str], frozenset[str], frozenset[str]]]  # its nodes, launches, warm nodes
    readiness: tuple[frozenset[str], frozenset[str]]  # the unready nodes, and those still starting
    candidates: list[Candidate]


@dataclass(frozen=True)
class StandingScaleDown:
    """An assessing scan's scale-down that a scan whose verdicts all stand finds again
    (``_verdicts_stand``)."""

    rest: tuple[object, ...]  # what the removal memo does not follow (``_scale_down``'s key)
    candidates: list[Candidate]  # its candidate list (``_candidates``'s, kept while it stands)
    until: dict[str, float]  # the recheck times and unneeded nodes it left
    unneeded: dict[str, float]
    cooldown: bool  # whether it was in cooldown, and when its first unneeded node ripens
    ripens_at: float


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
        groups = port.node_groups.values()
        self.enabled = any(g.pool.autoscaled or g.pool.warm for g in groups) or bool(provisioning_requests)
        self.keeps_warm = any(g.pool.warm for g in groups)
        self.profile = build_profile(ProfileConfig())
        self.rng = np.random.default_rng([seed, 2])
        self.armed_at: float | None = None
        #: when the last scan ran: upstream's loop runs once a scan interval, so a change at the instant of a
        #: scan is looked at by the next one
        self._last_scan_s = -math.inf
        self.unneeded_since: dict[str, float] = {}
        self.last_scale_up_s = -math.inf
        self.last_delete_s = -math.inf  # the last scan that started deleting nodes (lastScaleDownDeleteTime)
        #: the time after which the first of the pending pods too young for scale-up at the last scan is old
        #: enough (``autoscaling.young_pods``; None: none was)
        self._young_until: float | None = None
        #: when the last scan's scale-up waited for very new pods (``allPodsAreNew``): the time from which
        #: they are no longer new, and those pods (None: it did not wait)
        self._new_pods: tuple[float, frozenset[str]] | None = None
        self.events: list[ScaleEvent] = [] if events is None else events
        #: the deletions it carries out (``control.cluster_autoscaler_actuation``); a node given back is a
        #: candidate again at the next scan
        self.actuator = Actuator(port, clock, settings, self.events, lambda: self.arm(), self._created)
        self.delete_options = self.actuator.delete_options  # (the drainability rules' NodeDeleteOptions)
        self.deleting = self.actuator.deleting  # nodes it is deleting
        self.draining = self.actuator.draining  # those of them it drains (the others were empty)
        self.not_triggered: dict[str, str] = {}  # pod -> its last NotTriggerScaleUp message
        self.health = ClusterHealth(port, settings, self.events)
        self._assessed: tuple[object, ...] | None = None
        self._unanswered: tuple[object, ...] | None = None  # what the last scan asked that grew nothing
        self._room_only = False  # ... and its answer stands while the cluster only loses room
        #: the pending pods the last scale-up's filterOutSchedulable put on the cluster's nodes, with their
        #: nodes (``ScaleUpReply.placed``): what the scan's scale-down sees on them (kept while the answer
        #: to an unanswered ask stands)
        self._placed: tuple[tuple[Pod, str], ...] = ()
        #: the nodes not Ready as the scan under way read them at its start (None between scans)
        self._scan_unready: UnreadyNodes | None = None
        self._memo = RemovalMemo()  # scale-down verdicts that still stand (autoscaling.removal_memo)
        self._listed: ListedCandidates | None = None  # the last scan's scale-down candidates
        #: the last assessing scan's scale-down where a scan whose verdicts all stand would find it again
        self._standing: StandingScaleDown | None = None
        #: the candidates the last scan found not unneeded, and why (they stand until the next assessing scan)
        self._not_unneeded: tuple[tuple[str, Unremovable], ...] = ()
        #: the nodes the removal simulation found unremovable, each not checked again until then
        self._unremovable_until: dict[str, float] = {}
        self.gauges = ScaleDownGauges()
        self._cut = False  # the last scan stopped at unneededNodesLimit
        #: the last scan's scale-down with nothing to assess (``_quiet_stands``): what it was made of (its
        #: ``_quiet_key``), whether it was in cooldown, and its ``ripens_at``
        self._quiet: tuple[tuple[object, ...], bool, float] | None = None
        self.options = ScaleUpOptions(port, settings, expander_priorities)
        self.executor = ScaleUpExecutor(port, clock, settings, self.events)
        self.soft_taints = SoftTaints(port, settings.max_bulk_soft_taint_count, start_time_s, self.events)
        self.provisioning = ProvisioningRequests(provisioning_requests, self.events)
        #: told after a loop changed the requests' conditions (Kueue's ProvisioningRequest admission check
        #: controller watches the requests it owns)
        self.provisioning_listeners: list[Callable[[], None]] = []

    @property
    def unhealthy(self) -> tuple[float, HealthCondition] | None:
        """While the last scan found the cluster unhealthy: since when, and its Health condition then."""
        return self.health.unhealthy

    @property
    def unready_groups(self) -> dict[str, str]:
        """The groups the last scale-up found not ready for scale-up, each with its Health condition's
        text."""
        return self.health.unready_groups

    # -- ProvisioningRequests made by others (control.port.ProvisioningRequests) -------------
    def provisioning_request(self, key: str) -> ProvisioningRequest | None:
        return self.provisioning.get(key)

    def create_provisioning_request(self, request: ProvisioningRequest) -> None:
        """A new request (Kueue's): handled from the next loop on (``--enable-provisioning-requests``)."""
        self.provisioning.create(request, self.clock.now)
        self.enabled = True
        self.arm()

    def delete_provisioning_request(self, key: str) -> None:
        self.provisioning.delete(key, self.clock.now)

    # -- the loop ----------------------------------------------------------------------------
    def arm(self, at: float | None = None) -> None:
        if not self.enabled:
            return
        interval = self.settings.scan_interval_s
        t = math.ceil((at if at is not None else self.clock.now) / interval - 1e-9) * interval
        t = max(t, self._last_scan_s + interval)  # upstream's loop runs once an interval
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
        self._last_scan_s = t
        unready = self._scan_unready = unready_nodes(self.port)  # (RunOnce lists the nodes once)
        try:
            self._scan_with(t, unready)
        finally:
            self._scan_unready = None

    def _scan_with(self, t: float, unready: UnreadyNodes) -> None:
        groups = self.port.node_groups.values()
        # the registry's update (scale-up requests done or timed out) and the removal of nodes that never
        # registered come before the health check (RunOnce)
        removed = self.executor.update(self._going(), unready.long_unready(self.clock.now))
        healthy = self.health.cluster_healthy(self.clock.now, unready.nodes)
        self._new_pods = None
        if healthy:
            acted = self._provision() | self._scale_up()
            if self.settings.scale_down_enabled:  # (RunOnce: the soft taints are scale-down's too)
                acted |= self._scale_down()
                acted |= self.soft_taints.update(self.clock.now, self.unneeded_since, self.deleting)
            acted |= self._keep_warm()
        else:  # RunOnce stops here: the unneeded nodes are forgotten (CleanUpUnneededNodes), looked for again
            acted, self.unneeded_since, self._assessed = False, {}, None
        launching = any(g.launching for g in groups)
        busy = acted or removed or not healthy or self.unneeded_since or self._going() or launching
        if busy:
            self.arm(t + self.settings.scan_interval_s)
        elif self._unschedulable_pods():
            backoffs = [g.backoff_until for g in groups if g.backed_off(t)]
            if backoffs:  # (a backoff holds at its last instant: the scan after it)
                self.arm(self._scan_after(min(backoffs)))
        if self._unremovable_until:
            self.arm(self._recheck_at(t))
        if self._young_until is not None:  # a young pending pod is old enough at the scan after it
            self.arm(self._scan_after(self._young_until))
        if self._new_pods is not None:  # very new pods are no longer new from the first scan at that time
            self.arm(self._new_pods[0])
        if wakeups := [w for w in self.provisioning.wakeups() if w >= t]:
            self.arm(self._scan_after(min(wakeups)))
        started = [since + MAX_NODE_STARTUP_S for since in unready.nodes.values()]
        if later := [s for s in started if s > t]:  # an unready node still starting becomes a candidate
            self.arm(min(later))
        if self.settings.scale_down_enabled and (long := self._long_terminating_from(t, unready)):
            self.arm(self._scan_after(min(long)))  # scale-down no longer counts it, nor moves it

    def _long_terminating_from(self, t: float, unready: UnreadyNodes) -> list[float]:
        """When the pods being deleted on unready nodes (whose kubelet may never confirm their end) become
        long terminating (``drain.IsPodLongTerminating``), at ``t`` or later."""
        state = self.port.state
        ends = [
            a.deleted_s + a.pod.termination_grace_s + LONG_TERMINATING_EXTRA_S
            for a in state.deleting.values()
            if a.deleted_s is not None and state.nodes[a.node].name in unready.nodes
        ]
        return [end for end in ends if end >= t]

    def pod_hints(self, key: str) -> list[str]:
        """What cluster-autoscaler's state says about pending pod ``key`` it would look at, as of its last
        scan (``ClusterHealth.pod_hints``, from the pod's last ``NotTriggerScaleUp`` message); or, when that
        scan waited for very new pods, the pod among them, that it waits and until when."""
        hints = self.health.pod_hints(self.not_triggered.get(key, ""))
        if self._new_pods is not None and key in self._new_pods[1]:
            hints.append(wait_hint(self._new_pods[0]))
        return hints

    @property
    def waits_for_new_pods(self) -> bool:
        """Whether the last scan waited for very new pods (``allPodsAreNew``)."""
        return self._new_pods is not None

    def _unschedulable_pods(self) -> list[Pod]:
        """The pods it looks at (``listPods``): those whose ``PodScheduled`` condition is ``Unschedulable``,
        whatever their scheduler, then, with ``--bypassed-scheduler-names``, the pending pods of those
        schedulers that none has processed."""
        bypassed = self.settings.bypassed_scheduler_names
        pods = self.port.unschedulable_pods()
        return [*pods, *self.port.scheduler_unprocessed_pods(frozenset(bypassed))] if bypassed else pods

    def _created(self, key: str) -> float | None:
        """The pod's ``creationTimestamp`` on the run's clock, where the cluster has the pod."""
        status = self.port.pods.get(key)
        return None if status is None else status.creation_timestamp_s

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
    def _scale_up(self) -> bool:
        """Ask ``scale_up`` for the pods the scheduler could not place. When the last scan asked the same
        of the same cluster and no group grew, the answer is the same and is not asked again: nothing
        grows, the same pods are put on the same nodes (``_placed`` stands), no pod's reason changed (no
        random draw is made either, with no estimate to choose from). Not with DRA, whose claims are
        allocated apart from the columns. Without pending pods nothing is asked: ``scale_up`` would grow
        nothing, put no pod anywhere and give no pod a reason."""
        # pods consuming a ProvisioningRequest trigger no scale-up (``ProvisioningRequestPodsFilter``)
        pending, told = filter_consumers(self._unschedulable_pods())
        for key, message in told:  # (told again only when its message changed, as NotTriggerScaleUp's)
            if self.not_triggered.get(key) != message:
                self.not_triggered[key] = message
                self.events.append(ScaleEvent(self.clock.now, "no-scale-up", None, (), (key,), message))
        if not pending:
            self._unanswered, self._placed, self._young_until = None, (), None
            return False
        now, room, groups = self.clock.now, self.options.room(), self.port.node_groups
        created = {p.key: self.port.pods[p.key].creation_timestamp_s for p in pending}
        young = young_pods(pending, created, now, self.settings.new_pod_scale_up_delay_s)
        self._young_until = min(young.values(), default=None)
        booked = self.provisioning.booked_pods()
        state = self.port.state
        unready = self._unready()
        options, backed_off, exclude = self.options.groups(
            room, now, self._going(), unready.long_unready(now)
        )
        increases = {name: r.increase for name, r in self.executor.requests.items()}
        unhealthy = self.health.update_groups(
            [g for g in groups.values() if g.pool.autoscaled], now, increases, unready.nodes
        )
        total_reached = room == 0 and self.settings.max_nodes_total is not None
        left = self.options.resources_left()
        nominations = self.port.nominated_nodes()
        nominated = {p.key: nominations[p.key] for p in pending if p.key in nominations}
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
            tuple(nominated.items()),
            tuple(young),
        )
        if state.dra is None and (asked == self._unanswered or self._still_unanswered(asked)):
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
                self.options.balancing(room),
                unhealthy,
                room if self.settings.max_nodes_total is not None else None,
                placed_first=booked,
                expendable_cutoff=self.settings.expendable_pods_priority_cutoff,
                nominated=nominated,
                young=young.keys(),
                created_s=None if self.settings.bypassed_scheduler_names else created,
            )
        )
        # (a loop that waited for very new pods asks again: the same pods are older at the next)
        self._unanswered = asked if reply.scale_up is None and reply.new_until is None else None
        self._room_only = reply.room_only
        self._placed = reply.placed
        if reply.new_until is not None:
            self._new_pods = reply.new_until, frozenset(reply.new_pods)
        for key, reason in reply.not_triggered:
            self.not_triggered[key] = reason
            message = f"pod didn't trigger scale-up: {reason}"
            self.events.append(ScaleEvent(now, "no-scale-up", None, (), (key,), message))
        up = reply.scale_up
        if up is None:
            return False
        self._execute(up)
        return True

    def _still_unanswered(self, asked: tuple[object, ...]) -> bool:
        """The last ask's answer stands though pods were placed since: it grew nothing, put no pod on the
        cluster's nodes and no pod-aware filter judged one (``ScaleUpReply.room_only``), all else asked is
        as it was, and no node has freed room since (``ClusterState.freed_at``): a pod that fitted no node
        fits none with less room, and the upcoming nodes and the templates are as they were."""
        last = self._unanswered
        if last is None or not self._room_only or last[1:] != asked[1:]:
            return False
        return int(self.port.state.freed_at.max(initial=-1)) < cast(int, last[0])

    def _execute(self, up: ScaleUp) -> None:
        """``ExecuteScaleUps`` (``ScaleUpExecutor.execute``); when some group grew, the scale-up that
        ``scaleDownDelayAfterAdd`` counts from."""
        if self.executor.execute(up, self.deleting):
            self.last_scale_up_s = self.clock.now

    def _provision(self) -> bool:
        """The ProvisioningRequests' part of a loop (``ProvisioningRequests.provision``), its scale-up
        executed; the listeners told when a request's conditions changed or one was deleted."""
        changed, up = self.provisioning.provision(self.clock.now, self._provision_request)
        if up is not None:
            self._execute(up)
        if changed:
            for listener in self.provisioning_listeners:
                listener()
        return up is not None or changed

    def _provision_request(self, requests: Sequence[ProvisioningRequest], chosen: str) -> ProvisionRequest:
        """``provReqOrchestrator.ScaleUp``'s ask for the ``chosen`` request: the groups as scale-up sees
        them, within the same limits."""
        now, room = self.clock.now, self.options.room()
        long_unready = self._unready().long_unready(now)
        options, backed_off, exclude = self.options.groups(room, now, self._going(), long_unready)
        return ProvisionRequest(
            now, self.port.state, self.profile, requests, chosen, options, exclude=exclude,
            backed_off=backed_off, expander=self.settings.expander, rng=self.rng,
            resources_left=self.options.resources_left(),
            nodes_left=room if self.settings.max_nodes_total is not None else None,
            expendable_cutoff=self.settings.expendable_pods_priority_cutoff,
        )  # fmt: skip

    def _unready(self) -> UnreadyNodes:
        """The nodes not Ready: as the scan under way read them, else as they are now."""
        return self._scan_unready if self._scan_unready is not None else unready_nodes(self.port)

    # -- scale-down --------------------------------------------------------------------------
    def _readiness(self) -> tuple[frozenset[str], frozenset[str]]:
        """The nodes that are not Ready (``UnreadyNodes``: their GPUs not allocatable among them), and
        those of them still starting: not Ready within ``MAX_NODE_STARTUP_S`` of registering
        (``updateReadinessStats``' ``NotStarted``, which ``GetUpcomingNodes`` counts as upcoming and
        ``RunOnce`` takes out of scale-down's candidates)."""
        unready, now = self._unready().nodes, self.clock.now
        return frozenset(unready), frozenset(n for n, t in unready.items() if now < t + MAX_NODE_STARTUP_S)

    def _candidates(self, readiness: tuple[frozenset[str], frozenset[str]] | None = None) -> list[Candidate]:
        """The nodes of autoscaled groups above their ``min`` (``PreFilteringScaleDownNodeProcessor``: a
        group's nodes, launches included, as its target size), neither starting (launched and not
        registered, or not Ready and still starting: a launch whose GPUs are not registered is not Ready,
        ``ResourceUnready``, and a candidate 15 minutes after it registered), warm nor going, in name order,
        each with whether it is Ready. The last scan's list stands while what it was made of does: each
        group's nodes, launches, warm nodes, name and ``min``, the nodes going, the nodes not Ready, and the
        nodes in the cluster (``ClusterState.membership``: a taint, a label or a cordon moves nothing
        here)."""
        going, state = self._going(), self.port.state
        readiness = self._readiness() if readiness is None else readiness  # (the scan's, read once)
        groups = [g for g in self.port.node_groups.values() if g.pool.autoscaled]
        made_of = [(g, g.name, g.pool.min) for g in groups]
        kept = self._listed
        if (
            kept is not None
            and kept.membership == state.membership
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
            # a launch registered without its GPUs (ResourceUnready) is a candidate once no longer starting
            launches = {n for n in group.launching if n not in unready}
            for name in sorted(group.nodes - launches - group.warm - going - starting):
                if name in state.index:
                    ready = name not in unready
                    size, low = len(group.nodes), group.pool.min
                    out.append(Candidate(name, group.name, size, low, ready, atomic, registered))
        sets = [(frozenset(g.nodes), frozenset(g.launching), frozenset(g.warm)) for g in groups]
        self._listed = ListedCandidates(state.membership, frozenset(going), made_of, sets, readiness, out)
        return out

    def _scale_down(self) -> bool:
        port, now, st = self.port, self.clock.now, self.port.state
        budgets = port.disruption_budgets
        going = self._going()
        # verdicts depend only on the cluster's state: unchanged since the last scan, they stand (and the
        # candidates with them, but for a group's crossing its min as it grows or shrinks)
        above_min = tuple(len(g.nodes) > g.pool.min for g in port.node_groups.values() if g.pool.autoscaled)
        going_key = tuple(sorted(going))
        bookings = self.provisioning.bookings()
        placed = tuple((pod.key, node) for pod, node in self._placed)
        long_on = long_terminating_on(st, now)  # (read once: the key, then the actuator's snapshot)
        long = tuple(sorted(a.pod.key for pods in long_on.values() for a in pods))
        readiness = self._readiness()
        # (what the removal memo does not follow, apart from the allocations and the pods)
        rest = (st.static_version, going_key, readiness, above_min, bookings, placed, long)
        key = (st.change_pos, port.pods_version(), rest)
        # ... and a node found unremovable is assessed again once its time is up, and every candidate again
        # after a scan that stopped at unneededNodesLimit (its limit is higher now)
        assessing = (
            key != self._assessed or self._cut or any(t <= now for t in self._unremovable_until.values())
        )
        self._assessed = key
        if not assessing and self._quiet_stands(key, now):
            return False
        listed = self._candidates(readiness) if assessing or self.unneeded_since else None
        if listed is not None and assessing and self._verdicts_stand(key, now, listed):
            return False
        cutoff = self.settings.expendable_pods_priority_cutoff
        until = self._unremovable_until
        reply = scale_down(
            ScaleDownRequest(
                now,
                st,
                self.profile,
                () if listed is None else self.provisioning.unbooked(listed, st, self.profile, going, cutoff),
                self.utilization,
                self.settings.scale_down_unneeded_time_s,
                self.settings.scale_down_delay_after_add_s,
                self.last_scale_up_s,
                self.unneeded_since,
                frozenset(going),
                budgets,
                disruptions_allowed(port) if budgets and assessing else {},
                frozenset(port.daemon_pod_keys()),
                port.computes_on_gpus if self.settings.gpu_aware_scale_down else None,
                assess=assessing,
                memo=self._memo,
                unready_enabled=self.settings.scale_down_unready_enabled,
                unready_time_s=self.settings.scale_down_unready_time_s,
                deletions=(
                    {g.name: len(g.nodes & self.deleting) for g in port.node_groups.values()}
                    if self.deleting
                    else {}
                ),
                unremovable_until=self._unremovable_until,
                recheck_timeout_s=self.settings.unremovable_node_recheck_timeout_s,
                max_parallelism=self.settings.max_scale_down_parallelism,
                max_drain_parallelism=self.settings.max_drain_parallelism,
                in_progress=self._in_progress(),
                unneeded_before=self.gauges.unneeded,
                update_interval_s=self._update_interval(),
                placed=self._placed,
                expendable_cutoff=cutoff,
                delay_after_delete_s=self.settings.scale_down_delay_after_delete_s,
                last_delete_s=self.last_delete_s,
                delete_options=self.delete_options,
                disabled_for_loop=self._new_pods is not None,
                created=self._created,
            )
        )
        self.unneeded_since, self._unremovable_until = reply.unneeded_since, reply.unremovable_until
        self._cut = reply.cut
        # what a scan with nothing to assess would find next, where it finds what this one did: nothing
        # removed, and no node awaiting its recheck (which that scan would count as recently unremovable)
        quiet = not reply.remove and (not assessing or not (reply.unremovable_until or reply.cut))
        self._quiet = (self._quiet_key(key), reply.cooldown, reply.ripens_at) if quiet else None
        self._not_unneeded = reply.not_unneeded if assessing else self._not_assessed_again()
        # what an assessing scan whose verdicts all stand would find again (``_verdicts_stand``)
        self._standing = None
        if (
            listed
            and assessing
            and not reply.remove
            and not reply.cut
            and not bookings
            and reply.unremovable_until == until
            and any(c.node not in until for c in listed)
            and recalls(st, self._placed)
        ):
            self._standing = StandingScaleDown(
                rest, listed, reply.unremovable_until, reply.unneeded_since, reply.cooldown, reply.ripens_at
            )
        self.gauges.unneeded = reply.unneeded_count
        if not reply.cooldown:  # countsByReason of the candidates' reasons and RemovableAt's
            reasons = [why.reason for _, why in (*self._not_unneeded, *reply.unremovable)]
            self.gauges.unremovable.update(Counter(reasons))
        if reply.remove:  # ScaleDownNodeDeleteStarted
            self.last_delete_s = now
        snapshot = (
            SnapshotPods(
                pending_on(st, self._placed),
                expendable_on(st, self.settings.expendable_pods_priority_cutoff),
                long_on,
            )
            if reply.remove
            else AS_IS
        )
        removals = []
        for c in reply.remove:
            drain = has_movable_pods(st, c.node, snapshot)  # (StartDeletionWithDrain)
            removals.append(Removal(c.node, c.group, c.atomic, drain))
            self.events.append(ScaleEvent(now, "scale-down", c.group, (c.node,)))
        self.actuator.start(removals)
        return reply.acted

    def _quiet_key(self, key: tuple[object, ...]) -> tuple[object, ...]:
        return key, self.last_scale_up_s, self.last_delete_s, self._new_pods is not None

    def _quiet_stands(self, key: tuple[object, ...], now: float) -> bool:
        """Whether this scan, with nothing to assess, gets the last scan's scale-down again (that scan had
        nothing to assess either, or found what such a scan would: ``_scale_down``): the cluster, the
        cooldowns' times and whether this loop disabled scale-down are as they were, it is in cooldown or
        out as it was, and no unneeded node has ripened since (``ScaleDownReply.ripens_at``). Then nothing
        is removed, and the unneeded nodes, the recheck times and the gauges stay as they are."""
        if self._quiet is None:
            return False
        quiet_key, cooldown, ripens_at = self._quiet
        return quiet_key == self._quiet_key(key) and self._cooldown_stands(now, cooldown, ripens_at)

    def _cooldown_stands(self, now: float, cooldown: bool, ripens_at: float) -> bool:
        """Whether a scale-down that was in ``cooldown`` or out of it, its first unneeded node ripening at
        ``ripens_at``, is so now: in cooldown or out as it was, and no unneeded node ripened since (out of
        cooldown, the reply then differs from it only in its messages' ages: none is removed)."""
        settings = self.settings
        return not ripens_at < now and cooldown == cooling(
            now,
            self._new_pods is not None,
            (self.last_scale_up_s, settings.scale_down_delay_after_add_s),
            (self.last_delete_s, settings.scale_down_delay_after_delete_s),
        )

    def _verdicts_stand(
        self,
        key: tuple[object, ...],
        now: float,
        listed: list[Candidate],
    ) -> bool:
        """Whether this scan, which has nodes to assess because pods moved, gets the last assessing scan's
        scale-down again. That scan removed nothing, stopped at no limit and found no node unremovable anew,
        and its verdicts came from the removal memo or went into it (``recalls``). They stand now where the
        memo finds that no pod moved on their nodes, nor on any node a verdict looked at
        (``RemovalMemo.holds``, as ``again`` would). With the rest of what scale-down reads as it was (the
        nodes, those going, readiness, the groups above their min, no booked capacity, the pending pods put
        on nodes, the pods long terminating), the same candidates, the same unneeded nodes and recheck times,
        none of those due, in cooldown or out as it was and no unneeded node ripe (``_cooldown_stands``),
        ``scale_down`` finds the same verdicts and makes the same reply of them (out of cooldown its
        messages' ages aside, of which the loop reads only the reasons): nothing is removed, and the loop's
        state and gauges stay as they are."""
        kept = self._standing
        if kept is None:
            return False
        until, st, settings = kept.until, self.port.state, self.settings
        if (
            key[2] != kept.rest
            or listed is not kept.candidates
            or self.unneeded_since is not kept.unneeded
            or self._unremovable_until is not until
            or any(t <= now for t in until.values())
            or not recalls(st, self._placed)
            or not self._cooldown_stands(now, kept.cooldown, kept.ripens_at)
        ):
            return False
        limit = unneeded_nodes_limit(
            settings.max_scale_down_parallelism,
            self.gauges.unneeded,
            settings.scale_down_unneeded_time_s,
            self._update_interval(),
        )
        if not self._memo.holds(st, [c for c in listed if c.node not in until], limit):
            return False
        if self._quiet is not None:  # (a scan with nothing to assess after this one finds what it would)
            self._quiet = (self._quiet_key(key), *self._quiet[1:])
        return True

    def _not_assessed_again(self) -> tuple[tuple[str, Unremovable], ...]:
        """The last scan's candidates that are not unneeded, as a scan of the unchanged cluster finds them:
        the same, but a node the removal simulation found unremovable is now recently so."""
        until = self._unremovable_until
        if not until:
            return self._not_unneeded
        return tuple(
            (name, recently_unremovable(until[name]) if name in until else why)
            for name, why in self._not_unneeded
        )

    def _in_progress(self) -> tuple[int, int]:
        """The deletions it has in progress, empty nodes and drained ones (``DeletionsInProgress``): its nodes
        not gone yet."""
        drains = len(self.draining & self.deleting)
        return len(self.deleting) - drains, drains

    def _update_interval(self) -> float:
        """The planner's smallest update interval (``minUpdateInterval``): ``ScaleDownUnneededTime`` (a
        nanosecond when 0) until the loop's second run, its period after (upstream's loop runs every
        ``scanInterval``; gpufleet skips the scans that would find nothing new). The smaller of the two: at
        the first run, with nothing unneeded before, both give the limit twice the parallelism."""
        return min(self.settings.scale_down_unneeded_time_s or 1e-9, self.settings.scan_interval_s)

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
            launched = 0
            for _ in range(count):
                if self.executor.launch(group, warm=True) is None:
                    break
                launched += 1
            if launched:  # a size increase like any other (RegisterScaleUp)
                self.executor.register_scale_up(group, launched)
                acted = True
        return acted
