"""``gpufleet scheduler``: the live driver of the engine's scheduling cycle.

Informers keep Nodes, Pods, PodGroups, Namespaces and PodDisruptionBudgets current; whenever they
change (and at least every ``RESYNC_S``) the leader runs a cycle (``cycle.run_cycle``) and makes its
decisions real:

- bindings, each pod (or a gang's members together) on a worker thread, as kube-scheduler binds
  asynchronously; a pod is *assumed* on its node from the decision until the watch shows it bound (or
  the binding fails, when it is forgotten and tried again); before binding, every member's node must
  still exist, so a gang whose node was deleted binds none of its members;
- the ``PodScheduled=False`` condition (reason ``Unschedulable``, or ``SchedulerError`` with the error's
  text when a plugin's Error status aborted the attempt) and a ``FailedScheduling`` Event when a pod's
  message changes, ``status.nominatedNodeName`` and the victims' deletion for preemption;
- on a PodGroup bound in part, an Event and its ``status`` (``phase: Scheduling``, ``scheduled``);
- ``--dry-run``: each decision logged as one JSON line, nothing written (the decided pods stay
  assumed, so each is decided once).

Events and PodGroup status have a client rate limit of their own, as kube-scheduler's event
broadcaster has its own client, and so has leader election.
SIGTERM (``stop``): no new cycle; the bindings started finish, those not started are dropped (nothing
was written for them); the Lease is given up.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpufleet.kube.pod_annotations import GPU_DEVICES
from gpufleet.live.client import LiveCluster, LiveError
from gpufleet.live.informer import Informer, wait_synced
from gpufleet.live.kinds import KINDS
from gpufleet.live.writes import RateLimiter, Writes
from gpufleet.live_scheduler.cycle import Binding, Decisions, Memory, run_cycle
from gpufleet.live_scheduler.leader import LeaderElector
from gpufleet.live_scheduler.metrics import SchedulerMetrics, serve
from gpufleet.live_scheduler.models import LivePod, Models
from gpufleet.model.pod import POD_GROUP_LABEL
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.model.scheduler_records import UNSCHEDULABLE, event_message

RESYNC_S = 30.0  # a cycle at least this often: unschedulable pods are retried (time-based plugins)
COALESCE_S = 0.02  # changes arriving together make one cycle
WAKE_S = 0.2  # how soon a wait for changes notices SIGTERM or a lost Lease
SYNC_TIMEOUT_S = 60.0
BIND_WORKERS = 16
RECORD_WORKERS = 4


_OUTPUT = threading.Lock()


def print_line(line: str, stderr: bool = False) -> None:
    """One whole line: the bind workers log at once, and ``print`` writes the newline apart."""
    stream = sys.stderr if stderr else sys.stdout
    with _OUTPUT:
        stream.write(line + "\n")
        stream.flush()


def default_identity() -> str:
    """``hostname_uuid``, as kube-scheduler names its leader-election identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass
class Options:
    config: SchedulerConfig
    dry_run: bool = False
    metrics_address: str | None = None
    identity: str = field(default_factory=default_identity)
    say: Callable[[str], None] = lambda line: print_line(line, stderr=True)
    log: Callable[[str], None] = print_line


class LiveScheduler:
    def __init__(self, connect: Callable[[], LiveCluster], options: Options) -> None:
        self.options = options
        self.config = options.config
        settings = self.config.process
        self.lock = threading.RLock()
        self.changed = threading.Event()
        self.stop = threading.Event()
        kinds = {
            "nodes": False,
            "pods": False,
            "podgroups": True,
            "namespaces": False,
            "poddisruptionbudgets": False,
        }
        self.informers = {
            name: Informer(
                connect(),
                KINDS[name],
                self._on_change,
                self.lock,
                optional=optional,
                on_relist=lambda plural: options.say(f"re-listed {plural} after 410 Gone"),
                on_error=options.say,
            )
            for name, optional in kinds.items()
        }
        limiter = RateLimiter(settings.qps, settings.burst)
        self.writes = Writes(connect(), limiter, identity=options.identity)
        # Events and PodGroup status (bookkeeping, which scheduler-plugins leaves to its PodGroup
        # controller) have a client of their own, as kube-scheduler's event broadcaster has
        self.event_writes = Writes(
            connect(), RateLimiter(settings.qps, settings.burst), identity=options.identity
        )
        # leader election has a client of its own, as kube-scheduler's (a burst of bindings must not
        # delay a renewal past the renew deadline)
        self.elector = (
            LeaderElector(
                Writes(connect(), RateLimiter(settings.qps, settings.burst), identity=options.identity),
                settings,
                options.identity,
            )
            if settings.leader_elect and not options.dry_run
            else None
        )
        self.metrics = SchedulerMetrics()
        self.models = Models()
        self.memory = Memory()
        self.assumed: dict[str, str] = {}  # pod key -> node, bound (or being bound) by us
        self.reported: dict[str, str] = {}  # pod or PodGroup key -> the last message written
        self.first_seen: dict[str, float] = {}
        self.tries: dict[str, int] = {}
        self.executor = ThreadPoolExecutor(max_workers=BIND_WORKERS, thread_name_prefix="bind")
        self.recorder = ThreadPoolExecutor(max_workers=RECORD_WORKERS, thread_name_prefix="record")
        self.server: Any = None

    # -- life cycle -----------------------------------------------------------------------------
    def _on_change(self, _kind: str) -> None:
        self.changed.set()

    def ready(self) -> bool:
        return all(i.synced.is_set() for i in self.informers.values())

    def leading(self) -> bool:
        return self.elector is None or self.elector.leading.is_set()

    def run(self) -> int:
        """Until ``stop`` is set (0), or the Lease is lost (1)."""
        if self.options.metrics_address:
            self.server = serve(self.options.metrics_address, self.metrics, self.ready)
            self.options.say(f"serving /metrics, /healthz and /readyz on port {self.server.server_port}")
        for informer in self.informers.values():
            informer.start()
        late = wait_synced(list(self.informers.values()), SYNC_TIMEOUT_S)
        if late:
            self.options.say("error: the informers did not sync: " + "; ".join(late))
            return 1
        if self.elector is not None:
            threading.Thread(target=self.elector.run, args=(self.stop,), name="leader", daemon=True).start()
            process = self.config.process
            lease = f"{process.resource_namespace}/{process.resource_name}"
            self.options.say(f"campaigning for Lease {lease} as {self.options.identity}")
        status = self._loop()
        self._shutdown()
        return status

    def _loop(self) -> int:
        was_leading = False
        while not self.stop.is_set():
            if self.elector is not None and self.elector.lost.is_set():
                self.options.say("error: leader election lost: stopped scheduling")
                return 1
            if not self.leading():
                self.metrics.leader.set(0)
                was_leading = False
                self.stop.wait(0.2)
                continue
            if not was_leading:
                was_leading = True
                self.metrics.leader.set(1)
                self.options.say("leading: scheduling")
                self.changed.set()
            self._wait_for_change()
            if self.stop.is_set():
                break
            if self.elector is not None and not self.leading():
                continue  # the Lease was lost while waiting: no cycle
            time.sleep(COALESCE_S)
            self.changed.clear()
            self.cycle()
        return 0

    def _wait_for_change(self) -> None:
        """Until a change, at most ``RESYNC_S``; a SIGTERM (``stop``) or the Lease lost ends the wait
        within ``WAKE_S``."""
        deadline = time.monotonic() + RESYNC_S
        while not self.changed.wait(WAKE_S) and time.monotonic() < deadline:
            if self.stop.is_set() or (self.elector is not None and not self.leading()):
                return

    def _shutdown(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.recorder.shutdown(wait=True)  # the Events and statuses of what was done are written
        if self.elector is not None:
            self.elector.release()
        for informer in self.informers.values():
            informer.stop()
        if self.server is not None:
            self.server.shutdown()

    # -- one cycle ------------------------------------------------------------------------------
    def cycle(self) -> Decisions:
        with self.lock:
            stores = {name: dict(i.store) for name, i in self.informers.items()}
        models = self.models
        nodes = [n for key, obj in stores["nodes"].items() if (n := models.node(key, obj)) is not None]
        pods = {key: models.pod(key, obj) for key, obj in stores["pods"].items()}
        groups = {
            key: g for key, obj in stores["podgroups"].items() if (g := models.group(key, obj)) is not None
        }
        labels = {
            name: dict((obj.get("metadata") or {}).get("labels") or {})
            for name, obj in stores["namespaces"].items()
        }
        budgets = [
            b for key, obj in sorted(stores["poddisruptionbudgets"].items()) if (b := models.budget(key, obj))
        ]
        models.prune({kind: set(store) for kind, store in stores.items()})
        with self.lock:
            for key in [k for k in self.assumed if k not in pods or pods[k].node is not None]:
                if not self.options.dry_run or key not in pods:
                    del self.assumed[key]
            assumed = dict(self.assumed)
        now = time.monotonic()
        decisions = run_cycle(self.config, nodes, pods, groups, labels, budgets, assumed, now, self.memory)
        self._account(decisions, now)
        for binding in decisions.bindings:
            self._bind(binding)
        for failure in decisions.failures:
            self._unschedulable(failure.pod, failure.message, failure.nominated, failure.reason)
        for preemption in decisions.preemptions:
            self._preempt(preemption.preemptor, preemption.node, preemption.victims)
        for gang in decisions.gangs:
            self._partly_bound(gang.key, gang.bound, gang.min_member, gang.members, gang.message)
        self._forget(pods)
        return decisions

    def _account(self, decisions: Decisions, now: float) -> None:
        m = self.metrics
        for attempt in decisions.attempts:
            key = attempt.pod.pod.key
            with self.lock:
                self.first_seen.setdefault(key, now)
                self.tries[key] = self.tries.get(key, 0) + 1
            m.attempts.labels(result=attempt.result, profile=attempt.profile).inc()
            m.attempt_duration.labels(result=attempt.result, profile=attempt.profile).observe(attempt.seconds)
        m.pending.labels(queue="unschedulable").set(len(decisions.failures))
        m.pending.labels(queue="active").set(len(decisions.waiting))
        m.pending.labels(queue="gated").set(decisions.gated)
        m.gangs_waiting.set(decisions.gangs_waiting)
        m.gangs_partial.set(len(decisions.gangs))
        m.fragmented.set(decisions.fragmented_gpus)

    def _forget(self, pods: dict[str, LivePod]) -> None:
        with self.lock:  # the binding threads pop them too
            for memo in (self.first_seen, self.tries):
                for key in [k for k in memo if k not in pods]:
                    del memo[key]

    # -- bindings -------------------------------------------------------------------------------
    def _bind(self, binding: Binding) -> None:
        with self.lock:
            for placed in binding.members:
                self.assumed[placed.pod.pod.key] = placed.node
        if self.options.dry_run:
            for placed in binding.members:
                self._log("bind", placed.pod, node=placed.node, gang=binding.gang)
            return
        self.executor.submit(self._bind_guarded, binding)

    def _bind_guarded(self, binding: Binding) -> None:
        """``_bind_all``; anything unforeseen drops the binding's assumptions (its pods are tried again),
        said, instead of vanishing in the worker thread."""
        try:
            self._bind_all(binding)
        except Exception as exc:
            self.options.say(f"error: binding {', '.join(p.pod.pod.key for p in binding.members)}: {exc!r}")
            self._drop(binding, f"error: {exc!r}")

    def _bind_all(self, binding: Binding) -> None:
        members = binding.members
        with self.lock:
            missing = sorted({p.node for p in members if p.node not in self.informers["nodes"].store})
        if missing or not self.leading():
            why = f"node {', '.join(missing)} is gone" if missing else "this replica no longer leads"
            self._drop(binding, why)
            return
        bound: set[str] = set()
        for placed in members:
            pod = placed.pod.pod
            try:
                if pod.gpu_share is not None and placed.devices:
                    indices = ",".join(str(u.gpu) for u in placed.devices)
                    self.writes.annotate(pod.namespace, pod.name, {GPU_DEVICES: indices})
                result = self.writes.bind(
                    pod.namespace,
                    pod.name,
                    placed.pod.uid,
                    placed.node,
                    partial(self._node_exists, placed.node),
                )
            except LiveError as exc:
                result = "error"
                self.options.say(f"binding {pod.key} to {placed.node}: {exc}")
            self.metrics.bindings.labels(result=result).inc()
            if result != "bound":
                with self.lock:
                    self.assumed.pop(pod.key, None)
                if result == "node gone":  # deleted while the binding waited for the rate limit
                    why = f"node {placed.node} is gone"
                    self._log("not bound", placed.pod, node=placed.node, reason=why, gang=binding.gang)
                else:
                    self._log(f"binding {result}", placed.pod, node=placed.node, gang=binding.gang)
                self.changed.set()  # tried again in the next cycle
                continue
            self._log("bound", placed.pod, node=placed.node, gang=binding.gang)
            bound.add(pod.key)
            with self.lock:
                started = self.first_seen.pop(pod.key, None)
                tries = self.tries.pop(pod.key, 1)
            if started is not None:
                self.metrics.sli.labels(attempts=str(tries)).observe(time.monotonic() - started)
            self._event(
                placed.pod, "Scheduled", f"Successfully assigned {pod.key} to {placed.node}", "Normal"
            )
        if binding.gang is not None and len(bound) == len(members):
            self._group_status(
                binding.gang, {"phase": "Scheduled", "scheduled": self._gang_bound(binding.gang, bound)}
            )

    def _gang_bound(self, gang: str, just_bound: set[str]) -> int:
        """The gang's members bound: those the watch shows bound, and those just bound."""
        namespace, name = gang.split("/", 1)
        with self.lock:
            shown = {
                key
                for key, obj in self.informers["pods"].store.items()
                if (obj.get("spec") or {}).get("nodeName")
                and (obj.get("metadata") or {}).get("namespace") == namespace
                and ((obj.get("metadata") or {}).get("labels") or {}).get(POD_GROUP_LABEL) == name
            }
        return len(shown | just_bound)

    def _node_exists(self, node: str) -> bool:
        with self.lock:
            return node in self.informers["nodes"].store

    def _drop(self, binding: Binding, why: str) -> None:
        with self.lock:
            for placed in binding.members:
                self.assumed.pop(placed.pod.pod.key, None)
        for placed in binding.members:
            self._log("not bound", placed.pod, node=placed.node, reason=why, gang=binding.gang)
        self.changed.set()

    # -- what the API is told -------------------------------------------------------------------
    def _unschedulable(
        self, live: LivePod, message: str, nominated: str | None, reason: str = UNSCHEDULABLE
    ) -> None:
        """``handleSchedulingFailure``: the PodScheduled condition (``reason``: ``Unschedulable``, or
        ``SchedulerError`` after a plugin's Error status) and the nomination (``""``: cleared) when either
        changes, and a ``FailedScheduling`` Event with the message (``truncateMessage``: 1,024 bytes)."""
        pod = live.pod
        if live.condition == (reason, message) and (
            nominated is None or live.nominated == (nominated or None)
        ):
            return
        if self.reported.get(pod.key) == message and self.options.dry_run:
            return
        self.reported[pod.key] = message
        fields: dict[str, object] = {"message": message, "nominated": nominated}
        if reason != UNSCHEDULABLE:
            fields["reason"] = reason
        self._log("unschedulable", live, **fields)
        if self.options.dry_run:
            return
        try:
            self.writes.unschedulable(pod.namespace, pod.name, message, nominated, reason)
        except LiveError as exc:
            self.options.say(f"status of {pod.key}: {exc}")
        self._event(live, "FailedScheduling", event_message(message))

    def _preempt(self, preemptor: LivePod, node: str, victims: tuple[LivePod, ...]) -> None:
        """``prepareCandidate``: each victim gets the ``DisruptionTarget`` condition, then is deleted with
        its grace period, and a ``Preempted`` Event (``preemption.go``'s messages)."""
        reason = f"{preemptor.pod.scheduler_name}: preempting to accommodate a higher priority pod"
        for victim in victims:
            if victim.deleting:
                continue
            self._log("preempt", victim, node=node, by=preemptor.pod.key)
            if self.options.dry_run:
                continue
            pod = victim.pod
            try:
                self.writes.disruption_target(pod.namespace, pod.name, reason)
                if self.writes.delete_pod(pod.namespace, pod.name, victim.uid):
                    message = f"Preempted by pod {preemptor.uid} on node {node}"
                    self._event(victim, "Preempted", message, "Normal")
            except LiveError as exc:
                self.options.say(f"preempting {pod.key}: {exc}")

    def _partly_bound(self, key: str, bound: int, min_member: int, members: int, message: str) -> None:
        text = (
            f"PodGroup {key} is bound in part: {bound} of its {members} pods are bound and minMember is "
            f"{min_member}; the others cannot be placed: {message}"
        )
        if self.reported.get(key) == text:
            return
        self.reported[key] = text
        self.options.log(json.dumps({"action": "gang partly bound", "podgroup": key, "message": text}))
        if self.options.dry_run:
            return
        namespace, name = key.split("/", 1)
        with self.lock:
            obj = self.informers["podgroups"].store.get(key)
        uid = str((obj or {}).get("metadata", {}).get("uid") or "")
        involved = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "namespace": namespace,
            "name": name,
            "uid": uid,
        }
        self._record(
            f"event on PodGroup {key}", partial(self.event_writes.event, involved, "PartlyBound", text)
        )
        self._group_status(key, {"phase": "Scheduling", "scheduled": bound})

    def _group_status(self, key: str, status: dict[str, Any]) -> None:
        with self.lock:
            if key not in self.informers["podgroups"].store:
                return
        namespace, name = key.split("/", 1)
        self._record(
            f"status of PodGroup {key}", partial(self.event_writes.pod_group_status, namespace, name, status)
        )

    def _event(self, live: LivePod, reason: str, message: str, kind: str = "Warning") -> None:
        pod = live.pod
        involved = {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": pod.namespace,
            "name": pod.name,
            "uid": live.uid,
        }
        self._record(f"event on {pod.key}", partial(self.event_writes.event, involved, reason, message, kind))

    def _record(self, what: str, write: Callable[[], None]) -> None:
        """An Event or a PodGroup status written apart from the bindings (kube-scheduler's event
        broadcaster is asynchronous too): a binding never waits for its Event."""

        def written() -> None:
            try:
                write()
            except LiveError as exc:
                self.options.say(f"{what}: {exc}")

        self.recorder.submit(written)

    def _log(self, action: str, live: LivePod, **fields: object) -> None:
        record = {"action": action, "pod": live.pod.key, **{k: v for k, v in fields.items() if v is not None}}
        self.options.log(json.dumps(record))
