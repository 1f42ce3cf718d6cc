"""A dump's Kueue ``Workload`` object: what Kueue v0.19.2 acts on when it finds one already there.

Mirrors ``kubernetes-sigs/kueue: apis/kueue/v1beta2/workload_types.go`` and ``pkg/workload/workload.go``:

* its ``metadata.creationTimestamp``: the queue-order time (``Ordering.GetQueueOrderTimestamp``) of a workload
  not evicted;
* its ``Evicted`` condition (status ``True``): its reason and ``lastTransitionTime``, the queue-order time of
  one evicted by the PodsReady timeout (``requeuingStrategy.timestamp: Eviction``) or by an admission check;
* ``status.requeueState`` (``count``, ``requeueAt``): one evicted by ``waitForPodsReady`` goes back to its
  queue only at ``requeueAt`` (``backoffWaitingTimeExpired``), and its next backoff counts on from ``count``
  (``UpdateRequeueState``);
* ``spec.active``: false, deactivated, never admitted (``IsAdmissible``);
* ``spec.priority``: the priority Kueue's scheduler reads (``priority.Priority``), set from the job when the
  Workload was made;
* ``status.admission`` of a Workload admitted (``QuotaReserved`` and ``Admitted`` ``True``): the ClusterQueue
  whose quota it holds and each pod set's ``podSetAssignments`` (its flavor of each resource, ``count``,
  ``resourceUsage``). Kueue's cache counts an admitted Workload's usage from them, not from its job
  (``pkg/cache/scheduler`` ``AddOrUpdateWorkload``, ``workload.NewInfo``: ``totalRequestsFromAdmission``); its
  ``Admitted`` condition's ``lastTransitionTime`` is when it was admitted.

Times are Unix seconds, put on a run's clock by ``on_clock`` as a dump's pods' are
(``model.node_readiness.created_on_clock``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.model.node_readiness import created_on_clock


@dataclass(frozen=True)
class DumpedPodSetAdmission:
    """One ``status.admission.podSetAssignments`` entry: its pod set, ``count`` (None: unset, the pod set's
    count), its flavor of each resource and ``resourceUsage`` (canonical units: ``model.resources``)."""

    name: str
    count: int | None
    flavors: Mapping[str, str]
    usage: Mapping[str, int]


@dataclass(frozen=True)
class DumpedAdmission:
    """A dump's admitted Workload's ``status.admission`` and when it was admitted (its ``Admitted``
    condition's ``lastTransitionTime``, Unix seconds; None: not given)."""

    cluster_queue: str
    pod_sets: tuple[DumpedPodSetAdmission, ...]
    admitted_unix: float | None = None
    #: the resources each (flavor, resource) of the admission takes, summed over its pod sets (``Info.Usage``:
    #: a resource without a flavor takes none)
    usage: Mapping[tuple[str, str], int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        usage: dict[tuple[str, str], int] = {}
        for ps in self.pod_sets:
            for resource, value in ps.usage.items():
                flavor = ps.flavors.get(resource)
                if flavor is not None:
                    usage[flavor, resource] = usage.get((flavor, resource), 0) + value
        object.__setattr__(self, "usage", usage)


@dataclass(frozen=True)
class DumpedWorkload:
    """A dump's Workload, by the job it belongs to (``KueueObjects.dumped``)."""

    name: str  # ``<ns>/<name>``
    created_unix: float | None = None
    active: bool = True
    requeue_count: int = 0
    requeue_at_unix: float | None = None
    #: the ``Evicted`` condition while ``True``: (reason, ``lastTransitionTime``)
    evicted: tuple[str, float | None] | None = None
    priority: int | None = None
    #: its admission, where it is admitted and agrees with the input (``kube.kueue_workloads``)
    admission: DumpedAdmission | None = None


@dataclass(frozen=True)
class DumpedOnClock:
    """A dump's Workload with its times on a run's clock: created (no later than time 0; None: not known, its
    job's counts), evicted (time, no later than time 0, and reason) and requeued at (may be after time 0: its
    backoff still to wait out); admitted (its admission, and when: no later than time 0)."""

    created_s: float | None
    active: bool
    requeue_count: int
    requeue_at_s: float | None
    evicted: tuple[float, str] | None
    priority: int | None
    admission: DumpedAdmission | None = None
    admitted_s: float = 0.0


def on_clock(dumped: DumpedWorkload, zero: float | None) -> DumpedOnClock:
    """``dumped`` on the run's clock of time 0 ``zero`` (Unix seconds; None: the dump has no time 0, and its
    Workload's eviction and requeue times count as time 0)."""
    created = None if dumped.created_unix is None or zero is None else min(dumped.created_unix - zero, 0.0)
    requeue_at = None
    if dumped.requeue_at_unix is not None:
        requeue_at = 0.0 if zero is None else dumped.requeue_at_unix - zero
    evicted = None
    if dumped.evicted is not None:
        reason, at = dumped.evicted
        evicted = (created_on_clock(at, zero, 0.0), reason)
    admission = dumped.admission
    admitted = 0.0 if admission is None else created_on_clock(admission.admitted_unix, zero, 0.0)
    return DumpedOnClock(
        created,
        dumped.active,
        dumped.requeue_count,
        requeue_at,
        evicted,
        dumped.priority,
        admission,
        admitted,
    )
