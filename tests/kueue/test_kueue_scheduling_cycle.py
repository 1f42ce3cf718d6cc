"""What one Kueue scheduling cycle does with its heads once nominated, as upstream's scheduler does.

Upstream rules: ``kubernetes-sigs/kueue: pkg/scheduler/scheduler.go`` (``processEntry``: ``fits``,
``reserveCapacityForUnreclaimablePreempt``, ``markPreemptionOutcome``; ``makeClassicalIterator``: the
assignment's borrowing level), ``pkg/cache/queue/cluster_queue.go`` (``RequeueIfNotPresent``),
``pkg/workload/resources.go`` (``ErrNamespaceMismatch``) and ``pkg/scheduler/flavorassigner``
(``checkFlavorForPodSets``).
"""

from __future__ import annotations

from test_kueue_admission import FLAVORS, GPU, admitted, queue, workload

from gpufleet.model.kueue import (
    ANY,
    LOWER_PRIORITY,
    NAMESPACE_NAME_LABEL,
    NEVER,
    STRICT_FIFO,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.node import Taint
from gpufleet.model.pod import Requirement
from gpufleet.scheduling.kueue.admission import NO_LONGER_FITS, schedule
from gpufleet.scheduling.kueue.flavors import assign_flavors, no_simulation
from gpufleet.scheduling.kueue.preemption import IN_CLUSTER_QUEUE
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted, Workload


def _group(quota: int) -> tuple[ResourceGroup, ...]:
    return (ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: ResourceQuota(quota)}),)),)


def test_a_namespace_the_strict_fifo_queue_does_not_select_sets_its_head_aside() -> None:
    only_a = (Requirement(NAMESPACE_NAME_LABEL, "In", ("a",)),)
    cq = ClusterQueue("team-a", None, only_a, STRICT_FIFO, _group(8))
    pending = [workload("b/stranger", "team-a", 4), workload("a/own", "team-a", 4, created=1)]
    first = schedule(pending, [], {"team-a": cq}, FLAVORS, set())
    assert first.inadmissible == ["Job/b/stranger"]
    assert first.messages == {"Job/b/stranger": "workload namespace doesn't match ClusterQueue selector"}
    second = schedule(pending, [], {"team-a": cq}, FLAVORS, set(first.inadmissible))
    assert [w.key for w, _ in second.admitted] == ["Job/a/own"]


def test_an_untolerated_flavor_taint_is_printed_as_kueue_prints_a_corev1_taint() -> None:
    tainted = {"h100": ResourceFlavor("h100", node_taints=(Taint("key", "val"),))}
    cq = queue("team-a", 8, cohort=None)
    got = assign_flavors(
        workload("a/one", "team-a", 1), cq, tainted, QuotaSnapshot({"team-a": cq}, {}), no_simulation
    )
    assert got.message() == (
        "couldn't assign flavors to pod set main: untolerated taint {key val NoSchedule <nil>} in flavor h100"
    )


def _low(key: str, cq: str, gpus: int) -> Admitted:
    return admitted(workload(key, cq, gpus, priority=-1))


def test_a_preemptors_message_counts_the_workloads_it_waits_for() -> None:
    queues = {"team-a": queue("team-a", 4, cohort=None, within_cluster_queue=LOWER_PRIORITY)}
    running = [_low("a/low-1", "team-a", 2), _low("a/low-2", "team-a", 2)]
    result = schedule([workload("a/urgent", "team-a", 4)], running, queues, FLAVORS, set())
    assert sorted(t.key for _, t in result.preemptions) == ["Job/a/low-1", "Job/a/low-2"]
    assert result.messages["Job/a/urgent"] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
        "h100, 4 more needed. Pending the preemption of 2 workload(s)"
    )


def test_a_preemptor_holds_its_quota_so_a_later_one_borrowing_the_same_cohort_no_longer_fits() -> None:
    """Two queues of 2 GPUs each borrow the cohort's one spare GPU to fit 3 after evicting their own 2: the
    first preemptor takes the spare, so the second's preemption would be wasted."""
    kw = {"within_cluster_queue": LOWER_PRIORITY, "borrow_within_cohort": LOWER_PRIORITY}
    queues = {
        "team-a": queue("team-a", 2, **kw),
        "team-b": queue("team-b", 2, **kw),
        "bank": queue("bank", 1),
    }
    running = [_low("a/low", "team-a", 2), _low("b/low", "team-b", 2)]
    pending = [workload("a/first", "team-a", 3, priority=100), workload("b/second", "team-b", 3, priority=99)]
    result = schedule(pending, running, queues, FLAVORS, set())
    assert [(p.key, t.key, t.reason) for p, t in result.preemptions] == [
        ("Job/a/first", "Job/a/low", IN_CLUSTER_QUEUE)
    ]
    assert result.messages["Job/b/second"] == NO_LONGER_FITS


def _lender(reclaim: str) -> tuple[dict[str, ClusterQueue], list[Admitted], list[Workload]]:
    """team-a (2 GPUs, 1 used) heads a workload of 2 that finds no preemption candidate; team-b (none of its
    own) heads one of 1 that would borrow team-a's unused GPU."""
    queues = {"team-a": queue("team-a", 2, reclaim_within_cohort=reclaim), "team-b": queue("team-b", 0)}
    running = [admitted(workload("a/running", "team-a", 1))]
    return queues, running, [workload("a/two", "team-a", 2), workload("b/one", "team-b", 1)]


def test_a_head_without_preemption_candidates_keeps_its_nominal_quota_from_borrowers() -> None:
    queues, running, pending = _lender(NEVER)
    result = schedule(pending, running, queues, FLAVORS, set())
    assert result.admitted == [] and result.inadmissible == ["Job/a/two"]
    assert result.messages["Job/b/one"] == NO_LONGER_FITS


def test_a_queue_that_can_always_reclaim_lends_while_its_head_waits() -> None:
    queues, running, pending = _lender(ANY)
    result = schedule(pending, running, queues, FLAVORS, set())
    assert [w.key for w, _ in result.admitted] == ["Job/b/one"]


def test_heads_are_taken_by_borrowing_level_before_priority() -> None:
    """Both heads borrow 4 GPUs: the one whose quota is in its own cohort (level 1) goes before the one of
    higher priority that borrows from the root (level 2), and takes the GPUs."""
    queues = {
        "guaranteed": queue("guaranteed", 0, cohort="guaranteed"),
        "best-effort": queue("best-effort", 0, cohort="root"),
    }
    cohorts = {"root": Cohort("root"), "guaranteed": Cohort("guaranteed", "root", _group(4))}
    pending = [
        workload("a/guaranteed", "guaranteed", 4),
        workload("a/best-effort", "best-effort", 4, priority=3),
    ]
    result = schedule(pending, [], queues, FLAVORS, set(), cohorts)
    assert [w.key for w, _ in result.admitted] == ["Job/a/guaranteed"]
    assert result.messages["Job/a/best-effort"] == NO_LONGER_FITS
