"""The real side of a fidelity case: its objects created on the test control plane, its pods one at
a time, each decided by the real kube-scheduler before the next is created.

For every pod the run records what kube-scheduler did with it (``RealStep``): the node it was bound
to, or the message of its first ``FailedScheduling`` Event and of its ``PodScheduled`` condition,
the node preemption nominated and the pods preemption deleted, and the cluster as the pod found it
(every bound pod, its node and its start time), so that gpufleet can decide the same pod on the same
state. After the last pod the run records where every pod ended (``RealRun.final``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lightkube.types import on_error_retry

from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane

#: how long a step may take to be decided or to settle: generous, as only a step that fails waits it out
#: (a generated case once took over 20 s to settle on two cores loaded by the rest of the suite)
DECIDE_TIMEOUT_S = 60.0
#: after a deletion, how long pending pods may take to be tried again (an idle queue pops them at once
#: from backoff: SchedulerPopFromBackoffQ, on since 1.33)
QUIET_AFTER_DELETION_S = 1.0
#: how long a nominated pod may take to be bound once its victims are gone (its backoff is 1 s)
NOMINATED_BIND_S = 6.0
POLL_S = 0.01
#: how long a FailedScheduling Event may take to arrive after the PodScheduled condition (the event
#: broadcaster sends it asynchronously; on a loaded machine it can lag)
EVENT_WAIT_S = 5.0
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
#: how long to look at a pod no scheduler serves, in case something decides it after all
UNSERVED_LOOK_S = 0.1


class RealRunError(RuntimeError):
    """The control plane did not do what a step needs (an object refused, a pod never decided)."""


class RealRunTimeout(RealRunError):
    """The control plane did not get where a step waits for in ``DECIDE_TIMEOUT_S`` (a pod not decided,
    the cluster not settled, a status not caught up): on a loaded machine a component can stall that
    long, so the case is worth running again (``run._run_real_fresh``)."""


@dataclass(frozen=True)
class Bound:
    node: str
    start_s: float  # status.startTime (seconds since the epoch): DefaultPreemption's tie-breaks use it


@dataclass
class RealStep:
    pod: str  # namespace/name
    before: dict[str, Bound]  # the bound pods the pod found when it was created
    budgets: dict[str, int]  # each PodDisruptionBudget's status.disruptionsAllowed then
    node: str | None = None  # where it is bound once the step settled
    bound_first: bool = False  # bound without a failed attempt
    event_message: str | None = None  # the first FailedScheduling Event
    condition_message: str | None = None  # PodScheduled=False's message at the first failure
    condition_reason: str | None = None
    nominated: str | None = None  # status.nominatedNodeName after the first failure
    preempted: tuple[str, ...] = ()  # pods deleted while the step settled


@dataclass
class FinalPod:
    node: str | None
    condition_message: str | None
    event_message: str | None  # the latest FailedScheduling Event


@dataclass
class RealRun:
    steps: list[RealStep] = field(default_factory=list)
    final: dict[str, FinalPod] = field(default_factory=dict)
    seconds: float = 0.0


_UNTOLERATED = re.compile(r"(\d+) node\(s\) had untolerated taint")


def decided_on_stale_nodes(nodes: list[dict[str, Any]], run: RealRun) -> bool:
    """Whether kube-scheduler decided a pod of the run on nodes older than the API server's: a
    FailedScheduling message counts more nodes with untolerated taints than the case has nodes with taints
    (or ``unschedulable``). The one taint a case does not write is the ``node.kubernetes.io/not-ready`` that
    the API server gives every new node (the NodeTaint admission plugin) and the node lifecycle controller
    removes once it is Ready: ``RealCluster.nodes`` waits for that in the API, but kube-scheduler's node
    informer may still hold it when a pod's own event arrives (the two informers keep no order between
    them), most often on a loaded machine."""
    tainted = sum(
        1 for n in nodes if (n.get("spec") or {}).get("taints") or (n.get("spec") or {}).get("unschedulable")
    )
    messages = [m for s in run.steps for m in (s.event_message, s.condition_message) if m]
    messages += [m for f in run.final.values() for m in (f.event_message, f.condition_message) if m]
    return any(int(count) > tainted for m in messages for count in _UNTOLERATED.findall(m))


def still_moving(pods: dict[str, Any], key: str, nominated_may_bind: bool) -> list[str]:
    """What keeps the cluster from having settled after pod ``key``'s step (empty: nothing): pods
    being deleted, bound pods kwok has not started (no ``status.startTime``), and, while
    ``nominated_may_bind``, the step's pod nominated but not bound."""
    moving = []
    terminating = sorted(k for k, p in pods.items() if p.metadata.deletionTimestamp is not None)
    if terminating:
        moving.append(f"pods being deleted: {', '.join(terminating)}")
    starting = sorted(
        k for k, p in pods.items() if p.spec.nodeName and (p.status is None or p.status.startTime is None)
    )
    if starting:
        moving.append(f"bound pods not started: {', '.join(starting)}")
    pod = pods.get(key)
    if (
        nominated_may_bind
        and pod is not None
        and not pod.spec.nodeName
        and pod.status is not None
        and pod.status.nominatedNodeName
    ):
        moving.append(f"{key} nominated to {pod.status.nominatedNodeName}, not bound")
    return moving


def _time(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def _key(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A ``metav1.LabelSelector`` (as a dict): an empty one selects everything, a missing one nothing."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        present = key in labels
        if (
            (op == "In" and not (present and labels[key] in values))
            or (op == "NotIn" and present and labels[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def _running(pod: Any) -> bool:
    return bool(pod.status and pod.status.phase == "Running" and pod.metadata.deletionTimestamp is None)


def _scheduled_condition(pod: Any) -> Any:
    for c in (pod.status.conditions or []) if pod.status else []:
        if c.type == "PodScheduled":
            return c
    return None


def failed_scheduling_by_pod(events: Iterable[Any]) -> dict[str, list[str]]:
    """The FailedScheduling messages among ``events``, oldest first, by the UID of their object."""
    found = sorted(
        (e for e in events if e.reason == "FailedScheduling"),
        key=lambda e: (
            _time(e.eventTime or e.firstTimestamp or e.metadata.creationTimestamp),
            e.metadata.name,
        ),
    )
    out: dict[str, list[str]] = {}
    for e in found:
        out.setdefault(e.involvedObject.uid, []).append(e.message or "")
    return out


class RealCluster:
    """Runs fidelity cases on one control plane, cleaning it between them."""

    def __init__(self, control_plane: ControlPlane) -> None:
        from lightkube.resources.core_v1 import Event, Namespace, Node, Pod
        from lightkube.resources.policy_v1 import PodDisruptionBudget

        self._Budget = PodDisruptionBudget
        self.cp = control_plane
        self.client = control_plane.client()
        self._Pod, self._Node, self._Event, self._Namespace = Pod, Node, Event, Namespace
        self._namespaces: set[str] = {"default"}  # those that exist
        self._used: set[str] = {"default"}  # those the case created objects in (node Events go to default)
        self._created: list[Any] = []  # objects to delete after the case (cluster-scoped ones included)
        self.with_budgets = False  # the case has PodDisruptionBudgets (whose status each step waits for)

    # -- set-up and clean-up -----------------------------------------------------------------
    def scheduler(self, config: dict[str, Any] | None) -> None:
        """kube-scheduler with this configuration (restarted only when it changes)."""
        if config != self.cp.scheduler_config:
            self.cp.restart_scheduler(config)

    def namespace(self, name: str) -> None:
        self._used.add(name)
        if name in self._namespaces:
            return
        from lightkube import ApiError
        from lightkube.models.meta_v1 import ObjectMeta

        try:
            self.client.create(self._Namespace(metadata=ObjectMeta(name=name)))
        except ApiError as exc:
            if exc.status.code != 409:
                raise
        deadline = time.monotonic() + DECIDE_TIMEOUT_S
        while self.cp.get(f"/api/v1/namespaces/{name}/serviceaccounts/default") is None:
            if time.monotonic() > deadline:
                raise RealRunTimeout(f"namespace {name}: no default service account")
            time.sleep(0.05)
        self._namespaces.add(name)

    def create(self, manifest: dict[str, Any]) -> Any:
        from lightkube import ApiError, codecs

        obj = codecs.from_dict(manifest)
        namespace = manifest.get("metadata", {}).get("namespace")
        if namespace:
            self.namespace(namespace)
        try:
            created = self.client.create(obj)
        except ApiError as exc:
            label = f"{manifest.get('kind')}/{manifest.get('metadata', {}).get('name')}"
            raise RealRunError(f"{label}: the API server refused it: {exc.status.message}") from exc
        self._created.append(created)
        self.with_budgets |= manifest.get("kind") == "PodDisruptionBudget"
        return created

    def nodes(self, manifests: list[dict[str, Any]]) -> None:
        """Create the Nodes (kwok plays their kubelets) and wait until each is Ready with exactly its
        own taints (the node lifecycle controller's not-ready taint gone)."""
        wanted: dict[str, list[tuple[str, str, str]]] = {}
        for m in manifests:
            m = {**m, "metadata": {**m["metadata"]}}
            m["metadata"]["annotations"] = {
                **m["metadata"].get("annotations", {}),
                KWOK_NODE_ANNOTATION: "fake",
            }
            self.create(m)
            taints = {
                (t["key"], t.get("value") or "", t["effect"]) for t in m.get("spec", {}).get("taints", [])
            }
            if m.get("spec", {}).get(
                "unschedulable"
            ):  # the node lifecycle controller's TaintNodesByCondition
                taints.add((UNSCHEDULABLE_TAINT, "", "NoSchedule"))
            wanted[m["metadata"]["name"]] = sorted(taints)
        deadline = time.monotonic() + DECIDE_TIMEOUT_S
        while True:
            ready = {}
            for node in self.client.list(self._Node):
                conditions = {c.type: c.status for c in (node.status.conditions or [])} if node.status else {}
                have = sorted((t.key, t.value or "", t.effect) for t in (node.spec.taints or []))
                ready[node.metadata.name] = conditions.get("Ready") == "True" and have == wanted.get(
                    node.metadata.name
                )
            if all(ready.get(name) for name in wanted):
                return
            if time.monotonic() > deadline:
                late = sorted(n for n in wanted if not ready.get(n))
                raise RealRunTimeout(f"nodes not Ready with their own taints: {', '.join(late)}")
            time.sleep(POLL_S * 2)

    def reset(self) -> None:
        """Delete every pod (at once), its Events, every Node, and what the case created; wait until
        they are gone."""
        for ns in sorted(self._used):
            self.client.deletecollection(self._Pod, namespace=ns, grace_period=0)
            self.client.deletecollection(self._Event, namespace=ns)  # listing them filters them all
        for obj in reversed(self._created):
            if type(obj).__name__ in ("Pod", "Node"):
                continue
            self._delete(obj)
        self.client.deletecollection(self._Node)
        self._created.clear()
        self._used = {"default"}
        self.with_budgets = False
        deadline = time.monotonic() + DECIDE_TIMEOUT_S
        while list(self.client.list(self._Pod, namespace="*")) or list(self.client.list(self._Node)):
            if time.monotonic() > deadline:
                raise RealRunTimeout("pods or nodes of the previous case are still there")
            time.sleep(POLL_S * 2)

    def _delete(self, obj: Any) -> None:
        from lightkube import ApiError

        try:
            self.client.delete(type(obj), obj.metadata.name, namespace=obj.metadata.namespace, grace_period=0)
        except ApiError as exc:
            if exc.status.code != 404:
                raise

    # -- reading the cluster -----------------------------------------------------------------
    def pods(self) -> dict[str, Any]:
        return {_key(p): p for p in self.client.list(self._Pod, namespace="*")}

    def bound(self, pods: dict[str, Any]) -> dict[str, Bound]:
        return {
            k: Bound(p.spec.nodeName, _time(p.status.startTime if p.status else None))
            for k, p in sorted(pods.items())
            if p.spec.nodeName and p.metadata.deletionTimestamp is None
        }

    def budgets(self, pods: dict[str, Any]) -> dict[str, int] | None:
        """Each PodDisruptionBudget's ``disruptionsAllowed``, or None while the disruption controller
        has not yet counted the pods as they are (its status lags the pods it covers)."""
        out: dict[str, int] = {}
        if not self.with_budgets:
            return out
        for b in self.client.list(self._Budget, namespace="*"):
            selector = b.spec.selector.to_dict() if b.spec.selector is not None else None
            covered = [
                p
                for p in pods.values()
                if p.metadata.namespace == b.metadata.namespace
                and p.metadata.deletionTimestamp is None
                and (p.status is None or p.status.phase in (None, "Pending", "Running"))
                and selects(selector, p.metadata.labels or {})
            ]
            status = b.status
            if (
                status is None
                or status.observedGeneration != b.metadata.generation
                or status.currentHealthy != sum(1 for p in covered if _running(p))
            ):
                return None
            out[f"{b.metadata.namespace}/{b.metadata.name}"] = status.disruptionsAllowed
        return out

    def failed_scheduling(self, pod: Any) -> list[str]:
        """The pod's FailedScheduling Event messages, oldest first."""
        events = self.client.list(
            self._Event, namespace=pod.metadata.namespace, fields={"involvedObject.uid": pod.metadata.uid}
        )
        return failed_scheduling_by_pod(events).get(pod.metadata.uid, [])

    def every_failed_scheduling(self) -> dict[str, list[str]]:
        """Every pod's FailedScheduling Event messages, oldest first, by pod UID (one list call)."""
        return failed_scheduling_by_pod(self.client.list(self._Event, namespace="*"))

    # -- one case ----------------------------------------------------------------------------
    def run(self, pods: list[dict[str, Any]], profiles: set[str], later: list[bool] | None = None) -> RealRun:
        """Create ``pods`` in order, each decided and the cluster settled before the next.
        ``profiles``: the schedulerNames kube-scheduler serves (a pod for another stays Pending
        with no condition: nothing decides it). A pod marked ``later`` is created once the wall
        clock is a second past the start of every pod before it."""
        started = time.monotonic()
        run = RealRun()
        for k, manifest in enumerate(pods):
            if later is not None and later[k]:
                latest = max((b.start_s for b in self.bound(self.pods()).values()), default=0.0)
                time.sleep(max(0.0, int(latest) + 1 - time.time()))
            run.steps.append(self._step(manifest, profiles))
        now = self.pods()
        failed = self.every_failed_scheduling()
        for key, pod in sorted(now.items()):
            condition = _scheduled_condition(pod)
            events = failed.get(pod.metadata.uid, [])
            run.final[key] = FinalPod(
                pod.spec.nodeName,
                condition.message if condition is not None and condition.status == "False" else None,
                events[-1] if events else None,
            )
        run.seconds = time.monotonic() - started
        return run

    def _step(self, manifest: dict[str, Any], profiles: set[str]) -> RealStep:
        before_pods = self.pods()
        deadline = time.monotonic() + DECIDE_TIMEOUT_S
        while (budgets := self.budgets(before_pods)) is None:
            if time.monotonic() > deadline:
                raise RealRunTimeout("the PodDisruptionBudgets' status does not match their pods")
            time.sleep(POLL_S * 5)
        created = self.create(manifest)
        key = _key(created)
        step = RealStep(key, self.bound(before_pods), budgets)
        scheduler_name = manifest.get("spec", {}).get("schedulerName") or "default-scheduler"
        served = scheduler_name in profiles or bool(manifest.get("spec", {}).get("nodeName"))
        self._decided(created, served, step)
        after = self._settle(before_pods, key, step)
        pod = after.get(key)
        step.node = pod.spec.nodeName if pod is not None else None
        step.preempted = tuple(sorted(k for k in before_pods if k not in after))
        if pod is not None:
            messages = self.failed_scheduling(pod)
            deadline = time.monotonic() + EVENT_WAIT_S
            while not messages and step.condition_message is not None and time.monotonic() < deadline:
                time.sleep(POLL_S * 5)  # the Event is recorded after the condition, by a broadcaster
                messages = self.failed_scheduling(pod)
            step.event_message = messages[0] if messages else None
            step.bound_first = step.node is not None and not messages and step.condition_message is None
        return step

    def _decided(self, created: Any, served: bool, step: RealStep) -> None:
        """Watch the pod from its creation until kube-scheduler bound it or marked it unschedulable
        without nominating it (a pod nothing serves: a look after a moment; it stays Pending without
        a condition). The first Unschedulable condition and nomination seen are the step's: a
        preemptor may be bound within milliseconds of its failure, so only a watch sees them."""
        namespace, name = created.metadata.namespace, created.metadata.name
        if not served:  # no kube-scheduler profile has its name: nothing will decide it
            time.sleep(UNSERVED_LOOK_S)
            condition = _scheduled_condition(self.client.get(self._Pod, name, namespace=namespace))
            if condition is not None and condition.status == "False":
                step.condition_message, step.condition_reason = condition.message, condition.reason
            return

        def decided(pod: Any) -> bool:
            condition = _scheduled_condition(pod)
            if condition is not None and condition.status == "False" and step.condition_message is None:
                step.condition_message, step.condition_reason = condition.message, condition.reason
            nominated = pod.status.nominatedNodeName if pod.status else None
            step.nominated = step.nominated or nominated
            failed = condition is not None and condition.status == "False"
            return bool(pod.spec.nodeName) or (failed and not nominated)

        done = threading.Event()
        failure: list[BaseException] = []

        def watch() -> None:
            try:
                events = self.client.watch(
                    self._Pod,
                    namespace=namespace,
                    fields={"metadata.name": name},
                    resource_version=created.metadata.resourceVersion,
                    server_timeout=int(DECIDE_TIMEOUT_S),
                    on_error=on_error_retry,
                )
                for _, pod in events:
                    if done.is_set() or decided(pod):
                        break
            except Exception as exc:  # reported by the caller
                failure.append(exc)
            done.set()

        threading.Thread(target=watch, name=f"watch {namespace}/{name}", daemon=True).start()
        if not done.wait(DECIDE_TIMEOUT_S):
            done.set()  # the watch stops at its next event
            late = f"neither bound nor marked unschedulable in {DECIDE_TIMEOUT_S:.0f} s"
            raise RealRunTimeout(f"pod {namespace}/{name} was {late}")
        if failure:
            raise RealRunError(f"watching pod {namespace}/{name}: {failure[0]}")

    def _settle(self, before: dict[str, Any], key: str, step: RealStep) -> dict[str, Any]:
        """Until nothing moves: a nominated pod bound (or given up), deleted pods gone, every bound pod
        Running (kwok gave it its start time); after a deletion, long enough for the pending pods'
        retries (they are tried again, in priority order, once their backoff ends). Returns the pods
        as they were once settled."""
        start = time.monotonic()
        deadline = start + DECIDE_TIMEOUT_S
        quiet_until = 0.0
        moving: list[str] = []
        while time.monotonic() < deadline:
            pods = self.pods()
            if any(k not in pods for k in before) and not quiet_until:
                quiet_until = time.monotonic() + QUIET_AFTER_DELETION_S
            waiting = time.monotonic() < start + NOMINATED_BIND_S
            moving = still_moving(pods, key, waiting)
            if not moving and time.monotonic() >= quiet_until:
                if self.budgets(pods) is not None:
                    return pods
                moving = ["the PodDisruptionBudgets' status behind their pods"]
            time.sleep(POLL_S)
        raise RealRunTimeout(
            f"the cluster did not settle after pod {key} in {DECIDE_TIMEOUT_S:.0f} s: {'; '.join(moving)}"
        )
