"""Backfill (gpufleet's, after Slurm's ``sched/backfill``): a reservation for the head of the queue.

Coscheduling alone can starve a large gang: it waits for whole nodes to be free at the same
time, and a stream of small jobs keeps taking them (seed 004). Enabled in a profile (``multiPoint:
{enabled: [{name: Backfill}]}``, next to Coscheduling), the scheduler keeps one reservation, as
Slurm's ``_attempt_backfill`` (``src/plugins/sched/backfill/backfill.c``) does for the top job
with ``bf_max_job_test=1``:

- the first job in queue order (priority, then arrival; a gang is one job with all its members)
  that cannot start gets a reservation (``scheduling.reservation.plan``): the time the walk of
  running pods' declared ends (``gpufleet.io/time-limit``) frees room for all of it, and the nodes
  it would use there. A job ahead of it that fails later takes the reservation over.
- This filter then lets another pod of a Backfill profile onto a reserved node only if the pod
  fits beside what the job will need there (the job's need, less what pods planned to end by the
  reservation's start release), or if its own declared limit ends by the reservation's start
  (Slurm's backfill condition). A pod without a time limit never ends by it.
- The reservation is recomputed whenever the cluster changes (a pod ended, earlier or later than
  declared; a node came or went), so a pod that overruns its limit moves the start to the new
  earliest time (Slurm would kill it at its limit; gpufleet lets it run and keeps the nodes
  reserved, so the job is not starved); it is dropped when its job has started or is gone.
- The job's pending pods say so after kube-scheduler's message:
  ``reserved node-a, node-b from 3600s (backfill)``.

Pods of profiles without Backfill (and of other schedulers) do not see the reservation. The
what-if counts resources only (requests against allocatable on nodes the job's static filters
admit); devices, topology and claims are checked when the job is really scheduled.

Queueing hints (gpufleet's, conservative): any node event and a pod deleted move the pods it rejected
(the reservation is planned again); a pod added only when it is of the reserved job (the reservation
goes once its whole job is placed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.events import (
    POD_DELETED,
    ActionType,
    ClusterEvent,
    EventPod,
    EventWithHint,
    QueueingHint,
    Resource,
    as_new,
)
from gpufleet.scheduling.framework import DynamicFilter, PodContext, StaticFilter
from gpufleet.scheduling.gangs import GangView, group_key
from gpufleet.scheduling.registry import register
from gpufleet.scheduling.reservation import Reservation, Running, plan, planned_end


def seconds(t: float) -> str:
    """``3600`` for 3600.0, ``12.5`` for 12.5: a time as the messages print it."""
    return f"{t:.3f}".rstrip("0").rstrip(".")


def hold(state: ClusterState, r: Reservation, node: int) -> IntArray:
    """What must stay free on a reserved node now: the job's need there, less what the pods planned to
    end by the reservation's start will have released."""
    released = np.zeros(state.requested.shape[1], dtype=np.int64)
    for a in state.pods_on[node].values():
        if planned_end(a.start_s, a.pod.behavior.time_limit_s) <= r.start_s:
            released += state.pod_vectors(a.pod)[0]
    need = np.zeros_like(released)
    need[: len(r.need[node])] = r.need[node]
    held: IntArray = np.maximum(need - released, 0)
    return held


@register
class Backfill(DynamicFilter):
    name = "Backfill"

    def __init__(self) -> None:
        self.reservation: Reservation | None = None
        #: the pod being scheduled may ignore the reservation (its job holds it, or it ends first)
        self.exempt = True

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (
            EventWithHint(ClusterEvent(Resource.NODE, ActionType.ALL)),
            POD_DELETED,
            EventWithHint(ClusterEvent(Resource.POD, ActionType.ADD), self.after_pod_add),
        )

    def after_pod_add(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """A pod of the reserved job placed may end the reservation."""
        _, added = as_new(EventPod, old, new)
        r = self.reservation
        job = group_key(added.pod) or added.pod.key
        return QueueingHint.QUEUE if r is None or job == r.job else QueueingHint.SKIP

    def _blocking(self, state: ClusterState) -> dict[int, IntArray]:
        r = self.reservation
        if r is None or self.exempt:
            return {}
        return {node: hold(state, r, node) for node in r.nodes if state.active[node]}

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        out = np.ones(len(idx), dtype=bool)
        for node, held in self._blocking(ctx.state).items():
            for k in np.flatnonzero(idx == node):
                out[k] = self._fits(ctx, ctx.state.alloc[node] - ctx.state.requested[node] - held)
        return out

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        held = self._blocking(ctx.state).get(node)
        if held is None:
            return True
        alloc, requested, _ = row
        return self._fits(ctx, np.array(alloc, dtype=np.int64) - np.array(requested) - held)

    @staticmethod
    def _fits(ctx: PodContext, free: IntArray) -> bool:
        req = ctx.req
        return bool(((free >= req) | (req == 0)).all())

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        r = self.reservation
        if r is None:
            return []
        return [
            (f"node(s) reserved for {r.job} from {seconds(r.start_s)}s (Backfill)", ~self.passes(ctx, idx))
        ]


@dataclass
class Backfiller:
    """One scheduler's reservation: which job holds it, keeping it current, and telling the plugins."""

    state: ClusterState
    gangs: GangView
    plugins: list[Backfill]
    #: a pod's profile's static filters (which nodes it may use at all)
    static_filters: Callable[[Pod], Sequence[StaticFilter]]
    reservation: Reservation | None = None
    holder: Pod | None = None  # a pod of the job holding the reservation
    rank: tuple[object, ...] = ()  # that job's place in the queue
    stale: bool = False
    _eligible: dict[tuple[object, ...], BoolArray] = field(default_factory=dict)

    def job(self, pod: Pod) -> tuple[str, list[Pod]]:
        """The job a pod belongs to and its pods: a gang's members, or the pod alone."""
        group = self.gangs.group_of(pod)
        if group is None:
            return pod.key, [pod]
        return group.key, [self.gangs.pods[k] for k in sorted(self.gangs.members.get(group.key, ()))]

    def rank_of(self, pod: Pod, arrival_s: float) -> tuple[object, ...]:
        """Queue order of jobs: priority, then arrival (a gang's PodGroup creation), then name."""
        group = self.gangs.group_of(pod)
        if group is None:
            return (-pod.priority, arrival_s, pod.key)
        return (-pod.priority, group.created.submit_at_s, group.key)

    def prepare(self, pod: Pod, now: float) -> bool:
        """Before an attempt: whether ``pod`` may ignore the reservation (told to the plugins)."""
        r = self.reservation
        limit = pod.behavior.time_limit_s
        exempt = r is None or self.job(pod)[0] == r.job or (limit is not None and now + limit <= r.start_s)
        for plugin in self.plugins:
            plugin.exempt = exempt
        return exempt

    def failed(self, pod: Pod, arrival_s: float, now: float) -> None:
        """After a failed attempt: the pod's job takes the reservation if it is the head."""
        job, pods = self.job(pod)
        group = self.gangs.group_of(pod)
        if group is not None and len(pods) < group.min_member:
            return  # Coscheduling's PreFilter waits for the members to exist
        rank = self.rank_of(pod, arrival_s)
        r = self.reservation
        # the holder is planned again after a change, or when it failed at its own start (if it
        # fits without waiting for any pod, it failed for something else and lets the nodes go)
        if r is None or (r.job == job and (self.stale or r.start_s <= now)) or rank < self.rank:
            new = self._plan(pods, now, reserve_now=False)
            if new is not None:
                self._set(new, pod, rank)
            elif r is not None and r.job == job:
                self._set(None, None, ())

    def note(self, pod: Pod) -> str:
        """``reserved node-a, node-b from 3600s (backfill)`` for a pod of the reserved job, else empty."""
        r = self.reservation
        if r is None or self.job(pod)[0] != r.job:
            return ""
        names = ", ".join(self.state.nodes[i].name for i in r.nodes)
        return f"reserved {names} from {seconds(r.start_s)}s (backfill)"

    def placed(self, pod: Pod) -> None:
        """A pod was assigned: the reservation goes once every pod of its job is."""
        r = self.reservation
        if r is not None and self.job(pod)[0] == r.job and not self._pending(self.job(pod)[1]):
            self._set(None, None, ())

    def forget(self, pod_key: str) -> None:
        """A pod was deleted: a reservation held for it alone goes."""
        if self.reservation is not None and self.reservation.job == pod_key:
            self._set(None, None, ())

    def refresh(self, now: float) -> None:
        """Before a pass, after the cluster changed: the holder's reservation, recomputed. Its job
        failed for want of resources, so it keeps the nodes even when they are free now (until its
        pods, perhaps in backoff, are tried again)."""
        if self.holder is None or not self.stale:
            return
        pods = self.job(self.holder)[1]
        self._set(self._plan(pods, now, reserve_now=True), self.holder, self.rank)

    def _pending(self, pods: list[Pod]) -> list[Pod]:
        return [p for p in pods if p.key not in self.state.assignments]

    def _plan(self, pods: list[Pod], now: float, reserve_now: bool) -> Reservation | None:
        state = self.state
        pending = self._pending(pods)
        if not pending:
            return None
        fit_column = state.resource_column(GPU)  # before the vectors: all of one width
        running = [
            Running(a.node, state.pod_vectors(a.pod)[0], planned_end(a.start_s, a.pod.behavior.time_limit_s))
            for _, a in sorted(state.assignments.items())
        ]
        members = [state.pod_vectors(p)[0] for p in pending]
        eligible = [self._eligible_for(p) for p in pending]
        job = self.job(pending[0])[0]
        return plan(
            job, state.alloc, state.requested, running, members, eligible, now, fit_column, reserve_now
        )

    def _eligible_for(self, pod: Pod) -> BoolArray:
        """Active nodes the pod's static filters admit (memoised per shape and node set)."""
        key = (pod.scheduler_name, pod.shape(), self.state.static_version)
        mask = self._eligible.get(key)
        if mask is None:
            state = self.state
            filters = self.static_filters(pod)
            mask = state.active.copy()
            for i in state.active_indices():
                mask[i] = all(f.reject(pod, state.nodes[i]) is None for f in filters)
            if len(self._eligible) > 64:
                self._eligible.clear()
            self._eligible[key] = mask
        return mask

    def _set(self, new: Reservation | None, holder: Pod | None, rank: tuple[object, ...]) -> None:
        old = self.reservation
        self.stale = False
        self.holder, self.rank = (holder, rank) if new is not None else (None, ())
        if _same(old, new):
            return
        self.reservation = new
        for plugin in self.plugins:
            plugin.reservation = new
        # the shape caches re-evaluate the reserved nodes (old and new) for every pod shape
        for node in sorted({*(old.nodes if old else ()), *(new.nodes if new else ())}):
            self.state.touched(node)


def _same(a: Reservation | None, b: Reservation | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.job, a.start_s, a.members) == (b.job, b.start_s, b.members)
