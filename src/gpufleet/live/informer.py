"""An informer: one kind's objects kept current from the API, as client-go's reflector keeps them.

It lists (page by page), then watches from the list's resourceVersion. A watch that ends (the
server's timeout) is resumed from the last resourceVersion seen (bookmarks included); a watch that
breaks (the API server restarted, the connection dropped) is resumed after a backoff; a ``410 Gone``
(the version was compacted away in etcd) means re-list, and the objects the new list no longer
has are reported deleted. ``on_change`` is called after every change with the kind's plural,
``on_relist`` (if given) after each re-list that a 410 Gone called for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from gpufleet.live.client import LiveCluster, LiveError, NotServed
from gpufleet.live.kinds import KindRef

WATCH_TIMEOUT_S = 60.0
BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


class Informer:
    """``store``: the kind's objects by ``namespace/name`` (or name), read under ``lock``."""

    def __init__(
        self,
        cluster: LiveCluster,
        kind: KindRef,
        on_change: Callable[[str], None],
        lock: threading.RLock,
        optional: bool = False,
        on_relist: Callable[[str], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.cluster, self.kind, self.on_change, self.lock = cluster, kind, on_change, lock
        self.on_relist = on_relist
        self.on_error = on_error  # told each new error once (a 403 is seen at once, not at a sync timeout)
        self._gone = False  # a 410 Gone asked for the next list
        self.optional = optional  # a kind the cluster may not serve (a CRD): then the store stays empty
        self.store: dict[str, dict[str, Any]] = {}
        self.synced = threading.Event()
        self.served = True
        self.relists = 0  # lists after the first (410 Gone, or a watch that could not resume)
        self.broken_watches = 0
        self.error: str | None = None  # the last error, while it lasts
        self._stop = threading.Event()
        self._version = ""
        self._thread = threading.Thread(target=self._run, name=f"informer-{kind.plural}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                if not self._version:
                    self._list()
                self._watch()
                failures = 0
            except NotServed as exc:
                if not self.optional:
                    self._failed(str(exc))
                self.served = False
                self.synced.set()
                self._pause(30.0)  # a CRD installed later is picked up
            except LiveError as exc:
                if "code 410" in str(exc) or "HTTP 410" in str(exc) or "Expired" in str(exc):
                    self._version = ""  # compacted: re-list
                    self._gone = True
                else:
                    self.broken_watches += 1
                    self._failed(str(exc))
                    self._pause(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                    failures += 1
            except Exception as exc:  # a connection torn down mid-stream: resume after a backoff
                self.broken_watches += 1
                self._failed(f"watch {self.kind.resource}: {exc or type(exc).__name__}")
                self._pause(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                failures += 1

    def _failed(self, error: str) -> None:
        if error != self.error and self.on_error is not None:
            self.on_error(error)
        self.error = error

    def _pause(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _list(self) -> None:
        listed: dict[str, dict[str, Any]] = {}
        version = ""
        for items, page_version in self.cluster.list_pages(self.kind):
            version = page_version
            for obj in items:
                listed[object_key(obj)] = obj
        with self.lock:
            if self.synced.is_set():
                self.relists += 1
            self.store.clear()
            self.store.update(listed)
            self._version = version
            self.served = True
            self.error = None
        self.synced.set()
        if self._gone:
            self._gone = False
            if self.on_relist is not None:
                self.on_relist(self.kind.plural)
        self.on_change(self.kind.plural)

    def _watch(self) -> None:
        for kind, obj in self.cluster.watch(self.kind, None, self._version, timeout_s=WATCH_TIMEOUT_S):
            if self._stop.is_set():
                return
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if kind == "BOOKMARK":
                self._version = str(version or self._version)
                continue
            api_version = f"{self.kind.group}/{self.kind.versions[0]}" if self.kind.group else "v1"
            obj.setdefault("apiVersion", api_version)
            obj.setdefault("kind", self.kind.kind)
            with self.lock:
                if kind == "DELETED":
                    self.store.pop(object_key(obj), None)
                else:
                    self.store[object_key(obj)] = obj
                self._version = str(version or self._version)
                self.error = None
            self.on_change(self.kind.plural)


def wait_synced(informers: list[Informer], timeout_s: float) -> list[str]:
    """The kinds not synced within ``timeout_s`` (with their last error)."""
    deadline = time.monotonic() + timeout_s
    for informer in informers:
        informer.synced.wait(max(0.0, deadline - time.monotonic()))
    return [f"{i.kind.resource}: {i.error or 'not listed yet'}" for i in informers if not i.synced.is_set()]
