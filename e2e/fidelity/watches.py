"""The objects of a fidelity run's real side as the API server last told of them, kept by watches, so that
an object created and deleted between two looks is still counted and cases waiting side by side do not poll
the API server; and the controllers' cases run side by side on them (``side_by_side``:
``e2e.fidelity.job_run``, ``replicaset_run``, ``statefulset_run``)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from e2e.controlplane import ControlPlane, ControlPlaneError

#: how long one watch lasts before it is opened again from the last resourceVersion (the most a
#: ``Watches`` takes to stop)
WATCH_S = 2
#: how long a case may take on the real side: generous, as only a case that fails waits it out
CASE_TIMEOUT_S = 120.0
T = TypeVar("T")

#: the taints the node lifecycle controller keeps in step with a node's Ready condition
CONDITION_TAINTS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})


class RunError(RuntimeError):
    """The control plane did not get where a case waits for in time, or refused what it was given."""


class Watches:
    """The objects of ``collections`` (a name for each, and the API path that lists them), kept by one watch
    each (opened again every ``WATCH_S`` from its last resourceVersion; listed again after an ``ERROR``
    event, a resourceVersion too old): the latest of each object by namespace and name, a deleted one kept
    as it last was, and the uids ever seen by namespace; when each uid was first seen, when each was
    deleted (its ``DELETED`` event: gone from the API server) and when each namespace first had an object
    ``decided`` says is decided, and when each uid first showed each of the ``marks`` its object has
    (``marked``: a state it went through, e.g. a condition or a taint), by ``time.monotonic``. ``wait``
    waits for a state of them."""

    def __init__(
        self,
        cp: ControlPlane,
        collections: Mapping[str, str],
        decided: Callable[[str, dict[str, Any]], bool] = lambda collection, obj: False,
        marks: Callable[[str, dict[str, Any]], Iterable[str]] = lambda collection, obj: (),
    ) -> None:
        self.cp = cp
        self.collections = dict(collections)
        self.decided = decided
        self.marks = marks
        self.changed = threading.Condition()
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {c: {} for c in collections}
        self.uids: dict[str, dict[str, set[str]]] = {c: defaultdict(set) for c in collections}
        self.deleted: set[str] = set()  # uids
        self.first_seen: dict[str, float] = {}  # uid -> time.monotonic()
        self.gone_at: dict[str, float] = {}  # uid -> time.monotonic() of its DELETED event
        self.names: dict[str, str] = {}  # uid -> name (an object made again under its name has a new uid)
        self.decided_at: dict[str, float] = {}  # namespace -> time.monotonic()
        self.marked: dict[tuple[str, str], float] = {}  # (uid, mark) -> time.monotonic()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(c, self._list(c)), daemon=True, name=f"watch {c}")
            for c in collections
        ]
        for thread in self._threads:
            thread.start()

    def _list(self, collection: str) -> str:
        listing = self.cp.get(self.collections[collection])
        if listing is None:
            raise RunError(f"the API server did not list {self.collections[collection]}")
        with self.changed:
            for obj in listing["items"]:
                self._note(collection, "ADDED", obj)
            self.changed.notify_all()
        return str(listing["metadata"]["resourceVersion"])

    def _note(self, collection: str, kind: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        self.objects[collection][(namespace, meta["name"])] = obj
        self.uids[collection][namespace].add(meta["uid"])
        self.names[meta["uid"]] = meta["name"]
        now = time.monotonic()
        self.first_seen.setdefault(meta["uid"], now)
        if self.decided(collection, obj):
            self.decided_at.setdefault(namespace, now)
        for mark in self.marks(collection, obj):
            self.marked.setdefault((meta["uid"], mark), now)
        if kind == "DELETED":
            self.deleted.add(meta["uid"])
            self.gone_at.setdefault(meta["uid"], now)

    def _run(self, collection: str, version: str) -> None:
        while not self._stop.is_set():
            try:
                for event in self.cp.watch(self.collections[collection], version, WATCH_S):
                    if event["type"] == "ERROR":
                        version = self._list(collection)
                        break
                    obj = event["object"]
                    version = obj["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        with self.changed:
                            self._note(collection, event["type"], obj)
                            self.changed.notify_all()
            except (urllib.error.URLError, OSError, ValueError, RunError):
                self._stop.wait(0.5)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=WATCH_S + 15)

    def wait(self, what: str, check: Callable[[], T | None], deadline: float) -> T:
        """``check()``'s first truthy value (called under the watches' lock, after every event), by
        ``deadline`` (``time.monotonic``)."""
        with self.changed:
            while not (value := check()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RunError(f"{what}: not by the case's deadline ({CASE_TIMEOUT_S:g} s)")
                self.changed.wait(left)
            return value

    def get(self, collection: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects[collection].get((namespace, name))

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return [p for (ns, _), p in self.objects["pods"].items() if ns == namespace]

    def live_pods(self, namespace: str) -> list[dict[str, Any]]:
        return [p for p in self.pods(namespace) if p["metadata"]["uid"] not in self.deleted]

    def standing_pods(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's pods neither deleted nor being deleted (no ``deletionTimestamp``)."""
        return [p for p in self.live_pods(namespace) if not p["metadata"].get("deletionTimestamp")]

    def node_ready(self, name: str) -> bool:
        """Ready, and without the ``node.kubernetes.io/not-ready`` or ``unreachable`` taint: the API server
        puts ``not-ready:NoSchedule`` on a new node (``TaintNodesByCondition``) and the node lifecycle
        controller takes it off only at its next pass after the node is Ready, so a pod created in between
        is kept off the node by kube-scheduler (a case's ReplicaSet pods all on its other node)."""
        node = self.objects["nodes"].get(("", name)) or {}
        conditions = (node.get("status") or {}).get("conditions") or []
        taints = (node.get("spec") or {}).get("taints") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions) and not any(
            t.get("key") in CONDITION_TAINTS for t in taints
        )


def placed(pod: dict[str, Any]) -> bool:
    """Ready on a node, or left unschedulable by kube-scheduler."""
    conditions = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}
    ready = conditions.get("Ready", {}).get("status") == "True"
    scheduled = conditions.get("PodScheduled", {})
    return bool(ready or (scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable"))


@contextmanager
def watching(
    cp: ControlPlane,
    collections: Mapping[str, str],
    decided: Callable[[str, dict[str, Any]], bool] = lambda collection, obj: False,
    marks: Callable[[str, dict[str, Any]], Iterable[str]] = lambda collection, obj: (),
) -> Iterator[Watches]:
    watches = Watches(cp, collections, decided, marks)
    try:
        yield watches
    finally:
        watches.close()


#: how long the pods of the cases may take to be gone once deleted
CLEANUP_TIMEOUT_S = 50.0


def create_namespaces_and_nodes(
    cp: ControlPlane, watches: Watches, namespaces: list[str], nodes: list[dict[str, Any]]
) -> None:
    """The cases' namespaces and kwok nodes created in one ``kubectl create``, and waited for until every
    node is Ready."""
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces]
    cp.kubectl(
        "create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [*items, *nodes]})
    )
    names = [n["metadata"]["name"] for n in nodes]
    watches.wait(
        "the cases' nodes Ready",
        lambda: all(watches.node_ready(name) for name in names),
        time.monotonic() + CASE_TIMEOUT_S,
    )


def clean(cp: ControlPlane, watches: Watches, namespaces: list[str], nodes: list[str]) -> None:
    """Delete the cases' namespaces and pods, wait for the pods to be gone, then delete the cases' nodes, so
    that later tests on the same control plane find none of their objects. The namespace controller sweeps
    the rest of each namespace (the workloads, their Events) meanwhile; waiting for it would take 20 s more.
    The nodes go last: kwok removes the finalizers of the pods it plays as they are deleted (the API server
    removes an ended pod at once), which it stops doing once their node is gone."""
    from lightkube.resources.core_v1 import Pod

    client = cp.client()
    cp.kubectl(
        "delete", "namespace", *namespaces, "--ignore-not-found", "--wait=false"
    )  # no new pod from here
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="case-clean") as pool:
        list(pool.map(lambda name: client.deletecollection(Pod, namespace=name, grace_period=0), namespaces))
    watches.wait(
        "the cases' pods gone",
        lambda: not any(watches.live_pods(name) for name in namespaces),
        time.monotonic() + CLEANUP_TIMEOUT_S,
    )
    cp.kubectl("delete", "node", *nodes, "--ignore-not-found")


def timed(run: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``run(*args)`` and how long it took."""
    began = time.monotonic()
    return run(*args), time.monotonic() - began


@dataclass
class RealSide(Generic[T]):
    """A case's real side: what ``run`` returned (None where it failed), why it failed, how long it took."""

    value: T | None
    error: str = ""
    seconds: float = 0.0


def side_by_side(
    cp: ControlPlane,
    collections: Mapping[str, str],
    namespaces: list[str],
    nodes: list[dict[str, Any]],
    runs: Sequence[Callable[[Watches], T]],
    decided: Callable[[str, dict[str, Any]], bool] = lambda collection, obj: False,
) -> list[RealSide[T]]:
    """The real side of a controller's cases (``e2e.fidelity.job_run``, ``replicaset_run``,
    ``statefulset_run``): their namespaces and kwok nodes created and Ready, every case's ``run`` at once
    (each given the watches of ``collections``), then the namespaces and nodes deleted (``clean``)."""
    out: list[RealSide[T]] = []
    with watching(cp, collections, decided) as watches:
        try:
            create_namespaces_and_nodes(cp, watches, namespaces, nodes)
            with ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="case") as pool:
                futures = [pool.submit(timed, run, watches) for run in runs]
                for future in futures:
                    try:
                        value, seconds = future.result()
                    except (RunError, ControlPlaneError) as exc:
                        out.append(RealSide(None, str(exc)))
                        continue
                    out.append(RealSide(value, "", seconds))
        finally:
            clean(cp, watches, namespaces, [n["metadata"]["name"] for n in nodes])
    return out
