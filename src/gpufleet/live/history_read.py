"""What kube-state-metrics' series in Prometheus say about the pods and nodes of a time window.

Each series is read with instant queries ``last_over_time(SERIES[CHUNK])`` (a pod's last value in
the chunk), one per chunk of the window (``CHUNK_S``, so that a week of a large cluster stays under
Prometheus' ``--query.max-samples``), the later chunk winning. When a pod was last seen is the
time of its last point in a range query of ``kube_pod_created`` (``step_for`` apart; a series ends
at the stale marker of the first scrape without it). Pods are keyed by ``uid`` (a pod recreated
under the same name is another pod), nodes by name. kube-state-metrics reports times in
whole seconds (``kube_pod_created`` is ``metadata.creationTimestamp``, ``kube_pod_start_time``
``status.startTime``, ``kube_pod_completion_time`` the latest ``finishedAt`` of the containers).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from gpufleet.live.history_metrics import kubernetes_label, resource_name
from gpufleet.live.prometheus_api import PrometheusAPI, Sample

#: the span of one query; a week is 168 of them
CHUNK_S = 3600.0
#: Prometheus' default lookback: a scrape at most this old still stands for the present
LOOKBACK_S = 300.0


@dataclass
class Container:
    name: str
    image: str = ""
    init: bool = False
    restart_policy: str = ""  # an init container's (``Always``: a sidecar)
    requests: dict[str, float] = field(default_factory=dict)  # Kubernetes resource name -> value
    limits: dict[str, float] = field(default_factory=dict)


@dataclass
class PodRecord:
    namespace: str
    name: str
    uid: str
    created: float = 0.0
    started: float | None = None
    completed: float | None = None
    last_seen: float = 0.0
    phase: str = ""
    node: str = ""
    priority_class: str = ""
    scheduler: str = ""
    restart_policy: str = ""
    owner: tuple[str, str] | None = None  # (kind, name) of the controller
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, str]] = field(default_factory=list)
    containers: dict[tuple[bool, str], Container] = field(default_factory=dict)


@dataclass
class NodeRecord:
    name: str
    created: float = 0.0
    last_seen: float = 0.0
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, str]] = field(default_factory=list)
    unschedulable: bool = False
    capacity: dict[str, float] = field(default_factory=dict)
    allocatable: dict[str, float] = field(default_factory=dict)


@dataclass
class History:
    start: float
    end: float
    pods: dict[str, PodRecord] = field(default_factory=dict)  # by uid
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    #: label names and resource names kube-state-metrics' sanitising made ambiguous
    unreadable: set[str] = field(default_factory=set)


def chunks(start: float, end: float, size: float = CHUNK_S) -> Iterator[tuple[float, float]]:
    at = start
    while at < end:
        yield at, min(at + size, end)
        at += size


def step_for(window_s: float) -> int:
    """The step of the range query for ``last seen``: 1 s, coarser for long windows (a week: 60 s)."""
    return max(1, int(window_s // 10_000))


@dataclass(frozen=True)
class _Chunk:
    """The queries of one chunk of the window: instant queries at its end over its span."""

    api: PrometheusAPI
    start: float
    at: float
    span: str
    step: int
    pods: str  # the selector of pod series (a namespace, or none)

    def last(self, series: str, selector: str) -> list[Sample]:
        return self.api.query(f"last_over_time({series}{selector}[{self.span}])", self.at)

    def seen(self, series: str, selector: str) -> list[Sample]:
        """When each series was last scraped in the chunk (to the step)."""
        return self.api.last_seen(f"{series}{selector}", self.start, self.at, self.step)


def read_history(api: PrometheusAPI, start: float, end: float, namespace: str | None = None) -> History:
    history = History(start, end)
    pods = f'{{namespace="{namespace}"}}' if namespace else ""
    for a, b in chunks(start, end):
        chunk = _Chunk(api, a, b, f"{max(1, round(b - a))}s", step_for(end - start), pods)
        _read_pods(history, chunk)
        _read_nodes(history, chunk)
    return history


def _pods_of(history: History, samples: list[Sample]) -> Iterator[tuple[PodRecord, dict[str, str], float]]:
    for labels, value in samples:
        pod = history.pods.get(labels.get("uid", ""))
        if pod is not None:
            yield pod, labels, value


def _read_pods(history: History, chunk: _Chunk) -> None:
    def last(series: str) -> list[Sample]:
        return chunk.last(series, chunk.pods)

    for labels, value in chunk.seen("kube_pod_created", chunk.pods):
        uid = labels.get("uid", "")
        pod = history.pods.setdefault(uid, PodRecord(labels.get("namespace", ""), labels.get("pod", ""), uid))
        pod.last_seen = max(pod.last_seen, value)
    for pod, _, value in _pods_of(history, last("kube_pod_created")):
        pod.created = value
    for pod, _, value in _pods_of(history, last("kube_pod_start_time")):
        pod.started = value
    for pod, _, value in _pods_of(history, last("kube_pod_completion_time")):
        pod.completed = value
    for pod, labels, value in _pods_of(history, last("kube_pod_status_phase")):
        if value == 1:
            pod.phase = labels.get("phase", "")
    for pod, labels, _ in _pods_of(history, last("kube_pod_info")):
        # a series per set of labels: the pending pod's (no node, no IP) beside the bound pod's
        pod.node = labels.get("node") or pod.node
        pod.priority_class = labels.get("priority_class") or pod.priority_class
    for pod, labels, _ in _pods_of(history, last("kube_pod_scheduler")):
        pod.scheduler = labels.get("name", "")
    for pod, labels, _ in _pods_of(history, last("kube_pod_restart_policy")):
        pod.restart_policy = labels.get("type", "")
    for pod, labels, _ in _pods_of(history, last("kube_pod_owner")):
        if labels.get("owner_is_controller") == "true" and labels.get("owner_kind", "<none>") != "<none>":
            pod.owner = (labels["owner_kind"], labels.get("owner_name", ""))
    for pod, labels, _ in _pods_of(history, last("kube_pod_labels")):
        pod.labels = {**pod.labels, **_kubernetes_labels(history, labels, "label_")}
    for pod, labels, _ in _pods_of(history, last("kube_pod_nodeselectors")):
        pod.node_selector = _kubernetes_labels(history, labels, "nodeselector_")
    tolerations: dict[str, list[dict[str, str]]] = {}
    for pod, labels, _ in _pods_of(history, last("kube_pod_tolerations")):
        keys = ("key", "operator", "value", "effect", "toleration_seconds")
        tolerations.setdefault(pod.uid, []).append({k: labels[k] for k in keys if labels.get(k)})
    for uid, found in tolerations.items():
        history.pods[uid].tolerations = sorted(found, key=lambda t: sorted(t.items()))
    for init, prefix in ((False, "kube_pod_container"), (True, "kube_pod_init_container")):
        for pod, labels, _ in _pods_of(history, last(f"{prefix}_info")):
            c = _container(pod, init, labels)
            c.image = labels.get("image_spec") or labels.get("image", "")
            c.restart_policy = labels.get("restart_policy", "")
        for kind in ("requests", "limits"):
            for pod, labels, value in _pods_of(history, last(f"{prefix}_resource_{kind}")):
                name = resource_name(labels.get("resource", ""))
                if name is None:
                    history.unreadable.add(f"resource {labels.get('resource')}")
                    continue
                getattr(_container(pod, init, labels), kind)[name] = value


def _container(pod: PodRecord, init: bool, labels: dict[str, str]) -> Container:
    name = labels.get("container", "")
    return pod.containers.setdefault((init, name), Container(name, init=init))


def _kubernetes_labels(history: History, labels: dict[str, str], prefix: str) -> dict[str, str]:
    out = {}
    for name, value in labels.items():
        if not name.startswith(prefix):
            continue
        key = kubernetes_label("label_" + name.removeprefix(prefix))
        if key is None:
            history.unreadable.add(f"label {name}")
        else:
            out[key] = value
    return dict(sorted(out.items()))


def _taint_key(labels: dict[str, str]) -> tuple[str, ...]:
    """A ``kube_node_spec_taint`` series' identity: its node, key, value and effect."""
    return tuple(labels.get(k, "") for k in ("node", "key", "value", "effect"))


def _read_nodes(history: History, chunk: _Chunk) -> None:
    seen_at: dict[str, float] = {}  # each node's last scrape in the chunk
    for labels, value in chunk.seen("kube_node_created", ""):
        name = labels.get("node", "")
        node = history.nodes.setdefault(name, NodeRecord(name))
        node.last_seen = max(node.last_seen, value)
        seen_at[name] = value

    def of(series: str) -> Iterator[tuple[NodeRecord, dict[str, str], float]]:
        for labels, value in chunk.last(series, ""):
            node = history.nodes.get(labels.get("node", ""))
            if node is not None:
                yield node, labels, value

    for node, _, value in of("kube_node_created"):
        node.created = value
    for node, labels, _ in of("kube_node_labels"):
        node.labels = _kubernetes_labels(history, labels, "label_")
    for node, _, value in of("kube_node_spec_unschedulable"):
        node.unschedulable = value == 1
    # a node's taints as they were when it was last scraped: a taint series that ended before (the node
    # lifecycle controller's ``node.kubernetes.io/not-ready`` of a node still registering) is not kept
    ended = {
        _taint_key(labels)
        for labels, last in chunk.seen("kube_node_spec_taint", "")
        if last < seen_at.get(labels.get("node", ""), last)
    }
    taints: dict[str, list[dict[str, str]]] = {}
    for node, labels, _ in of("kube_node_spec_taint"):
        if _taint_key(labels) not in ended:
            taints.setdefault(node.name, []).append(
                {k: labels[k] for k in ("key", "value", "effect") if labels.get(k)}
            )
    for name in seen_at.keys() - taints.keys():  # no taint left when it was last scraped here
        history.nodes[name].taints = []
    for name, found in taints.items():
        history.nodes[name].taints = sorted(found, key=lambda t: sorted(t.items()))
    for kind in ("capacity", "allocatable"):
        for node, labels, value in of(f"kube_node_status_{kind}"):
            resource = resource_name(labels.get("resource", ""))
            if resource is None:
                history.unreadable.add(f"resource {labels.get('resource')}")
            else:
                getattr(node, kind)[resource] = value
