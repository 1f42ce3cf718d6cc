"""What the exporters of a GPU cluster would expose about the simulated cluster at one instant: the
metric families of dcgm-exporter, kube-state-metrics, cluster-autoscaler and kube-scheduler, with
their upstream names and labels, read from the simulation's state (``sim.exporter_scrapes`` calls
``groups`` at each scrape).

Upstream names and labels mirrored:
- dcgm-exporter (``DCGM_FI_DEV_*``; labels ``gpu``, ``UUID``, ``device``, ``modelName``, ``Hostname``,
  and ``namespace``, ``pod`` of the pod a GPU is allocated to, as its Kubernetes pod mapping adds; a GPU
  shared by several pods gives one series per pod; MIG nodes have none, their instances' load being
  ``DCGM_FI_PROF_*``). gpufleet knows a GPU's load only for pods a
  ``Traffic`` drives (busy share, as the HPA reads it); any other pod that computes counts 100, one
  that does not 0; the HELP text says so.
- kube-state-metrics v2 (``internal/store/pod.go``, ``node.go``): resource names sanitised to
  ``[a-zA-Z0-9_]`` (``nvidia.com/gpu`` -> ``nvidia_com_gpu``), units ``core``, ``byte``, ``integer``.
  A pod's requests are modelled summed over its containers: no ``container`` label.
- cluster-autoscaler (``metrics/metrics.go``): nodes by state (a node whose GPUs have not registered counts
  ``unready``, as the GPU custom-resources processor makes it; one launched, not yet joined,
  ``unregistered``), unschedulable pods by ``type`` (the pods ``listPods`` lists: ``isUnschedulable``'s,
  whatever their scheduler, and, with bypassed schedulers, the unprocessed ones), node groups, the
  scale-up/down counters, and the unneeded and unremovable nodes as the autoscaler's last scan left them
  (``unremovable_nodes_count``'s ``reason`` is ``simulator.UnremovableReason``'s number, as upstream formats
  it; a reason keeps its last count once no scan finds it, as upstream's gauge does).
- kube-scheduler (``pkg/scheduler/metrics``): ``scheduler_pending_pods{queue}`` and
  ``scheduler_schedule_attempts_total{result,profile}``.

Every series also carries ``job`` and ``instance``, the target labels a Prometheus scrape adds.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING

from gpufleet.scheduling.scheduler import Outcome
from gpufleet.sim.records import PodRecord

if TYPE_CHECKING:
    from gpufleet.sim.simulation import Simulation

Labels = tuple[tuple[str, str], ...]
Reading = tuple[str, Labels, float]  # family name, labels, value
#: a group of series read together: its identity, the state its series follow from (unchanged: the
#: series are unchanged), and how to read them
Group = tuple[Hashable, Hashable, Callable[[], Iterable[Reading]]]


@dataclass(frozen=True)
class Family:
    name: str  # a counter's samples are named ``<name>_total``
    type: str  # "gauge" | "counter"
    help: str


GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
POD_INFO = "kube_pod_info"
POD_PHASE = "kube_pod_status_phase"
POD_SCHEDULED = "kube_pod_status_scheduled"
POD_REQUESTS = "kube_pod_container_resource_requests"
NODE_INFO = "kube_node_info"
NODE_CAPACITY = "kube_node_status_capacity"
NODE_ALLOCATABLE = "kube_node_status_allocatable"
NODE_UNSCHEDULABLE = "kube_node_spec_unschedulable"
CA_NODES = "cluster_autoscaler_nodes_count"
CA_UNSCHEDULABLE = "cluster_autoscaler_unschedulable_pods_count"
CA_NODE_GROUPS = "cluster_autoscaler_node_groups_count"
CA_UNNEEDED = "cluster_autoscaler_unneeded_nodes_count"
CA_UNREMOVABLE = "cluster_autoscaler_unremovable_nodes_count"
CA_SCALED_UP = "cluster_autoscaler_scaled_up_nodes"
CA_SCALED_DOWN = "cluster_autoscaler_scaled_down_nodes"
CA_FAILED_SCALE_UPS = "cluster_autoscaler_failed_scale_ups"
PENDING_PODS = "scheduler_pending_pods"
ATTEMPTS = "scheduler_schedule_attempts"

#: every family, in the order they are written
FAMILIES = (
    Family(
        GPU_UTIL,
        "gauge",
        "GPU utilization (in %). Simulated: for a pod a gpufleet Traffic drives, the share of its serving "
        "capacity in use (100 while a backlog waits); gpufleet models no load for other pods: 100 while "
        "the pod computes (working), 0 otherwise.",
    ),
    Family(FB_USED, "gauge", "Framebuffer memory used (in MiB): the pod's gpufleet.io/gpu-memory."),
    Family(POD_INFO, "gauge", "Information about pod."),
    Family(POD_PHASE, "gauge", "The pods current phase."),
    Family(POD_SCHEDULED, "gauge", "Describes the status of the scheduling process for the pod."),
    Family(POD_REQUESTS, "gauge", "The number of requested request resource by a container (summed)."),
    Family(NODE_INFO, "gauge", "Information about a cluster node."),
    Family(NODE_CAPACITY, "gauge", "The capacity for different resources of a node."),
    Family(NODE_ALLOCATABLE, "gauge", "The allocatable for different resources of a node."),
    Family(NODE_UNSCHEDULABLE, "gauge", "Whether a node can schedule new pods."),
    Family(CA_NODES, "gauge", "Number of nodes in cluster."),
    Family(CA_UNSCHEDULABLE, "gauge", "Number of unschedulable pods in the cluster."),
    Family(CA_NODE_GROUPS, "gauge", "Number of node groups managed by CA."),
    Family(CA_UNNEEDED, "gauge", "Number of nodes currently considered unneeded by CA."),
    Family(CA_UNREMOVABLE, "gauge", "Number of nodes currently considered unremovable by CA."),
    Family(CA_SCALED_UP, "counter", "Number of nodes added by CA."),
    Family(CA_SCALED_DOWN, "counter", "Number of nodes removed by CA."),
    Family(CA_FAILED_SCALE_UPS, "counter", "Number of times scale-up operation has failed."),
    Family(PENDING_PODS, "gauge", "Number of pending pods, by the queue type."),
    Family(ATTEMPTS, "counter", "Number of attempts to schedule pods, by the result."),
)

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
#: kube-scheduler's attempt result for each scheduling outcome (a pod waiting at Permit is counted
#: when it is bound or rejected)
ATTEMPT_RESULTS = {
    "bound": "scheduled",
    "unschedulable": "unschedulable",
    "preempting": "unschedulable",
    "rejected": "unschedulable",
}
_STANDARD = ("cpu", "memory", "pods", "ephemeral-storage")
_KSM = (("job", "kube-state-metrics"), ("instance", "kube-state-metrics:8080"))
_CA = (("job", "cluster-autoscaler"), ("instance", "cluster-autoscaler:8085"))
_CA_FAILURES = {"scale-up-failed": "cloudProviderError", "provision-timeout": "timeout"}


def ksm_resource(name: str) -> tuple[str, str]:
    """kube-state-metrics' ``resource`` and ``unit`` labels for a Kubernetes resource name."""
    if name == "cpu":
        unit = "core"
    elif name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        unit = "byte"
    else:
        unit = "integer"
    return re.sub(r"[^a-zA-Z0-9_]", "_", name), unit


def _quantity(name: str, value: float) -> float:
    return value / 1000 if name == "cpu" else float(value)  # cpu is kept in millicores


def pod_uid(rec: PodRecord) -> str:
    """A stable uid for the pod (a name created again is another pod)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpufleet:pod/{rec.pod.key}@{rec.created_s!r}"))


@cache
def gpu_uuid(node: str, gpu: int) -> str:
    return f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, f'gpufleet:gpu/{node}/{gpu}')}"


def _pods(sim: Simulation) -> list[PodRecord]:
    """The pods the API server holds now (deleted ones are gone)."""
    return [rec for rec in sim.records.values() if rec.deleted_s is None]


def _pod_readings(rec: PodRecord, scheduled: bool | None) -> list[Reading]:
    """kube-state-metrics' series of one pod; ``scheduled``: its PodScheduled condition, if it has one."""
    pod = rec.pod
    labels = (("namespace", pod.namespace), ("pod", pod.name), ("uid", pod_uid(rec)))
    info: list[tuple[str, str]] = [*labels, ("node", rec.node or "")]
    if pod.owner is not None:
        info += [("created_by_kind", pod.owner.kind), ("created_by_name", pod.owner.name)]
    info.append(("priority_class", pod.priority_class_name or ""))
    out: list[Reading] = [(POD_INFO, (*info, *_KSM), 1.0)]
    out += [(POD_PHASE, (*labels, ("phase", p), *_KSM), float(rec.phase == p)) for p in PHASES]
    if scheduled is not None:
        status = "true" if scheduled else "false"
        for condition in ("true", "false", "unknown"):
            out.append(
                (POD_SCHEDULED, (*labels, ("condition", condition), *_KSM), float(condition == status))
            )
    node = (("node", rec.node),) if rec.node else ()
    for name, value in sorted(pod.requests.items()):
        resource, unit = ksm_resource(name)
        request = (*labels, *node, ("resource", resource), ("unit", unit), *_KSM)
        out.append((POD_REQUESTS, request, _quantity(name, value)))
    return out


def _kube_state_pods(pods: list[PodRecord]) -> Iterator[Group]:
    for rec in pods:
        gated = rec.log[-1][1] == "gated"
        scheduled = True if rec.bound_s is not None else False if rec.message is not None or gated else None
        key = (rec.phase, rec.node, scheduled)
        yield (rec.pod.key, rec.created_s), key, partial(_pod_readings, rec, scheduled)


def _node_readings(
    name: str, capacity: dict[str, int], allocatable: dict[str, int], cordoned: bool
) -> list[Reading]:
    labels = (("node", name),)
    out: list[Reading] = [(NODE_INFO, (*labels, *_KSM), 1.0)]
    # extended resources (GPUs) appear once their device plugin registers them, in both
    shown = [r for r in sorted(allocatable) if r in _STANDARD or allocatable[r] > 0]
    for family, values in ((NODE_CAPACITY, capacity), (NODE_ALLOCATABLE, allocatable)):
        for resource_name in shown:
            resource, unit = ksm_resource(resource_name)
            value = _quantity(resource_name, values.get(resource_name, allocatable[resource_name]))
            out.append((family, (*labels, ("resource", resource), ("unit", unit), *_KSM), value))
    out.append((NODE_UNSCHEDULABLE, (*labels, *_KSM), float(cordoned)))
    return out


def _kube_state_nodes(sim: Simulation) -> Iterator[Group]:
    state = sim.state
    for i in state.active_indices().tolist():
        node = state.nodes[i]
        allocatable = {r: int(state.alloc[i, c]) for r, c in state.res_index.items()}
        key = (node.unschedulable, tuple(allocatable.items()))
        build = partial(_node_readings, node.name, node.capacity, allocatable, node.unschedulable)
        yield ("node", node.name), key, build


def _gpu_util(sim: Simulation, rec: PodRecord) -> float:
    if not rec.working:
        return 0.0
    traffic = sim.traffic_of(rec.pod)
    util = traffic.metric(GPU_UTIL) if traffic is not None else None
    return 100.0 if util is None else util


#: what dcgm-exporter reads of one GPU: each pod holding it, with its utilisation and memory used
GpuHolders = tuple[tuple[str, str, float, float | None], ...]


def _dcgm_readings(node: str, model: str, gpus: tuple[GpuHolders, ...]) -> list[Reading]:
    out: list[Reading] = []
    name = (("modelName", model.replace("-", " ")),) if model else ()  # GFD's label, unsanitised
    target = (("Hostname", node), ("job", "dcgm-exporter"), ("instance", f"{node}:9400"))
    for gpu, holders in enumerate(gpus):
        device = (("gpu", str(gpu)), ("UUID", gpu_uuid(node, gpu)), ("device", f"nvidia{gpu}"), *name)
        if not holders:
            out += [(GPU_UTIL, (*device, *target), 0.0), (FB_USED, (*device, *target), 0.0)]
        for namespace, pod, util, memory_mib in holders:
            labels = (*device, target[0], ("namespace", namespace), ("pod", pod), *target[1:])
            out.append((GPU_UTIL, labels, util))
            if memory_mib is not None:  # unknown: no series rather than a guess
                out.append((FB_USED, labels, memory_mib))
    return out


def _dcgm(sim: Simulation) -> Iterator[Group]:
    for name in sorted(sim.state.index):
        if sim.nodes[name].gpu_ready_s is None:  # the exporter runs once the GPUs are set up
            continue
        devices = sim.cluster.devices_of(name)
        if devices.sharing == "mig":  # dcgm-exporter reports MIG instances' load as DCGM_FI_PROF_*
            continue
        placed = [
            (unit.gpu, assignment.pod.key)
            for assignment in sim.state.pods_on[sim.state.index[name]].values()
            for unit in sim.records[assignment.pod.key].devices  # whole GPUs, replicas, shares
        ]
        if not devices.gpus or any(not 0 <= gpu < devices.gpus for gpu, _ in placed):
            continue  # no device-plugin GPUs (DRA's), or a unit on a GPU not known: no series, not a guess
        holders: list[set[str]] = [set() for _ in range(devices.gpus)]
        for gpu, key in placed:
            holders[gpu].add(key)
        gpus = []
        for keys in holders:
            held = []
            for rec in (sim.records[key] for key in sorted(keys)):
                memory = rec.pod.behavior.gpu_memory_bytes
                used = None if memory is None else round(memory / 2**20, 3) if rec.working else 0.0
                held.append((rec.pod.namespace, rec.pod.name, _gpu_util(sim, rec), used))
            gpus.append(tuple(held))
        model = sim.state.nodes[sim.state.index[name]].labels.get("nvidia.com/gpu.product", "")
        state = tuple(gpus)
        yield ("dcgm", name), (model, state), partial(_dcgm_readings, name, model, state)


def _ca_nodes(sim: Simulation) -> Iterator[Reading]:
    launching = [launch for rt in sim.pools.values() for launch in rt.launching.values()]
    joined = sum(1 for launch in launching if launch.joined)
    counts = {
        "ready": sim.state.size_active - joined,
        "unready": joined,
        "notStarted": 0,
        "longUnregistered": 0,
        "unregistered": len(launching) - joined,
    }
    for state, count in counts.items():
        yield CA_NODES, (("state", state), *_CA), float(count)
    autoscaled = sum(1 for rt in sim.pools.values() if rt.pool.max is not None)
    yield CA_NODE_GROUPS, (("node_group_type", "autoscaled"), *_CA), float(autoscaled)
    yield CA_NODE_GROUPS, (("node_group_type", "autoprovisioned"), *_CA), 0.0
    # ``UpdateUnschedulablePodsCount``: what ``listPods`` lists (unprocessed pods: with bypassed schedulers)
    bypassed = frozenset(sim.autoscaler.settings.bypassed_scheduler_names)
    unprocessed = sim.scheduler_unprocessed_pods(bypassed) if bypassed else []
    yield CA_UNSCHEDULABLE, (("type", "unschedulable"), *_CA), float(len(sim.unschedulable_pods()))
    yield CA_UNSCHEDULABLE, (("type", "scheduler_unprocessed"), *_CA), float(len(unprocessed))
    gauges = sim.autoscaler.gauges
    yield CA_UNNEEDED, _CA, float(gauges.unneeded)
    for reason, count in sorted(gauges.unremovable.items()):
        yield CA_UNREMOVABLE, (("reason", str(int(reason))), *_CA), float(count)


def _scheduler_queues(sim: Simulation, t: float, pods: list[PodRecord]) -> Iterator[Reading]:
    gated = Counter(rec.scheduler for rec in pods if rec.log[-1][1] == "gated")
    for s in sim.schedulers:
        queue = s.queue
        waiting = len(queue.entries) - len(queue.unschedulable)
        backoff = len(queue.backing_off)
        counts = {
            "active": waiting - backoff,
            "backoff": backoff,
            "unschedulable": len(queue.unschedulable),
            "gated": gated[s.name],
        }
        target = (("job", "kube-scheduler"), ("instance", f"{s.name}:10259"))
        for name, count in counts.items():
            yield PENDING_PODS, (("queue", name), *target), float(count)


@dataclass
class Counters:
    """The counters the exporters keep: scheduling attempts (told by the simulation as they happen)
    and cluster-autoscaler's scale-ups and scale-downs (read from its event log)."""

    attempts: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # scheduler, profile, result
    scaled_up: int = 0
    scaled_down: Counter[str] = field(default_factory=Counter)  # by reason
    failed_scale_ups: Counter[str] = field(default_factory=Counter)  # by reason
    events_seen: int = 0
    removed_seen: int = 0

    def attempted(self, scheduler: str, outcome: Outcome) -> None:
        # an attempt a plugin's Error status aborted is ``error`` (``metrics.PodScheduleError``)
        result = "error" if outcome.error else ATTEMPT_RESULTS.get(outcome.kind)
        if result is not None:
            self.attempts[(scheduler, outcome.pod.scheduler_name, result)] += 1

    def catch_up(self, sim: Simulation) -> None:
        """Count the autoscaler's events logged, and the nodes it deleted, since the last scrape (a node is
        counted scaled down once deleted, not when its deletion starts: ``metrics.RegisterScaleDown`` is
        called by ``RegisterAndRecordSuccessfulScaleDownEvent``, with ``nodeScaleDownReason``)."""
        events = sim.autoscaler.events
        for event in events[self.events_seen :]:
            if event.kind == "scale-up":
                self.scaled_up += len(event.nodes)
            elif event.kind in _CA_FAILURES:
                self.failed_scale_ups[_CA_FAILURES[event.kind]] += 1
        self.events_seen = len(events)
        removed = sim.autoscaler.actuator.removed
        for node in removed[self.removed_seen :]:
            self.scaled_down[node.reason] += 1
        self.removed_seen = len(removed)

    def readings(self, sim: Simulation, autoscaled: bool) -> Iterator[Reading]:
        for (scheduler, profile, result), count in sorted(self.attempts.items()):
            target = (("job", "kube-scheduler"), ("instance", f"{scheduler}:10259"))
            yield ATTEMPTS, (("profile", profile), ("result", result), *target), float(count)
        if not autoscaled:
            return
        self.catch_up(sim)
        yield CA_SCALED_UP, _CA, float(self.scaled_up)
        for reason, count in sorted(self.scaled_down.items()):
            yield CA_SCALED_DOWN, (("reason", reason), *_CA), float(count)
        for reason, count in sorted(self.failed_scale_ups.items()):
            yield CA_FAILED_SCALE_UPS, (("reason", reason), *_CA), float(count)


def _few(group: str, readings: Iterable[Reading]) -> Group:
    """A group of a few series, read in full at every scrape: the readings are their own key."""
    values = tuple(readings)
    return (group,), values, lambda: values


def groups(sim: Simulation, t: float, counters: Counters) -> Iterator[Group]:
    """Every series the exporters would expose at ``t``, in groups (a pod's, a node's, a node's GPUs',
    each loop's), each group with the state its series follow from."""
    pods = _pods(sim)
    yield from _dcgm(sim)
    yield from _kube_state_pods(pods)
    yield from _kube_state_nodes(sim)
    autoscaled = any(rt.pool.max is not None for rt in sim.pools.values())
    if autoscaled:
        yield _few("cluster-autoscaler", _ca_nodes(sim))
    yield _few("kube-scheduler", _scheduler_queues(sim, t, pods))
    yield _few("counters", counters.readings(sim, autoscaled))
