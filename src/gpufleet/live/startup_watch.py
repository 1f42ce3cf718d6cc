"""Reading a live cluster for ``gpufleet startup``: its pods, nodes and events, and, in watch mode,
the moments the objects do not keep.

A list gives each object as it is now: a condition's ``lastTransitionTime`` is its latest change,
and an allocatable resource has no time at all. A watch (API concepts, "Efficient detection of
changes": a list, then a watch from the list's ``resourceVersion``) sees every change as it
happens, so `collect` with ``watch_for_s`` (or until Ctrl-C) records in `Observations`, on this
machine's clock when the change arrives:

- a node's Ready condition first turning True;
- a node's ``nvidia.com/gpu`` allocatable first > 0 while it is Ready: the moment a GPU pod can be
  placed on it. Before its device plugin registers a node has no GPUs allocatable; a node that
  appears with GPUs before its kubelet is Ready (cluster-autoscaler's kwok provider copies its
  template's status) cannot take them yet (the ``node.kubernetes.io/not-ready`` taint);
- a pod's Ready condition first turning True (a later restart moves ``lastTransitionTime``);
- a pod's binding (``PodScheduled`` True) and all its containers first running, which the objects
  keep in whole seconds only (``metav1.Time``).

Objects already so when the watch began are not observed (their times come from the objects, and
the measurement says so). Nodes and pods deleted during the watch are kept as last seen.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpufleet.live.client import LiveCluster, LiveError
from gpufleet.live.kinds import KINDS, KindRef
from gpufleet.live.startup_objects import is_true, node_gpus, parse_time
from gpufleet.live.startup_records import Observations

#: a watch request lasts this long (the server ends it), so a stop is noticed within it
WATCH_WINDOW_S = 1.0


class Collected(NamedTuple):
    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    events: list[dict[str, Any]]
    observed: Observations | None  # None without a watch
    read_at: float  # seconds since the epoch, when the lists were read


def collect(
    cluster: LiveCluster,
    namespace: str | None,
    since: float | None,
    watch_for_s: float | None,
    *,
    watch: bool = False,
    stop: threading.Event | None = None,
    watching: Callable[[], None] | None = None,
) -> Collected:
    """Pods of ``namespace`` (None: every namespace) created at or after ``since`` (seconds since the
    epoch), every node, and the pods' events. With ``watch`` (or a ``watch_for_s``), first watch
    nodes and pods for ``watch_for_s`` seconds, until ``stop`` is set, or until Ctrl-C, recording
    `Observations`; ``watching`` is called once the watches have begun."""
    observed = None
    gone: dict[tuple[str, str], dict[str, Any]] = {}
    if watch or watch_for_s is not None:
        observed, gone = _watch(cluster, namespace, watch_for_s, stop or threading.Event(), watching)
    read_at = time.time()
    pods = [p for p in cluster.list(KINDS["pods"], namespace) if _since(p, since)]
    nodes = list(cluster.list(KINDS["nodes"]))
    present = {("pods", _key(p)) for p in pods} | {("nodes", _key(n)) for n in nodes}
    for (kind, key), obj in sorted(gone.items()):
        if (kind, key) not in present:
            (pods if kind == "pods" else nodes).append(obj)
    names = {_key(p) for p in pods}
    events = [e for e in cluster.list(KINDS["events"], namespace) if _about(e) in names]
    return Collected(pods, nodes, events, observed, read_at)


def _key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata.get('name')}" if namespace else str(metadata.get("name"))


def _about(event: Mapping[str, Any]) -> str:
    target = event.get("involvedObject") or event.get("regarding") or {}
    return f"{target.get('namespace') or ''}/{target.get('name')}" if target.get("kind") == "Pod" else ""


def _since(pod: Mapping[str, Any], since: float | None) -> bool:
    if since is None:
        return True
    created = (pod.get("metadata") or {}).get("creationTimestamp")
    return created is None or parse_time(created, "metadata.creationTimestamp") >= since


# --- the watch ------------------------------------------------------------------------------------


def _all_running(pod: Mapping[str, Any]) -> bool:
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    running = [s for s in statuses if ((s or {}).get("state") or {}).get("running")]
    return bool(containers) and len(running) >= len(containers)


def _gpus_usable(node: Mapping[str, Any]) -> bool:
    """Ready with ``nvidia.com/gpu`` allocatable > 0."""
    return is_true(node, "Ready") and node_gpus(node) > 0


@dataclass
class _Recorder:
    """The first moment each watched object reached each state, among those not there at the list."""

    observed: Observations = field(default_factory=Observations)
    already: set[tuple[str, str]] = field(default_factory=set)
    gone: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def states(self, kind: str, obj: Mapping[str, Any]) -> dict[str, dict[str, float]]:
        """Which `Observations` fields the object is in now, with the dict that records each."""
        o = self.observed
        if kind == "nodes":
            return {
                **({"node_ready": o.node_ready} if is_true(obj, "Ready") else {}),
                **({"gpu_allocatable": o.gpu_allocatable} if _gpus_usable(obj) else {}),
            }
        return {
            **({"pod_bound": o.pod_bound} if is_true(obj, "PodScheduled") else {}),
            **({"pod_running": o.pod_running} if _all_running(obj) else {}),
            **({"pod_ready": o.pod_ready} if is_true(obj, "Ready") else {}),
        }

    def listed(self, kind: str, obj: Mapping[str, Any]) -> None:
        key = _key(obj)
        self.already |= {(state, key) for state in self.states(kind, obj)}

    def seen(self, kind: str, change: str, obj: dict[str, Any], at: float) -> None:
        key = _key(obj)
        with self.lock:
            if change == "DELETED":
                self.gone[(kind, key)] = obj
                return
            for state, record in self.states(kind, obj).items():
                if (state, key) not in self.already:
                    record.setdefault(key, at)


def _watch(
    cluster: LiveCluster,
    namespace: str | None,
    watch_for_s: float | None,
    stop: threading.Event,
    watching: Callable[[], None] | None,
) -> tuple[Observations, dict[tuple[str, str], dict[str, Any]]]:
    recorder = _Recorder()
    versions = {}
    for name, scope in (("nodes", None), ("pods", namespace)):
        versions[name] = _list_into(cluster, KINDS[name], scope, name, recorder)
    failures: list[LiveError] = []
    threads = [
        threading.Thread(
            target=_follow,
            args=(_another(cluster), name, scope, versions[name]),
            kwargs={"recorder": recorder, "stop": stop, "failures": failures},
            name=f"watch-{name}",
            daemon=True,
        )
        for name, scope in (("nodes", None), ("pods", namespace))
    ]
    for thread in threads:
        thread.start()
    if watching is not None:
        watching()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the watch; what it saw is kept
        stop.wait(watch_for_s)
    stop.set()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return recorder.observed, recorder.gone


def _list_into(
    cluster: LiveCluster, kind: KindRef, namespace: str | None, name: str, recorder: _Recorder
) -> str:
    last = ""
    for items, version in cluster.list_pages(kind, namespace):
        last = version
        for obj in items:
            recorder.listed(name, obj)
    return last


def _another(cluster: LiveCluster) -> LiveCluster:
    """A connection of its own for a watch thread, with the same settings."""
    return LiveCluster(cluster.config, cluster.timeout_s, cluster.retries)


def _follow(
    cluster: LiveCluster,
    name: str,
    namespace: str | None,
    version: str,
    *,
    recorder: _Recorder,
    stop: threading.Event,
    failures: list[LiveError],
) -> None:
    """Watch ``name`` from ``version`` in short requests until ``stop``; after a 410 Gone (the
    version was compacted), list again (what changed meanwhile is not observed) and go on."""
    kind = KINDS[name]
    try:
        while not stop.is_set():
            try:
                for change, obj in cluster.watch(kind, namespace, version, timeout_s=WATCH_WINDOW_S):
                    version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                    if change != "BOOKMARK":
                        recorder.seen(name, change, obj, time.time())
                    if stop.is_set():
                        break
            except LiveError as exc:
                if not _gone(exc):
                    raise
                version = _list_into(cluster, kind, namespace, name, recorder)
    except LiveError as exc:
        failures.append(exc)
        stop.set()
    finally:
        cluster.close()


def _gone(exc: LiveError) -> bool:
    """410 Gone, as a watch's ERROR event (``code 410``) or as the response to the request."""
    return "(code 410)" in str(exc) or "HTTP 410" in str(exc)
