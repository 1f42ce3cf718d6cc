"""Builders for the port of Kueue's own preemption table (``kubernetes-sigs/kueue:
pkg/scheduler/preemption/preemption_test.go``, ``TestPreemption``): upstream's ``utiltesting``
wrappers as gpufleet's model, and ``Preemptor.GetTargets`` + ``IssuePreemptions`` as a call of
``preemption_targets`` on a quota snapshot built from the admitted workloads.

* ``flavor_quotas("default", ("cpu", "6", "6"))`` is ``MakeFlavorQuotas("default").Resource(cpu,
  "6", "6")``: nominal quota, then borrowing and lending limits ("" or absent: unset);
* ``cluster_queue(name, group, ..., cohort=, within=, reclaim=)`` is ``MakeClusterQueue(name)
  .Cohort(cohort).ResourceGroup(group...).Preemption(...)``, each group a tuple of flavor quotas;
* ``admitted(name, cq, {"cpu": "2"}, priority=-1)`` is ``MakeWorkload(name, "").Priority(-1)
  .Request(cpu, "2").ReserveQuotaAt(MakeAdmission(cq).Assignment(cpu, "default", "2"), now)``;
* ``incoming(cq, main({"cpu": "2"}), priority=1)`` is the pending workload with the flavor
  assignment upstream's case gives it (``singlePodSetAssignment``), as the usage per (flavor,
  resource) that gpufleet's flavor assigner hands to preemption.

For the port of ``pkg/scheduler/flavorassigner/flavorassigner_test.go`` (``TestAssignFlavors``):
``quota_usage`` is a ``clusterQueueUsage`` literal and ``assigned`` runs ``assign_flavors`` for the
incoming workload on a snapshot of the queues and their usage.

For the ports of ``scheduler_test.go`` (``TestSchedule``) and ``scheduler_fs_test.go``
(``TestScheduleForFairSharing``): their shared fixtures (``BASE_CQS``, ``BASE_LQS``, the namespaces), a
``ScheduleRow`` per case (upstream's ``scheduleTestCase``) and ``check_schedule``, which runs one cycle of
``gpufleet.scheduling.kueue.admission.schedule`` (upstream's ``scheduler.schedule(ctx)``) and asserts what
the row wants.

For the port of ``preemption_fair_test.go`` (``TestFairPreemptions``): ``weight=`` is ``.FairWeight(...)``,
``cohort(name, group, parent=, weight=)`` is ``MakeCohort(name).Parent(parent).ResourceGroup(...)
.FairWeight(weight)``, and ``preempted(..., fair_sharing=FairSharing(...))`` runs fair sharing's
preemption (``&config.FairSharing{PreemptionStrategies: ...}``).

Upstream's workloads live in namespace ``""``, so its keys are ``/<name>``; gpufleet's are
``Job//<name>``. Upstream leaves ``creationTimestamp`` unset (the zero time) unless a case calls
``Creation``: here that is ``created=0.0``, and ``NOW`` stands for upstream's ``now``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.model.kueue import (
    ANY,
    BEST_EFFORT_FIFO,
    DEFAULT_FAIR_WEIGHT,
    DEFAULT_FUNGIBILITY,
    LOWER_PRIORITY,
    NAMESPACE_NAME_LABEL,
    NEVER,
    STRICT_FIFO,
    ClusterQueue,
    Cohort,
    FairSharing,
    FlavorFungibility,
    FlavorQuotas,
    FlavorResource,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.resources import parse_resource_list
from gpufleet.scheduling.kueue.admission import schedule, usage_of
from gpufleet.scheduling.kueue.admission_checks import (
    AdmittedCondition,
    CheckState,
    admitted_condition,
    checks_for_workload,
    has_all_required_checks,
)
from gpufleet.scheduling.kueue.flavors import Assignment, Granular, assign_flavors, no_simulation
from gpufleet.scheduling.kueue.preemption import preemption_targets
from gpufleet.scheduling.kueue.quota import QuotaSnapshot, Usage
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload

NOW = 1000.0
DEFAULT_FLAVOR = "default"


def _units(requests: Mapping[str, str]) -> dict[str, int]:
    parsed, problems = parse_resource_list(dict(requests), "requests")
    assert not problems, problems
    return parsed


def _amount(resource: str, quantity: str) -> int | None:
    return _units({resource: quantity})[resource] if quantity else None


def flavor_quotas(flavor: str, *resources: tuple[str, ...]) -> FlavorQuotas:
    """``MakeFlavorQuotas(flavor).Resource(name, nominal[, borrowingLimit[, lendingLimit]])...``."""
    quotas = {}
    for name, nominal, *limits in resources:
        borrowing, lending = (*limits, "", "")[:2]
        quotas[name] = ResourceQuota(
            _units({name: nominal})[name], _amount(name, borrowing), _amount(name, lending)
        )
    return FlavorQuotas(flavor, quotas)


def cluster_queue(
    name: str,
    *groups: tuple[FlavorQuotas, ...],
    cohort: str | None = None,
    within: str = NEVER,
    reclaim: str = NEVER,
    fungibility: FlavorFungibility = DEFAULT_FUNGIBILITY,
    borrow: str = NEVER,
    threshold: int | None = None,
    weight: float = DEFAULT_FAIR_WEIGHT,
    namespaces: tuple[Requirement, ...] = (),
    strategy: str = BEST_EFFORT_FIFO,
) -> ClusterQueue:
    """``MakeClusterQueue(name).Cohort(cohort).ResourceGroup(...)...Preemption({WithinClusterQueue:
    within, ReclaimWithinCohort: reclaim}).FlavorFungibility(fungibility).FairWeight(weight)``; a group
    covers the resources its flavors name. ``borrow`` and ``threshold`` are the preemption's
    ``BorrowWithinCohort: {Policy: borrow, MaxPriorityThreshold: threshold}``; ``namespaces`` is
    ``.NamespaceSelector(...)`` (default: ``MakeClusterQueue``'s ``{}``, every namespace) and
    ``strategy`` ``.QueueingStrategy(...)``."""
    return ClusterQueue(
        name,
        cohort,
        namespaces,
        queueing_strategy=strategy,
        resource_groups=_resource_groups(groups),
        reclaim_within_cohort=reclaim,
        within_cluster_queue=within,
        borrow_within_cohort=borrow,
        max_priority_threshold=threshold,
        flavor_fungibility=fungibility,
        fair_weight=weight,
    )


def _resource_groups(groups: tuple[tuple[FlavorQuotas, ...], ...]) -> tuple[ResourceGroup, ...]:
    """Each group of flavor quotas, covering the resources its flavors name."""
    return tuple(
        ResourceGroup(tuple(dict.fromkeys(r for f in flavors for r in f.resources)), flavors)
        for flavors in groups
    )


def cohort(
    name: str,
    *groups: tuple[FlavorQuotas, ...],
    parent: str | None = None,
    weight: float = DEFAULT_FAIR_WEIGHT,
) -> Cohort:
    """``MakeCohort(name).Parent(parent).ResourceGroup(...).FairWeight(weight)``."""
    return Cohort(name, parent, _resource_groups(groups), weight)


def queues(*cqs: ClusterQueue) -> dict[str, ClusterQueue]:
    return {cq.name: cq for cq in cqs}


def _workload(
    name: str,
    cq: str,
    priority: int,
    created: float,
    pod_sets: tuple[PodSetResources, ...],
    namespace: str = "",
) -> Workload:
    return Workload(f"Job/{namespace}/{name}", cq, priority, created, 0, pod_sets)


def admitted(
    name: str,
    cq: str,
    requests: Mapping[str, str],
    *,
    priority: int = 0,
    flavor: str = DEFAULT_FLAVOR,
    created: float = 0.0,
    reserved_at: float = NOW,
    namespace: str = "",
) -> Admitted:
    """A workload holding quota in ``cq``: every resource its pod set ``main`` requests from ``flavor``
    (``namespace``: ``MakeWorkload(name, namespace)``)."""
    amounts = _units(requests)
    main = PodSetResources("main", 1, amounts, Pod(name, namespace=namespace))
    return Admitted(
        _workload(name, cq, priority, created, (main,), namespace),
        {"main": {r: flavor for r in amounts}},
        {(flavor, r): v for r, v in amounts.items()},
        reserved_at,
    )


@dataclass(frozen=True)
class PodSet:
    """``MakePodSet(name, count).Request(...)`` (each pod's requests) and the flavor its assignment gives
    each resource; ``pod`` stands for its template's nodeSelector, node affinity and tolerations
    (``.NodeSelector(...)``, ``.Toleration(...)``; default: none), ``group`` for ``.PodSetGroup(name)``."""

    name: str
    count: int
    requests: Mapping[str, str]
    flavors: Mapping[str, str] = field(default_factory=dict)  # resource -> flavor; else ``default``
    pod: Pod | None = None
    group: str | None = None
    min_count: int | None = None  # ``.SetMinimumCount(n)``


def main(requests: Mapping[str, str], **flavors: str) -> PodSet:
    """The single pod set of ``MakeWorkload(...).Request(...)`` (``singlePodSetAssignment``)."""
    return PodSet("main", 1, requests, flavors)


@dataclass(frozen=True)
class Incoming:
    workload: Workload
    usage: Usage


def incoming(
    cq: str,
    *pod_sets: PodSet,
    priority: int = 0,
    created: float = 0.0,
    name: str = "in",
    reclaimable: Mapping[str, int] | None = None,
    namespace: str = "",
) -> Incoming:
    """The preemptor submitted to ``cq`` (upstream's ``targetCQ``) and its assignment's usage: each pod
    set's requests times its count, in the flavor the case assigns. ``reclaimable`` is upstream's
    ``wlReclaimablePods`` (``status.reclaimablePods``): each pod set's pods that no longer count;
    ``namespace``: ``MakeWorkload(name, namespace)``."""
    entries = []
    for ps in pod_sets:
        total = {resource: amount * ps.count for resource, amount in _units(ps.requests).items()}
        pod = Pod(name, namespace=namespace) if ps.pod is None else ps.pod
        entries.append(PodSetResources(ps.name, ps.count, total, pod, group=ps.group, min_count=ps.min_count))
    workload = _workload(name, cq, priority, created, tuple(entries), namespace)
    if reclaimable is not None:
        workload = workload.reclaimed({ps.name: ps.count for ps in pod_sets}, reclaimable)
    usage: Usage = {}
    for ps, entry in zip(pod_sets, workload.pod_sets, strict=True):
        for resource, amount in entry.requests.items():
            fr = (ps.flavors.get(resource, DEFAULT_FLAVOR), resource)
            usage[fr] = usage.get(fr, 0) + amount
    return Incoming(workload, usage)


def quota_usage(amounts: Mapping[FlavorResource, str]) -> Usage:
    """A ``resources.FlavorResourceQuantities`` literal: ``{("one", "cpu"): "3"}``."""
    return {fr: _units({fr[1]: q})[fr[1]] for fr, q in amounts.items()}


def assigned(
    cqs: Mapping[str, ClusterQueue],
    usage: Mapping[str, Usage],
    workload: Incoming,
    flavors: Mapping[str, ResourceFlavor],
    simulation: Mapping[FlavorResource, Granular] | None = None,
    fair_sharing: bool = False,
) -> Assignment:
    """``FlavorAssigner.Assign`` for the workload in its ClusterQueue, the queues using ``usage``; the
    preemption oracle is upstream's ``testOracle``: ``simulation``'s answer for a (flavor, resource), else
    ``Preempt`` leaving no borrowing. ``fair_sharing``: the case's ``enableFairSharing``."""
    cq = cqs[workload.workload.cluster_queue]
    answers = dict(simulation or {})

    def oracle(fr: FlavorResource, val: int) -> Granular:
        return answers.get(fr) or no_simulation(fr, val)

    return assign_flavors(workload.workload, cq, flavors, QuotaSnapshot(cqs, usage), oracle, fair_sharing)


def preempted(
    cqs: Mapping[str, ClusterQueue],
    running: list[Admitted],
    preemptor: Incoming,
    cohorts: Mapping[str, Cohort] | None = None,
    fair_sharing: FairSharing | None = None,
) -> set[tuple[str, str]]:
    """Upstream's ``gotPreempted``: each target as (``workload.Key``, reason). Like upstream, checks
    that the snapshot the search works on is left as it was (zero usage counts as none)."""
    snapshot = QuotaSnapshot(cqs, usage_of(running), cohorts)
    before = {q: {fr: v for fr, v in u.items() if v} for q, u in snapshot.usage.items()}
    cq = cqs[preemptor.workload.cluster_queue]
    targets = preemption_targets(preemptor.workload, cq, preemptor.usage, running, snapshot, fair_sharing)
    after = {q: {fr: v for fr, v in u.items() if v} for q, u in snapshot.usage.items()}
    assert after == before, "the snapshot was modified"
    return {(t.key.split("/", 1)[1], t.reason) for t in targets}


# -- TestSchedule and TestScheduleForFairSharing ------------------------------------------------------

#: The namespaces of upstream's ``runScheduleTestCases`` by their ``dep`` label (``default`` has none).
NAMESPACES = {
    "eng": ("eng-alpha", "eng-beta", "eng-gamma"),
    "sales": ("sales",),
    "lend": ("lend",),
}
#: A ``Preemption(kueue.ClusterQueuePreemption{WithinClusterQueue: ...})`` leaves ``ReclaimWithinCohort``
#: empty: the scheduler's cache takes the spec as given (the API server's default, ``Never``, is not applied
#: in the unit tests). Kept as upstream's object: ``reclaim=UNSET``.
UNSET = ""


def dep(value: str) -> tuple[Requirement, ...]:
    """``NamespaceSelector: dep In (value)``, as the names of the namespaces carrying that label (gpufleet's
    namespace selectors see a namespace's name only)."""
    return (Requirement(NAMESPACE_NAME_LABEL, "In", NAMESPACES[value]),)


def cpu(flavor: str, *quota: str) -> FlavorQuotas:
    """``MakeFlavorQuotas(flavor).Resource(cpu, nominal[, borrowingLimit[, lendingLimit]])``."""
    return flavor_quotas(flavor, ("cpu", *quota))


#: The ClusterQueues both scheduler tables start from.
BASE_CQS = queues(
    cluster_queue("sales", (cpu("default", "50", "0"),), namespaces=dep("sales"), strategy=STRICT_FIFO),
    cluster_queue(
        "eng-alpha",
        (cpu("on-demand", "50", "50"), cpu("spot", "100", "0")),
        cohort="eng",
        namespaces=dep("eng"),
        strategy=STRICT_FIFO,
    ),
    cluster_queue(
        "eng-beta",
        (cpu("on-demand", "50", "10"), cpu("spot", "0", "100")),
        (flavor_quotas("model-a", ("example.com/gpu", "20", "0")),),
        cohort="eng",
        namespaces=dep("eng"),
        strategy=STRICT_FIFO,
        reclaim=ANY,
        within=LOWER_PRIORITY,
    ),
    cluster_queue("flavor-nonexistent-cq", (cpu("nonexistent-flavor", "50"),), strategy=STRICT_FIFO),
    cluster_queue("lend-a", (cpu("default", "3", "", "2"),), cohort="lend", namespaces=dep("lend")),
    cluster_queue("lend-b", (cpu("default", "2", "", "2"),), cohort="lend", namespaces=dep("lend")),
)

#: (namespace, LocalQueue) -> ClusterQueue: the LocalQueues both scheduler tables start from.
BASE_LQS = {
    ("sales", "main"): "sales",
    ("sales", "blocked"): "eng-alpha",
    ("eng-alpha", "main"): "eng-alpha",
    ("eng-beta", "main"): "eng-beta",
    ("sales", "flavor-nonexistent-queue"): "flavor-nonexistent-cq",
    ("sales", "cq-nonexistent-queue"): "nonexistent-cq",
    ("lend", "lend-a-queue"): "lend-a",
    ("lend", "lend-b-queue"): "lend-b",
}


def lqs(namespace: str, **queue_to_cq: str) -> dict[tuple[str, str], str]:
    """``MakeLocalQueue(queue, namespace).ClusterQueue(cq)`` for each; ``_`` in a queue's name for ``-``."""
    return {(namespace, q.replace("_", "-")): cq for q, cq in queue_to_cq.items()}


def in_other(
    name: str,
    *groups: tuple[FlavorQuotas, ...],
    within: str = NEVER,
    reclaim: str = NEVER,
    borrow: str = NEVER,
) -> ClusterQueue:
    """``MakeClusterQueue(name).Cohort("other").Preemption(...).ResourceGroup(...)``: the scheduler tables'
    queues of the cohort ``other``."""
    return cluster_queue(name, *groups, cohort="other", within=within, reclaim=reclaim, borrow=borrow)


def cohorts(*items: Cohort) -> dict[str, Cohort]:
    return {c.name: c for c in items}


@dataclass(frozen=True)
class Pending:
    """``MakeWorkload(name, namespace).Queue(queue)`` with one pod set: ``MakePodSet(pod_set, count)
    .Request(...)`` (``Request`` on the workload itself: the pod set ``main`` of one pod); ``more``: the
    pod sets ``PodSets(...)`` gives after it."""

    ref: str  # "<namespace>/<name>"
    queue: str
    requests: Mapping[str, str]
    count: int = 1
    priority: int = 0
    created: float = 0.0
    pod_set: str = "main"
    more: tuple[PodSet, ...] = ()
    min_count: int | None = None  # the first pod set's ``.SetMinimumCount(n)``


def held(ref: str, cq: str, requests: Mapping[str, str], flavor: str, priority: int = 0) -> Admitted:
    """``MakeWorkload(name, namespace)...ReserveQuotaAt(MakeAdmission(cq)...Assignment(r, flavor, ...), now)``
    (or ``SimpleReserveQuota(cq, flavor, now)``): each resource requested, in ``flavor``."""
    namespace, name = ref.split("/")
    return admitted(name, cq, requests, priority=priority, flavor=flavor, namespace=namespace)


def held_pod_sets(ref: str, cq: str, *pod_sets: PodSet, priority: int = 0) -> Admitted:
    """``MakeWorkload(name, namespace).PodSets(...).ReserveQuotaAt(MakeAdmission(cq).PodSets(...), now)``:
    each pod set's requests times its count, each resource in the flavor the pod set names."""
    namespace, name = ref.split("/")
    arrived = incoming(cq, *pod_sets, priority=priority, name=name, namespace=namespace)
    flavors = {ps.name: {r: ps.flavors.get(r, DEFAULT_FLAVOR) for r in ps.requests} for ps in pod_sets}
    return Admitted(arrived.workload, flavors, arrived.usage, NOW)


#: ref -> (ClusterQueue, {(flavor, resource): amount}): what the workload's admission takes of each
#: (flavor, resource), summed over its pod sets
Assignments = dict[str, tuple[str, dict[FlavorResource, str]]]


def on(cq: str, flavor: str, **amounts: str) -> tuple[str, dict[FlavorResource, str]]:
    """``MakeAdmission(cq).PodSets(...Assignment(resource, flavor, amount))``; resource names with ``_``
    for ``-`` and ``__`` for ``/``."""
    return cq, {(flavor, r.replace("__", "/").replace("_", "-")): a for r, a in amounts.items()}


def single(cq: str, flavor: str, amount: str) -> tuple[str, dict[FlavorResource, str]]:
    """``MakeAdmission(cq).Assignment(cpu, flavor, amount)``."""
    return on(cq, flavor, cpu=amount)


@dataclass(frozen=True)
class ScheduleRow:
    """One case of upstream's ``scheduleTestCase``: the workloads holding quota (``admitted``) and those
    pending, and what one cycle leaves: ``wantAssignments``, ``wantLeft`` (the pending workloads still in
    their ClusterQueues' heaps), ``wantInadmissibleLeft`` (``want_inadmissible``), the workloads evicted
    with their ``Preempted`` condition's reason, and the ``QuotaReserved`` condition's message of some
    pending workloads (``want_messages``). ``fair_sharing``: ``enableFairSharing`` (None: the table's)."""

    admitted: list[Admitted]
    pending: list[Pending]
    want_assignments: Assignments
    want_left: set[str]
    want_preempted: set[tuple[str, str]] = field(default_factory=set)
    queues: dict[str, ClusterQueue] = field(default_factory=dict)  # additionalClusterQueues
    local_queues: dict[tuple[str, str], str] = field(default_factory=dict)  # additionalLocalQueues
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    fair_sharing: bool | None = None
    want_inadmissible: set[str] = field(default_factory=set)
    want_messages: dict[str, str] = field(default_factory=dict)
    #: the pod counts ``wantAssignments`` gives a workload admitted in the cycle (``.Count(n)``), where a case
    #: checks them (partial admission)
    want_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the admission check states a pending workload carries (``.AdmissionCheck(...)``), by ref
    checks: dict[str, tuple[CheckState, ...]] = field(default_factory=dict)
    #: the ``Admitted`` condition a workload admitted in the cycle gets (``wantWorkloads``), by ref
    want_admitted: dict[str, AdmittedCondition] = field(default_factory=dict)


@dataclass(frozen=True)
class ScheduleSuite:
    """What a table's cases share (upstream's ``scheduleTestConfig``, and ``enableFairSharing`` where a
    case leaves it alone)."""

    flavors: Mapping[str, ResourceFlavor]
    fair_sharing: bool = False
    queues: Mapping[str, ClusterQueue] = field(default_factory=lambda: BASE_CQS)
    local_queues: Mapping[tuple[str, str], str] = field(default_factory=lambda: BASE_LQS)


def _ref(key: str) -> str:
    return key.split("/", 1)[1]


def _pending_workload(p: Pending, local_queues: Mapping[tuple[str, str], str]) -> Workload:
    namespace, name = p.ref.split("/")
    cq = local_queues.get((namespace, p.queue), f"<no LocalQueue {namespace}/{p.queue}>")
    first = PodSet(p.pod_set, p.count, p.requests, min_count=p.min_count)
    return incoming(
        cq, first, *p.more, priority=p.priority, created=p.created, name=name, namespace=namespace
    ).workload


def _assignments(row: ScheduleRow, got: list[tuple[Workload, Assignment]]) -> dict[str, tuple[str, Usage]]:
    """Every workload holding quota after the cycle: its ClusterQueue and what it takes of each (flavor,
    resource)."""
    held_now = [(a.workload, a.usage) for a in row.admitted]
    return {
        _ref(w.key): (w.cluster_queue, dict(usage)) for w, usage in held_now + [(w, a.usage) for w, a in got]
    }


def check_schedule(row: ScheduleRow, suite: ScheduleSuite) -> None:
    """One scheduling cycle of the row's workloads, asserted as upstream's ``runScheduleTestCases`` does. A
    workload whose ClusterQueue does not exist is in no ClusterQueue's heap: upstream's ``Dump`` and
    ``DumpInadmissible`` list it nowhere."""
    cqs = {**suite.queues, **row.queues}
    local_queues = {**suite.local_queues, **row.local_queues}
    pending = [_pending_workload(p, local_queues) for p in row.pending]
    fair = row.fair_sharing if row.fair_sharing is not None else suite.fair_sharing
    result = schedule(
        pending,
        row.admitted,
        cqs,
        suite.flavors,
        set(),
        row.cohorts,
        fair_sharing=FairSharing() if fair else None,
    )
    want = {ref: (cq, quota_usage(amounts)) for ref, (cq, amounts) in row.want_assignments.items()}
    assert _assignments(row, result.admitted) == want, "wantAssignments"
    queued = {_ref(w.key) for w in pending if w.cluster_queue in cqs}
    admitted_now = {_ref(w.key) for w, _ in result.admitted}
    set_aside = {_ref(k) for k in result.inadmissible}
    assert set_aside & queued == row.want_inadmissible, "wantInadmissibleLeft"
    assert queued - admitted_now - set_aside == row.want_left, "wantLeft"
    assert {(_ref(t.key), t.reason) for _, t in result.preemptions} == row.want_preempted, "preempted"
    messages = {ref: result.messages.get(f"Job/{ref}") for ref in row.want_messages}
    assert messages == row.want_messages, "QuotaReserved messages"
    counts = {_ref(w.key): {ps.name: ps.count for ps in w.pod_sets} for w, _ in result.admitted}
    assert {ref: counts.get(ref) for ref in row.want_counts} == row.want_counts, "PodSetAssignments counts"
    assert _admitted_conditions(row, result.admitted, cqs) == row.want_admitted, "Admitted conditions"


def _admitted_conditions(
    row: ScheduleRow, got: list[tuple[Workload, Assignment]], cqs: Mapping[str, ClusterQueue]
) -> dict[str, AdmittedCondition]:
    """The scheduler's ``prepareWorkload`` for each workload of ``row.want_admitted`` admitted in the cycle:
    quota reserved, and, when it carries every check its admission needs (``HasAllRequiredChecks``), its
    ``Admitted`` condition synced from the checks it carries (``SyncAdmittedCondition``)."""
    out = {}
    for workload, assignment in got:
        ref = _ref(workload.key)
        if ref not in row.want_admitted:
            continue
        states = row.checks.get(ref, ())
        flavors = {f for fs in assignment.flavors.values() for f in fs.values()}
        required = checks_for_workload(cqs[workload.cluster_queue], flavors)
        condition = admitted_condition(True, states) if has_all_required_checks(states, required) else None
        if condition is not None:
            out[ref] = condition
    return out
