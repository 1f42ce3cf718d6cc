"""The writes a scheduler makes, through one client rate limit, as kube-scheduler makes them.

- ``bind``: ``POST pods/{name}/binding`` (the Binding subresource, ``DefaultBinder``), with the pod's uid
  as a precondition. A 409 means the pod is bound already: to our node when a retried request had
  gone through (``bound``), else someone else bound it (``taken``); 404, or a uid that no longer
  matches, means the pod is gone (``gone``).
- ``unschedulable``: the ``PodScheduled=False`` condition (reason ``Unschedulable``, kube-scheduler's
  message; ``SchedulerError`` with the error's text after an attempt a plugin's Error status aborted, as
  ``handleSchedulingFailure`` words it) and ``status.nominatedNodeName`` (set, or cleared) by a strategic
  merge patch of ``pods/status``, as ``updatePod`` in ``schedule_one.go`` does.
- ``event``: a core ``v1`` Event (``FailedScheduling``, ``Scheduled``, ``Preempted``, ...); one repeated
  with the same message is counted on the same Event (``count``, ``lastTimestamp``), as client-go's
  event correlator aggregates.
- ``delete_pod``: a preemption victim deleted with its grace period and a uid precondition.
- ``annotate``: the device choice a device plugin reads, before the binding (a PreBind plugin's patch).
- Leases (``coordination.k8s.io/v1``) for leader election: read, create, replace with the
  resourceVersion read (optimistic concurrency).

The limit is client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``): at most
``burst`` requests at once, refilled at ``qps`` per second, as ``clientConnection.qps``/``burst`` of a
KubeSchedulerConfiguration set it for kube-scheduler (defaults 50 and 100).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gpufleet.live.client import LiveCluster, LiveError
from gpufleet.live.kinds import KindRef
from gpufleet.model.scheduler_records import UNSCHEDULABLE

DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
PODS = KindRef("", ("v1",), "pods", "Pod", True)
BINDINGS = KindRef("", ("v1",), "pods/binding", "Binding", True)
POD_STATUS = KindRef("", ("v1",), "pods/status", "Pod", True)
EVENTS = KindRef("", ("v1",), "events", "Event", True)
LEASES = KindRef("coordination.k8s.io", ("v1",), "leases", "Lease", True)
POD_GROUP_STATUS = KindRef("scheduling.x-k8s.io", ("v1alpha1",), "podgroups/status", "PodGroup", True)
STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


class RateLimiter:
    """A token bucket: ``burst`` tokens, ``qps`` more each second; ``wait`` takes one."""

    def __init__(self, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST) -> None:
        self.qps, self.burst = qps, max(burst, 1)
        self._tokens = float(self.burst)
        self._at = time.monotonic()
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.qps)
            self._at = now
            self._tokens -= 1
            short = -self._tokens
        if short > 0:
            time.sleep(short / self.qps)


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Counted:
    name: str
    count: int


@dataclass
class Writes:
    cluster: LiveCluster
    limiter: RateLimiter = field(default_factory=RateLimiter)
    component: str = "gpufleet-scheduler"
    identity: str = ""
    _events: dict[tuple[str, str, str, str], _Counted] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _send(
        self, method: str, path: str, kind: KindRef, namespace: str, verb: str, **kw: Any
    ) -> tuple[int, dict[str, Any]]:
        self.limiter.wait()
        return self.cluster.send(method, path, kind=kind, namespace=namespace, verb=verb, **kw)

    def _patch(
        self, path: str, kind: KindRef, namespace: str, body: object, content_type: str = MERGE
    ) -> bool:
        """A patch; False when the object is gone (404)."""
        code, _ = self._send(
            "PATCH", path, kind, namespace, "patch", body=body, content_type=content_type, accept=(200, 404)
        )
        return code == 200

    # -- pods -----------------------------------------------------------------------------------
    def bind(
        self, namespace: str, name: str, uid: str, node: str, node_exists: Callable[[], bool] | None = None
    ) -> str:
        """``bound``, ``taken`` (bound elsewhere by someone else), ``gone``, or ``node gone`` when
        ``node_exists``, asked once the rate limit lets the request go (right before it is sent), says
        the node was deleted meanwhile: the API server binds to a node that does not exist."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        self.limiter.wait()
        if node_exists is not None and not node_exists():
            return "node gone"
        code, _ = self.cluster.send(
            "POST",
            path,
            kind=BINDINGS,
            namespace=namespace,
            verb="create",
            body=body,
            accept=(200, 201, 404, 409),
        )
        if code in (200, 201):
            return "bound"
        if code == 404:
            return "gone"
        current = self.pod(namespace, name)
        if current is None or (current.get("metadata") or {}).get("uid") != uid:
            return "gone"
        return "bound" if (current.get("spec") or {}).get("nodeName") == node else "taken"

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        code, doc = self._send("GET", path, PODS, namespace, "get", accept=(200, 404))
        return doc if code == 200 else None

    def unschedulable(
        self,
        namespace: str,
        name: str,
        message: str,
        nominated: str | None = None,
        reason: str = UNSCHEDULABLE,
    ) -> None:
        """``updatePod``'s patch: the ``PodScheduled=False`` condition with ``reason`` (``Unschedulable``, or
        ``SchedulerError``) and ``message``; ``nominated`` a node name sets ``status.nominatedNodeName``,
        ``""`` clears it (``ModeOverride`` with no node, as ``newFailureNominatingInfo`` gives after an
        error), None leaves it."""
        status: dict[str, Any] = {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": now_rfc3339(),
                }
            ]
        }
        if nominated is not None:
            status["nominatedNodeName"] = nominated or None  # null: the field deleted
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        self._patch(path, POD_STATUS, namespace, {"status": status}, STRATEGIC)

    def disruption_target(self, namespace: str, name: str, message: str) -> bool:
        """The ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``) a preemption victim gets
        before it is deleted (``prepareCandidate``); False when the pod is gone."""
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": message,
            "lastTransitionTime": now_rfc3339(),
        }
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        return self._patch(path, POD_STATUS, namespace, {"status": {"conditions": [condition]}}, STRATEGIC)

    def annotate(self, namespace: str, name: str, annotations: dict[str, str]) -> bool:
        """False when the pod is gone."""
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        return self._patch(path, PODS, namespace, {"metadata": {"annotations": annotations}})

    def delete_pod(self, namespace: str, name: str, uid: str) -> bool:
        """The pod deleted with its own grace period; False when it was gone already."""
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
        code, _ = self._send(
            "DELETE", path, PODS, namespace, "delete", body=body, accept=(200, 202, 404, 409)
        )
        return code in (200, 202)

    # -- events ---------------------------------------------------------------------------------
    def event(self, involved: dict[str, str], reason: str, message: str, kind: str = "Warning") -> None:
        """``involved``: ``apiVersion``, ``kind``, ``namespace``, ``name``, ``uid`` of the object."""
        namespace = involved["namespace"]
        key = (involved.get("uid", ""), involved["name"], reason, message)
        now = now_rfc3339()
        with self._lock:
            counted = self._events.get(key)
            if counted is not None:
                counted.count += 1
        if counted is not None:
            path = f"/api/v1/namespaces/{namespace}/events/{counted.name}"
            if self._patch(path, EVENTS, namespace, {"count": counted.count, "lastTimestamp": now}):
                return
        digest = hashlib.sha256("/".join((*key, self.identity, now_micro())).encode()).hexdigest()[:10]
        name = f"{involved['name']}.{digest}"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": kind,
            "count": 1,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.identity or self.component,
        }
        path = f"/api/v1/namespaces/{namespace}/events"
        self._send("POST", path, EVENTS, namespace, "create", body=body, accept=(200, 201, 409))
        with self._lock:
            self._events[key] = _Counted(name, 1)
            if len(self._events) > 10_000:  # forget the oldest: a later repeat starts a new Event
                self._events.pop(next(iter(self._events)))

    def pod_group_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups/{name}/status"
        self._patch(path, POD_GROUP_STATUS, namespace, {"status": status})

    # -- leases ---------------------------------------------------------------------------------
    def lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        code, doc = self._send("GET", path, LEASES, namespace, "get", accept=(200, 404))
        return doc if code == 200 else None

    def put_lease(self, namespace: str, lease: dict[str, Any], create: bool) -> bool:
        """Create the Lease, or replace it at the resourceVersion it carries; False when someone else
        changed it first (409)."""
        base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        name = lease["metadata"]["name"]
        method, path, verb = ("POST", base, "create") if create else ("PUT", f"{base}/{name}", "update")
        code, _ = self._send(method, path, LEASES, namespace, verb, body=lease, accept=(200, 201, 409))
        return code in (200, 201)


__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "LiveError", "RateLimiter", "Writes"]
