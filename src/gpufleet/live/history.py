"""Last week's workload as a replayable scenario (``gpufleet history``): the pods and nodes that
kube-state-metrics' series in Prometheus show for a time window, written as the manifests
``gpufleet simulate`` replays (the same shape ``gpufleet trace import`` writes).

- One bare ``v1`` Pod per real pod that existed in the window: ``gpufleet.io/submit-at`` is its
  creation time after the window's start (``0s`` for a pod created before it), and
  ``gpufleet.io/duration`` its run from ``kube_pod_start_time`` (or the window's start, if later)
  to ``kube_pod_completion_time``; a pod that vanished without completing is deleted when it was
  last seen (``gpufleet.io/delete-at``); one still there at the window's end runs on. The
  annotation ``history.gpufleet.io/ended`` says which, ``history.gpufleet.io/node`` where it ran.
- Its containers with their requests and limits (``kube_pod_container_resource_*``, init
  containers too), ``restartPolicy`` (``Never`` for a pod that completed when the metrics do not give
  it: under the default ``Always`` a pod never completes), ``schedulerName``, tolerations, node
  selector, labels.
- Its Job stays visible: the Job controller's labels (``batch.kubernetes.io/job-name``, ...) and an
  ``ownerReferences`` entry (the Job's uid from ``batch.kubernetes.io/controller-uid``); pods
  sharing a ``scheduling.x-k8s.io/pod-group`` label get a ``PodGroup`` whose ``minMember`` is the
  number of them seen.
- Nodes with labels, taints, capacity and allocatable; a ``Simulation`` as long as the window.

What the metrics do not hold (affinity, PriorityClass values, the PodGroup's own ``minMember``,
when nodes came and went) is listed in ``notes``, never invented.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpufleet.live.history_read import LOOKBACK_S, Container, History, NodeRecord, PodRecord
from gpufleet.model.resources import CPU, GPU, format_units, is_overcommittable
from gpufleet.traces.manifests import SAMPLES, _seconds

POD_GROUP = "scheduling.x-k8s.io/pod-group"
JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
DEFAULT_SCHEDULER = "default-scheduler"
ENDED = "history.gpufleet.io/ended"
NODE = "history.gpufleet.io/node"
PRIORITY_CLASS = "history.gpufleet.io/priority-class"
OWNER = "history.gpufleet.io/owner"
STRETCH = "history.gpufleet.io/stretch"
#: The PriorityClasses every cluster has, with the same values (``pkg/apis/scheduling``
#: ``SystemPriorityClasses``): a pod keeps these names in ``spec.priorityClassName``.
SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")

#: How much longer a gang computes on a placement than on the fewest nodes: given (node, GPUs) of
#: each member, the GPUs of a node and the GPU product (``sim.placement_quality``'s ring model).
Stretch = Callable[[Sequence[tuple[str, int]], int, str | None], float]

#: what kube-state-metrics never exports about a pod or node
NOT_IN_METRICS = (
    "node and pod affinity, topology spread constraints, volumes, scheduling gates, host ports and "
    "images on nodes are not in kube-state-metrics' series: the pods have none",
)


@dataclass
class Scenario:
    """The files of the scenario directory, and what the user must know about them."""

    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pods: int = 0
    nodes: int = 0
    jobs: int = 0
    gangs: int = 0


def _quantity(resource: str, value: float) -> str:
    if resource == CPU:
        return format_units(CPU, round(value * 1000))
    return format_units(resource, round(value))


def _resources(values: dict[str, float]) -> dict[str, str]:
    return {r: _quantity(r, v) for r, v in sorted(values.items())}


def _ended(pod: PodRecord, history: History, stretch: float) -> tuple[dict[str, str], str]:
    """The annotations that replay how the pod ran in the window, and the ``ended`` note."""
    start = history.start
    out = {"gpufleet.io/submit-at": _seconds(float(round(max(0.0, pod.created - start))))}
    if pod.completed is not None and pod.started is not None:
        measured = float(round(pod.completed - max(pod.started, start)))
        out["gpufleet.io/duration"] = _seconds(measured if stretch == 1.0 else round(measured / stretch, 3))
        if stretch != 1.0:
            out[STRETCH] = f"{stretch:.6g}"
        cut = " (started before the window: the part in it)" if pod.started < start else ""
        return out, f"{pod.phase or 'Succeeded'} at its completion time{cut}"
    if pod.last_seen < history.end - LOOKBACK_S:
        out["gpufleet.io/delete-at"] = _seconds(float(round(max(0.0, pod.last_seen - start))))
        state = "while running" if pod.started is not None else "before it started"
        return (
            out,
            f"deleted {state} (last seen {round(history.end - pod.last_seen)} s before the window's end)",
        )
    return out, f"still {pod.phase or 'present'} at the window's end" + (
        " (runs on)" if pod.started is not None else ""
    )


def _container(c: Container) -> dict[str, Any]:
    """A container's manifest. A resource that cannot be overcommitted (GPUs, hugepages) has its limit
    equal to its request, as the API server validates it (``ValidateResourceRequirements``): its request
    stands for a limit the series lack."""
    out: dict[str, Any] = {"name": c.name, "image": c.image or "unknown"}
    limits = {**c.limits, **{r: v for r, v in c.requests.items() if not is_overcommittable(r)}}
    resources = {k: _resources(v) for k, v in (("requests", c.requests), ("limits", limits)) if v}
    if resources:
        out["resources"] = resources
    if c.init and c.restart_policy == "Always":
        out["restartPolicy"] = "Always"
    return out


def pod_manifest(
    pod: PodRecord,
    history: History,
    name: str | None,
    stretch: float,
    classes: Collection[str],
) -> dict[str, Any]:
    """The pod as it ran in the window; ``stretch``: a gang member's duration is divided by it;
    ``classes``: the PriorityClasses the scenario has (the pod keeps its class's name if there)."""
    annotations, ended = _ended(pod, history, stretch)
    annotations[ENDED] = ended
    if pod.node:
        annotations[NODE] = pod.node
    metadata: dict[str, Any] = {"name": name or pod.name, "namespace": pod.namespace}
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    job_uid = next((pod.labels[k] for k in JOB_UID_LABELS if k in pod.labels), None)
    if pod.owner is not None and pod.owner[0] == "Job" and job_uid:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": pod.owner[1],
                "uid": job_uid,
                "controller": True,
            }
        ]
    elif pod.owner is not None:
        annotations[OWNER] = f"{pod.owner[0]}/{pod.owner[1]}"
    if pod.priority_class and pod.priority_class not in classes:
        annotations[PRIORITY_CLASS] = pod.priority_class
    metadata["annotations"] = annotations
    containers = [c for (init, _), c in sorted(pod.containers.items()) if not init]
    spec: dict[str, Any] = {"containers": [_container(c) for c in containers or [Container("main")]]}
    inits = [_container(c) for (init, _), c in sorted(pod.containers.items()) if init]
    if inits:
        spec["initContainers"] = inits
    # a pod that completed whose policy the metrics do not give ran under Never or OnFailure: under the API's
    # default, Always, the kubelet restarts a container that exits 0 too and the pod never completes
    completed = "gpufleet.io/duration" in annotations
    restart_policy = pod.restart_policy or ("Never" if completed else "")
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if pod.priority_class in classes:
        spec["priorityClassName"] = pod.priority_class
    if pod.scheduler and pod.scheduler != DEFAULT_SCHEDULER:
        spec["schedulerName"] = pod.scheduler
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    if pod.tolerations:
        spec["tolerations"] = [_toleration(t) for t in pod.tolerations]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _toleration(t: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in t.items() if k != "toleration_seconds"}
    if "toleration_seconds" in t:
        out["tolerationSeconds"] = int(t["toleration_seconds"])
    return out


def node_manifest(node: NodeRecord) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [dict(t) for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": dict(node.labels)},
        "spec": spec,
        "status": {"capacity": _resources(node.capacity), "allocatable": _resources(node.allocatable)},
    }


def simulation_manifest(history: History, name: str) -> dict[str, Any]:
    length = float(round(history.end - history.start))
    spec = {"duration": _seconds(length), "sampleInterval": _seconds(float(max(10, int(length // SAMPLES))))}
    return {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": name},
        "spec": spec,
    }


def in_window(pod: PodRecord, history: History) -> bool:
    """Whether the pod was there, not yet ended, at some moment of the window (a scrape in the window
    gave its creation time; the range query's lookback may see it just before)."""
    return 0 < pod.created <= history.end and (pod.completed is None or pod.completed >= history.start)


def _gpus(pod: PodRecord) -> int:
    return round(sum(c.requests.get(GPU, c.limits.get(GPU, 0.0)) for c in pod.containers.values()))


def _split_gangs(pods: list[PodRecord]) -> dict[str, list[PodRecord]]:
    """The members with GPUs of each gang (``namespace/group``) that ran on more than one node."""
    members: dict[str, list[PodRecord]] = defaultdict(list)
    for pod in pods:
        if pod.labels.get(POD_GROUP) and pod.node and _gpus(pod) > 0:
            members[f"{pod.namespace}/{pod.labels[POD_GROUP]}"].append(pod)
    return {g: m for g, m in sorted(members.items()) if len({p.node for p in m}) > 1}


def _stretches(history: History, split: dict[str, list[PodRecord]], stretch: Stretch) -> dict[str, float]:
    """Each split gang member's stretch (by uid), the first member's node giving the node's GPUs
    and product, as the simulator takes them."""
    out: dict[str, float] = {}
    for members in split.values():
        first = history.nodes.get(members[0].node)
        gpus_per_node = round(first.allocatable.get(GPU, 0.0)) if first else 0
        product = first.labels.get("nvidia.com/gpu.product") if first else None
        factor = stretch([(p.node, _gpus(p)) for p in members], gpus_per_node, product)
        out.update({p.uid: factor for p in members})
    return out


def build_scenario(
    history: History,
    stretch: Stretch,
    priority_classes: Mapping[str, dict[str, Any]] | None = None,
    name: str = "history",
) -> Scenario:
    """The scenario of the window. A gang that ran split over several nodes has its measured
    durations divided by what ``stretch`` says that placement costs, so that its replay on the same
    placement lasts as measured (``gpufleet.io/duration`` is the time on the fewest nodes).
    ``priority_classes`` (PriorityClass documents by name, the cluster's) are written beside the
    pods, which then keep the names of theirs."""
    given = dict(priority_classes or {})
    classes = frozenset(given) | frozenset(SYSTEM_PRIORITY_CLASSES)
    out = Scenario()
    pods = sorted(
        (p for p in history.pods.values() if in_window(p, history)),
        key=lambda p: (p.created, p.namespace, p.name, p.uid),
    )
    split = _split_gangs(pods)
    factors = _stretches(history, split, stretch)
    names = Counter((p.namespace, p.name) for p in pods)
    pod_docs = [  # a pod recreated under the same name: told apart by its uid
        pod_manifest(
            pod,
            history,
            f"{pod.name}-{pod.uid}" if names[(pod.namespace, pod.name)] > 1 else None,
            factors.get(pod.uid, 1.0),
            classes,
        )
        for pod in pods
    ]
    groups: dict[tuple[str, str], int] = defaultdict(int)
    for pod in pods:
        if pod.labels.get(POD_GROUP):
            groups[(pod.namespace, pod.labels[POD_GROUP])] += 1
    group_docs = [
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": group, "namespace": ns},
            "spec": {"minMember": size},
        }
        for (ns, group), size in sorted(groups.items())
    ]
    nodes = [history.nodes[n] for n in sorted(history.nodes) if history.nodes[n].capacity]
    out.files["nodes.yaml"] = [node_manifest(n) for n in nodes]
    out.files["pods.yaml"] = pod_docs
    if group_docs:
        out.files["podgroups.yaml"] = group_docs
    if given:
        out.files["priorityclasses.yaml"] = [given[n] for n in sorted(given)]
    out.files["simulation.yaml"] = [simulation_manifest(history, name)]
    out.pods, out.nodes, out.gangs = len(pods), len(nodes), len(group_docs)
    out.jobs = len({(p.namespace, p.owner[1]) for p in pods if p.owner is not None and p.owner[0] == "Job"})
    out.notes = _notes(history, pods, nodes, group_docs, sorted(split), classes)
    return out


def _notes(
    history: History,
    pods: list[PodRecord],
    nodes: list[NodeRecord],
    groups: list[dict[str, Any]],
    split: list[str],
    known_classes: frozenset[str],
) -> list[str]:
    notes = list(NOT_IN_METRICS)
    classes = sorted({p.priority_class for p in pods if p.priority_class} - known_classes)
    if classes:
        notes.append(
            f"priority classes {', '.join(classes)}: kube-state-metrics exports no PriorityClass, so the "
            f"pods keep the name in the annotation {PRIORITY_CLASS} only (give them with --priority-classes, "
            "from kubectl get priorityclasses -o yaml, to replay priorities)"
        )
    if split:
        notes.append(
            f"gangs {', '.join(split[:5])} ran on more than one node: gpufleet.io/duration is the measured "
            f"time divided by the stretch gpufleet's ring model gives that placement ({STRETCH}), so "
            "replayed on the same placement they last as measured, on fewer nodes less"
        )
    if groups:
        notes.append(
            f"{len(groups)} pod group(s): each PodGroup's minMember is the number of its pods seen in the "
            "window (the real PodGroup's minMember and scheduleTimeoutSeconds are not in the metrics)"
        )
    ungrouped = sorted({f"{p.owner[0]}/{p.owner[1]}" for p in pods if p.owner and p.owner[0] != "Job"})
    if ungrouped:
        notes.append(
            f"{len(ungrouped)} owner(s) without a uid in the metrics are named in the annotation {OWNER} "
            f"only (e.g. {ungrouped[0]}); their pods are replayed as bare pods"
        )
    jobs_without_uid = sorted(
        {
            p.owner[1]
            for p in pods
            if p.owner and p.owner[0] == "Job" and not any(k in p.labels for k in JOB_UID_LABELS)
        }
    )
    if jobs_without_uid:
        notes.append(
            f"Jobs {', '.join(jobs_without_uid[:5])}: the label batch.kubernetes.io/controller-uid is not "
            "exported (add it to kube-state-metrics' --metric-labels-allowlist), so their pods carry no "
            "ownerReferences"
        )
    failed = [p for p in pods if p.phase == "Failed"]
    if failed:
        notes.append(
            f"{len(failed)} pod(s) Failed; the replay runs them for the same time and they end Succeeded"
        )
    schedulers = sorted({p.scheduler for p in pods if p.scheduler and p.scheduler != DEFAULT_SCHEDULER})
    if schedulers:
        notes.append(
            f"schedulers {', '.join(schedulers)}: add their KubeSchedulerConfiguration, else their pods "
            "stay Pending"
        )
    changed = [n.name for n in nodes if n.created > history.start or n.last_seen < history.end - LOOKBACK_S]
    if changed:
        notes.append(
            f"{len(changed)} node(s) were created or deleted during the window (e.g. {changed[0]}); they are "
            "written as present the whole time (put them in a NodePool to replay autoscaling)"
        )
    if history.unreadable:
        notes.append(
            "kube-state-metrics' sanitised names that cannot be mapped back (left out): "
            + ", ".join(sorted(history.unreadable))
        )
    return notes
