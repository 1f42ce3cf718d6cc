"""Kueue's Workload as gpufleet's Kueue controller keeps it, shared by its parts (``control.kueue_queues``,
``control.kueue_pods_ready``, ``control.kueue_provisioning_checks``, ``control.kueue_summary``).

One record per workload (upstream's ``Workload`` object: ``pkg/workload``, ``apis/kueue/v1beta2/
workload_types.go``): its queue and creation, its pods, its admission (``status.admission``), the
``waitForPodsReady`` state (``PodsReady``, ``requeueState``, ``spec.active``) and its admission checks
(``status.admissionChecks``, their ProvisioningRequests); with what reads its pods (its pod sets, its live
pods) and merges its assigned flavors into a pod (``podset.Merge``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpufleet.control.port import PodStatus, QueuedWorkload
from gpufleet.model.kueue import ResourceFlavor
from gpufleet.model.node import Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import PodSet
from gpufleet.scheduling.kueue.admission_checks import CheckState
from gpufleet.scheduling.kueue.workload import POD_SET, Admitted


@dataclass
class KueueWorkload:
    key: str
    queue: str  # the LocalQueue's name, in the workload's namespace
    created_s: float
    order: int
    #: the controller of a Job or another integrated kind (suspended, not failed, when evicted);
    #: None for pods and PodGroups
    controller: QueuedWorkload | None = None
    pods: list[str] = field(default_factory=list)  # pods of the current run, gated or admitted
    leaving: set[str] = field(default_factory=set)  # pods of an evicted run, until they are gone
    #: pods of earlier runs that succeeded: they count toward PodsReady while they exist, as the workload's
    #: status counts them (a Job's ``status.succeeded``, an MPIJob's replica statuses)
    succeeded_before: list[str] = field(default_factory=list)
    admitted: Admitted | None = None
    host_of: dict[str, str] = field(default_factory=dict)  # TAS: pod key -> its node
    message: str = "Workload is waiting to be considered by Kueue"
    admissions: list[float] = field(default_factory=list)
    admitted_counts: list[dict[str, int]] = field(default_factory=list)  # each admission's pods per pod set
    evictions: list[dict[str, Any]] = field(default_factory=list)
    finished_s: float | None = None
    deleted_s: float | None = None  # deleted with the Job that owns it (its ``ttlSecondsAfterFinished``)
    # waitForPodsReady
    ready: bool = False  # PodsReady in its current admission
    ready_lost_s: float | None = None  # when it last lost PodsReady in its current admission
    requeue_count: int = 0  # ``requeueState.count``
    requeue_at: float | None = None  # ``requeueState.requeueAt``
    active: bool = True  # ``spec.active``: false once deactivated
    #: a dump's Workload (``model.kueue_dumped``): its ``Evicted`` condition (time, reason), the eviction it
    #: is ordered by until one in the run, and its ``spec.priority`` (None: derived from its pods)
    dumped_eviction: tuple[float, str] | None = None
    priority: int | None = None
    # admission checks
    started: bool = False  # Admitted: quota reserved and every check Ready (its pods released)
    reservations: list[float] = field(default_factory=list)  # each QuotaReserved
    checks: dict[str, CheckState] = field(default_factory=dict)  # ``status.admissionChecks``, by name
    #: each check's ProvisioningRequests (keys ``<ns>/<name>``), in the order they were created
    requests: dict[str, list[str]] = field(default_factory=dict)
    created_requests: dict[str, list[str]] = field(default_factory=dict)  # each check's requests, by name
    check_events: list[dict[str, Any]] = field(default_factory=list)  # the events about its checks
    #: each check's history: [time, state, message] at each change
    check_history: dict[str, list[list[Any]]] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.key.split("/")[1]

    def live_pods(self, pods: Mapping[str, PodStatus]) -> list[Pod]:
        return [pods[k].pod for k in self.pods if not gone(pods, k)]

    def pod_sets(self, pods: Mapping[str, PodStatus]) -> list[PodSet]:
        """Its controller's pod sets; pods and a PodGroup's are one pod set ``main`` of their live
        pods, the first the template."""
        if self.controller is not None:
            return self.controller.pod_sets()
        live = self.live_pods(pods)
        return [PodSet(POD_SET, len(live), live[0])]


def gone(pods: Mapping[str, PodStatus], pod_key: str) -> bool:
    rec = pods[pod_key]
    return rec.deleted_s is not None or rec.phase in ("Succeeded", "Failed")


def flavored(
    pod: Pod, assigned: dict[str, str], flavors: Mapping[str, ResourceFlavor]
) -> tuple[dict[str, str], tuple[Toleration, ...]]:
    """The pod's node selector and tolerations with its assigned flavors' ``nodeLabels`` and
    ``tolerations`` merged in (``podset.Merge``)."""
    selector = dict(pod.node_selector)
    tolerations = pod.tolerations
    for flavor in (flavors[f] for f in sorted(set(assigned.values()))):
        selector = {**flavor.node_labels, **selector}
        tolerations += tuple(t for t in flavor.tolerations if t not in tolerations)
    return selector, tolerations


#: evict an admitted workload for a controller's reason (no preemptor) and its underlying cause
Evict = Callable[[KueueWorkload, str, str | None], None]
