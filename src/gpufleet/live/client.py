"""A connection to a Kubernetes API server: kubeconfig and context chosen as kubectl
chooses them, lists read page by page, watches, discovery, and one-line errors.

- Configuration, as client-go's loading rules (``clientcmd.NewDefaultClientConfigLoadingRules``):
  ``--kubeconfig`` alone when given; else every file of ``KUBECONFIG`` (``:``-separated), merged
  with the first file's entry winning for each cluster, user and context name and the first
  ``current-context`` set; else ``~/.kube/config``; else the in-cluster service account
  (``rest.InClusterConfig``). ``--context`` picks a context in that configuration. Credentials
  (client certificates, tokens, exec plugins) are lightkube's.
- Lists use ``limit``/``continue`` (API concepts, "Retrieving large results sets in chunks"), so a
  150,000-pod cluster is held one page at a time. A continue token that expired (410 Gone) is
  followed by the inconsistent continuation the server offers, and a warning says so.
- Every request has a timeout; a connection failure, a timeout, 429 and 5xx are retried with
  exponential backoff (honouring ``Retry-After``), then reported in one line.
- 403 names the verb, the resource and the RBAC rule that would grant it; a kind the server does
  not serve (a CRD not installed) is ``NotServed``, which a snapshot turns into a warning.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpufleet.live.kinds import KindRef
from gpufleet.model.named_paths import not_a_file

PAGE_SIZE = 500
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


class LiveError(Exception):
    """A problem talking to the cluster, in one line for the user."""


class NotServed(LiveError):
    """The server does not serve this kind (its CRD is not installed, or its API group is off)."""


def _merged_kubeconfig(paths: list[Path]) -> dict[str, Any]:
    """client-go's merge of a ``KUBECONFIG`` list: for each named cluster, user and context the first
    file that defines it wins; ``current-context`` is the first one set. Missing files are skipped."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": []}
    seen: dict[str, set[str]] = {key: set() for key in merged}
    for path in paths:
        if not_a_file(path) is not None:
            continue
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise LiveError(f"{path}: not a kubeconfig: {exc}") from None
        if not isinstance(doc, dict):
            raise LiveError(f"{path}: not a kubeconfig: a mapping is expected")
        for key in merged:
            for entry in doc.get(key) or []:
                name = entry.get("name") if isinstance(entry, dict) else None
                if isinstance(name, str) and name not in seen[key]:
                    seen[key].add(name)
                    merged[key].append(_absolute_paths(entry, path.parent))
        if "current-context" not in merged and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
    return merged


_FILE_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


def _absolute_paths(entry: dict[str, Any], base: Path) -> dict[str, Any]:
    """File references inside a kubeconfig are relative to the file that holds them (client-go's
    ``ResolveLocalPaths``); merged entries keep that meaning."""
    inner = next((entry[k] for k in ("cluster", "user") if isinstance(entry.get(k), dict)), None)
    if inner is None:
        return entry
    resolved = {
        k: str(base / v) if k in _FILE_FIELDS and isinstance(v, str) and not os.path.isabs(v) else v
        for k, v in inner.items()
    }
    return {**entry, **{k: resolved for k in ("cluster", "user") if k in entry}}


#: where a pod finds its service account's token, CA and namespace (``rest.InClusterConfig``)
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def load_config(
    kubeconfig: Path | None = None, context: str | None = None, service_account: Path = SERVICE_ACCOUNT_DIR
) -> Any:
    """The connection settings (a lightkube ``SingleConfig``) kubectl would use with these flags."""
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.core.exceptions import ConfigError

    if kubeconfig is not None:
        reason = not_a_file(kubeconfig.expanduser())
        if reason is not None:
            raise LiveError(f"--kubeconfig: {kubeconfig}: {reason}")
        paths = [kubeconfig.expanduser()]
    elif os.environ.get("KUBECONFIG"):
        paths = [Path(p).expanduser() for p in os.environ["KUBECONFIG"].split(os.pathsep) if p]
    else:
        try:
            paths = [Path("~/.kube/config").expanduser()]
        except RuntimeError:  # no home directory (a container's user without a passwd entry): in-cluster
            paths = []
    merged = _merged_kubeconfig(paths)
    where = ", ".join(map(str, paths))
    if not merged["contexts"]:
        if context is not None:
            raise LiveError(f"--context {context}: no kubeconfig with contexts ({where})")
        try:
            return KubeConfig.from_service_account(service_account).get()
        except ConfigError:
            raise LiveError(f"no cluster configuration: no kubeconfig ({where}) and not in a pod") from None
    try:
        return KubeConfig.from_dict(merged, fname=paths[0]).get(context)
    except ConfigError as exc:
        raise LiveError(f"kubeconfig {where}: {exc}") from None
    except KeyError as exc:
        raise LiveError(f"kubeconfig {where}: the context refers to an undefined entry {exc}") from None


@dataclass
class LiveCluster:
    """One API server: reads, and ``send`` for the few writes of the scheduler (``live.writes``).
    ``warnings`` collects what the reads had to tolerate."""

    config: Any
    timeout_s: float = 30.0
    retries: int = 3
    backoff_s: float = 0.5
    warnings: list[str] = field(default_factory=list)
    _plurals: dict[str, set[str] | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        import httpx2 as httpx
        from lightkube.config.client_adapter import Client, ConnectionParams

        params = ConnectionParams(timeout=httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0)))
        try:
            self._http = Client(self.config, params)
        except Exception as exc:  # lightkube reads certificates and runs exec plugins here
            raise LiveError(f"cannot set up the connection to {self.server}: {exc}") from None

    @property
    def server(self) -> str:
        return str(self.config.cluster.server)

    def close(self) -> None:
        self._http.close()

    # -- discovery -----------------------------------------------------------------------------
    def served_version(self, kind: KindRef) -> str:
        """The first of the kind's versions whose resource list (API discovery) has the kind's plural,
        or ``NotServed``."""
        if not kind.group:
            return kind.versions[0]
        for version in kind.versions:
            key = f"{kind.group}/{version}"
            if key not in self._plurals:
                doc = self._get(f"/apis/{key}", {}, missing_ok=True)
                self._plurals[key] = (
                    None if doc is None else {r.get("name") for r in doc.get("resources", [])}
                )
            if kind.plural in (self._plurals[key] or ()):
                return version
        raise NotServed(
            f"{kind.kind} ({kind.resource} {', '.join(kind.versions)}): not served by this cluster "
            "(its CRD is not installed or its API group is off)"
        )

    def _path(self, kind: KindRef, namespace: str | None) -> str:
        version = self.served_version(kind)
        root = f"/apis/{kind.group}/{version}" if kind.group else f"/api/{version}"
        scope = f"/namespaces/{namespace}" if namespace and kind.namespaced else ""
        return f"{root}{scope}/{kind.plural}"

    # -- reading -------------------------------------------------------------------------------
    def list_pages(
        self,
        kind: KindRef,
        namespace: str | None = None,
        page_size: int = PAGE_SIZE,
        field_selector: str | None = None,
    ) -> Iterator[tuple[list[dict[str, Any]], str]]:
        """The kind's objects one page at a time, each object as kubectl shows it (``apiVersion`` and
        ``kind`` set, ``managedFields`` dropped), with the list's resourceVersion. ``namespace`` None
        lists every namespace."""
        path = self._path(kind, namespace)
        api_version = f"{kind.group}/{self.served_version(kind)}" if kind.group else kind.versions[0]
        token: str | None = None
        while True:
            params = {"limit": str(page_size), **({"continue": token} if token else {})}
            if field_selector:
                params["fieldSelector"] = field_selector
            doc = self._get(path, params, verb="list", kind=kind, namespace=namespace)
            assert doc is not None
            items = doc.get("items") or []
            for item in items:
                item["apiVersion"], item["kind"] = api_version, kind.kind
                item.get("metadata", {}).pop("managedFields", None)
            meta = doc.get("metadata") or {}
            yield items, str(meta.get("resourceVersion", ""))
            token = meta.get("continue") or None
            if not token:
                return

    def list(
        self, kind: KindRef, namespace: str | None = None, field_selector: str | None = None
    ) -> Iterator[dict[str, Any]]:
        for items, _ in self.list_pages(kind, namespace, field_selector=field_selector):
            yield from items

    def watch(
        self,
        kind: KindRef,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_s: float | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Watch events ``(type, object)`` from ``resource_version`` (ADDED, MODIFIED, DELETED,
        BOOKMARK) until ``timeout_s`` (the server ends the watch then). A 410 Gone (the version has
        been compacted) is a ``LiveError``: re-list, then watch again."""
        import httpx2 as httpx

        params: dict[str, str] = {"watch": "true", "allowWatchBookmarks": "true"}
        if resource_version:
            params["resourceVersion"] = resource_version
        if timeout_s is not None:
            params["timeoutSeconds"] = str(max(1, int(timeout_s)))
        path = self._path(kind, namespace)
        read_timeout = None if timeout_s is None else timeout_s + self.timeout_s
        try:
            with self._http.stream(
                "GET", path, params=params, timeout=httpx.Timeout(self.timeout_s, read=read_timeout)
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise self._status_error(response, "watch", kind, namespace)
                for line in response.iter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        detail = f"{obj.get('message', obj)} (code {obj.get('code')})"
                        raise LiveError(f"watch {kind.resource}: {detail}")
                    obj.get("metadata", {}).pop("managedFields", None)
                    yield str(event.get("type")), obj
        except httpx.HTTPError as exc:
            raise LiveError(f"watch {kind.resource} on {self.server}: {exc or type(exc).__name__}") from None

    def _get(
        self,
        path: str,
        params: dict[str, str],
        missing_ok: bool = False,
        verb: str = "get",
        kind: KindRef | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any] | None:
        while True:
            accept = {200} | ({404} if missing_ok else set()) | ({410} if params.get("continue") else set())
            code, doc = self.send(
                "GET", path, params=params, verb=verb, kind=kind, namespace=namespace, accept=accept
            )
            if code == 200:
                return doc
            if code == 404:
                return None
            token = (doc.get("metadata") or {}).get("continue")
            if not token:  # 410 without the continuation: the list cannot go on
                raise LiveError(f"{self.server}{path}: HTTP 410: {doc.get('message') or 'Gone'}")
            # the continuation the server offers after compaction
            self.warnings.append(
                f"{path}: the list's continue token expired; the rest was read at a newer "
                "resourceVersion (not one consistent snapshot)"
            )
            params = {**params, "continue": token}

    def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: object = None,
        content_type: str = "application/json",
        verb: str = "get",
        kind: KindRef | None = None,
        namespace: str | None = None,
        accept: Collection[int] = (200, 201),
    ) -> tuple[int, dict[str, Any]]:
        """One request, retried with exponential backoff on a connection failure, a timeout, 429 and 5xx
        (honouring ``Retry-After``): the status code and the JSON body when the code is one of
        ``accept``, else a ``LiveError`` in one line (403 naming the RBAC rule for ``verb`` on ``kind``)."""
        import httpx2 as httpx

        delay = self.backoff_s
        content = None if body is None else json.dumps(body)
        headers = {"Content-Type": content_type} if content is not None else {}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._http.request(
                    method, path, params=params or {}, content=content, headers=headers
                )
            except httpx.TransportError as exc:
                if last:
                    raise LiveError(
                        f"cannot reach the API server {self.server}: {_transport_reason(exc)} "
                        f"({self.retries + 1} attempt{'s' if self.retries else ''})"
                    ) from None
            else:
                code = response.status_code
                if code in accept:
                    return code, _status(response)
                if code not in RETRYABLE_STATUS or last:
                    raise self._status_error(response, verb, kind, namespace)
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    delay = max(delay, float(retry_after))
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def _status_error(
        self, response: Any, verb: str, kind: KindRef | None, namespace: str | None
    ) -> LiveError:
        status = _status(response)
        message = status.get("message") or response.text.strip() or response.reason_phrase
        code = response.status_code
        if code == 403 and kind is not None:
            scope = f'namespace "{namespace}"' if namespace and kind.namespaced else "the cluster scope"
            verbs = ", ".join(f'"{v}"' for v in ((verb, "watch") if verb == "list" else (verb,)))
            role = "Role" if namespace and kind.namespaced else "ClusterRole"
            return LiveError(
                f"forbidden: cannot {verb} {kind.resource} at {scope}: {message}; "
                f'an RBAC rule that grants it: apiGroups: ["{kind.group}"], resources: ["{kind.plural}"], '
                f"verbs: [{verbs}] in a {role} bound to that user"
            )
        if code == 401:
            return LiveError(f"unauthorized at {self.server}: the credentials of the kubeconfig were refused")
        if code == 404 and kind is not None:
            return NotServed(f"{kind.kind} ({kind.resource}): not served by this cluster ({message})")
        return LiveError(f"{self.server}{response.request.url.path}: HTTP {code}: {message}")


def _status(response: Any) -> dict[str, Any]:
    try:
        doc = response.json()
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _transport_reason(exc: Exception) -> str:
    text = str(exc)
    reasons = ("connection refused", "name or service not known", "timed out", "certificate verify failed")
    return next((reason for reason in reasons if reason in text.lower()), text or type(exc).__name__)


def connect(
    kubeconfig: Path | None = None, context: str | None = None, timeout_s: float = 30.0, retries: int = 3
) -> LiveCluster:
    """A connection as kubectl would open it with ``--kubeconfig``/``--context`` (see module doc)."""
    return LiveCluster(load_config(kubeconfig, context), timeout_s=timeout_s, retries=retries)
