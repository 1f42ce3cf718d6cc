"""Kueue's ``waitForPodsReady`` through the simulator (``gpufleet.control.kueue_pods_ready``) and its pure
decisions (``gpufleet.scheduling.kueue.pods_ready``), on ``examples/kueue/wait-for-pods-ready.yaml``: a 4-pod
gang of 8-GPU pods admitted on three 8-GPU nodes, so that only 3 of its pods can run.

Rules from ``kubernetes-sigs/kueue``: ``pkg/controller/core/workload_controller.go``
(``reconcileNotReadyTimeout``, ``admittedNotReadyWorkload``, ``triggerDeactivation``), ``pkg/workload/
workload.go`` (``UpdateRequeueState``, ``GetQueueOrderTimestamp``), ``pkg/cache/queue/cluster_queue.go``
(``backoffWaitingTimeExpired``), ``pkg/scheduler/scheduler.go`` (``waitForPodsReadyIfNeeded``) and
``pkg/controller/jobs/job/job_controller.go`` (``Job.PodsReady``: ready + succeeded >= parallelism).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_kueue_admission import FLAVORS, admitted, queue, workload

from conftest import pods_by_name, simulated
from gpufleet.model.kueue import CREATION_TIMESTAMP, LOWER_PRIORITY, WaitForPodsReady
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.pods_ready import (
    DEACTIVATED_MESSAGE,
    WAIT_FOR_RECOVERY,
    WAIT_FOR_START,
    WAITING_FOR_PODS_READY,
    Deactivate,
    Requeue,
    backoff_expired,
    on_timeout,
    pods_ready_deadline,
    queue_order_time,
    requeue_backoff_s,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "wait-for-pods-ready.yaml"
SMALL_JOB_START = "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: small\n"


def run(
    tmp_path: Path, edits: tuple[tuple[str, str], ...] = (), duration: str | None = None, small: bool = True
) -> dict[str, Any]:
    text = EXAMPLE.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    if not small:
        text = text[: text.index(SMALL_JOB_START)]
    if duration is not None:
        text = text.replace("spec: {duration: 40m}", f"spec: {{duration: {duration}}}")
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return simulated([path])


def workloads(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["name"]: w for w in summary["kueue"]["workloads"]}


NO_LIMIT = ("  requeuingStrategy: {backoffLimitCount: 1}\n", "")


def test_gang_not_ready_is_evicted_at_the_timeout_and_requeued_after_60s_then_120s(tmp_path: Path) -> None:
    """No limit: evicted at 300 s (5 min after admission), queued again at 360 s (60 s backoff), evicted at
    660 s, queued again at 780 s (120 s), evicted at 1080 s ..."""
    summary = run(tmp_path, (NO_LIMIT,), duration="1100s", small=False)
    gang = workloads(summary)["Job/ml/gang"]
    assert gang["admissions"] == [0.0, 360.0, 780.0]
    assert gang["evictions"] == [
        {"t_s": t, "reason": "PodsReadyTimeout", "by": None, "underlying_cause": WAIT_FOR_START}
        for t in (300.0, 660.0, 1080.0)
    ]
    assert gang["requeue_state"] == {"count": 3, "requeue_at_s": 1080.0 + 240.0}
    assert "active" not in gang  # shown only once deactivated
    queue = summary["kueue"]["cluster_queues"]["team"]
    assert queue["evicted"] == {"PodsReadyTimeout": 3} and queue["preempted"] == {}
    # the suspended Job's pods go (Suspended, not failed) and come back gated
    pods = pods_by_name(summary)
    assert (pods["gang-0"]["reason"], pods["gang-0"]["finished_s"]) == ("Suspended", 330.0)


def test_workload_waiting_out_its_backoff_says_so(tmp_path: Path) -> None:
    summary = run(tmp_path, (NO_LIMIT,), duration="340s", small=False)
    message = "Exceeded the PodsReady timeout ml/gang; waiting for the requeue backoff (requeue 1) until 360s"
    assert workloads(summary)["Job/ml/gang"]["message"] == message
    assert pods_by_name(summary)["gang-0-r1"]["message"] == message


def test_backoff_limit_count_deactivates_after_the_second_timeout(tmp_path: Path) -> None:
    """``backoffLimitCount: 1``: requeued once; at the second timeout the requeue count (1) + 1 exceeds it:
    deactivated (evicted with reason Deactivated, RequeuingLimitExceeded), never admitted again."""
    summary = run(tmp_path, small=False)
    gang = workloads(summary)["Job/ml/gang"]
    assert gang["admissions"] == [0.0, 360.0]
    assert [(e["t_s"], e["reason"], e["underlying_cause"]) for e in gang["evictions"]] == [
        (300.0, "PodsReadyTimeout", WAIT_FOR_START),
        (660.0, "Deactivated", "RequeuingLimitExceeded"),
    ]
    assert gang["active"] is False and gang["message"] == DEACTIVATED_MESSAGE
    assert "requeue_state" not in gang  # cleared on deactivation
    assert summary["kueue"]["cluster_queues"]["team"]["pending"] == 0


def test_block_admission_holds_another_workload_while_the_gang_is_not_ready(tmp_path: Path) -> None:
    """blockAdmission (v1beta1's default): the 1-pod Job submitted at 60 s fits the quota but waits until no
    workload holding quota is un-ready: the gang's pods are gone at 330 s (30 s grace after its eviction)."""
    held = workloads(run(tmp_path, duration="200s"))["Job/ml/small"]
    assert (held["admissions"], held["message"]) == ([], WAITING_FOR_PODS_READY)
    summary = run(tmp_path)
    got = workloads(summary)
    assert got["Job/ml/small"]["admissions"] == [330.0]
    # the gang, queued again at 360 s, is admitted once the small Job is PodsReady
    assert got["Job/ml/gang"]["admissions"] == [0.0, 360.0]


def test_without_block_admission_the_other_workload_is_admitted_at_once(tmp_path: Path) -> None:
    summary = run(
        tmp_path, (("  enable: true\n", "  enable: true\n  blockAdmission: false\n"),), duration="200s"
    )
    assert workloads(summary)["Job/ml/small"]["admissions"] == [60.0]


def test_workload_ready_in_time_is_never_evicted(tmp_path: Path) -> None:
    """Three pods of 8 GPUs on three nodes: PodsReady at once, no eviction, no requeue state."""
    summary = run(
        tmp_path,
        (("  parallelism: 4\n  completions: 4\n", "  parallelism: 3\n  completions: 3\n"),),
        duration="3h",
        small=False,
    )
    gang = workloads(summary)["Job/ml/gang"]
    assert (gang["evictions"], gang["finished_s"]) == ([], 7200.0)
    assert "requeue_state" not in gang and "evicted" not in summary["kueue"]["cluster_queues"]["team"]


# -- the pure decisions ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("count", "base", "cap", "want"),
    [(1, 60, 3600, 60), (2, 60, 3600, 120), (3, 60, 3600, 240), (7, 60, 3600, 3600), (5, 10, 0, 160)],
)
def test_requeue_backoff_doubles_from_the_base_up_to_the_max(
    count: int, base: float, cap: float, want: float
) -> None:
    """``UpdateRequeueState``: base * 2^(n-1), capped at backoffMaxSeconds (0: uncapped), jitter left out."""
    assert requeue_backoff_s(count, base, cap) == want


def test_deadline_is_from_admission_or_from_losing_pods_ready() -> None:
    config = WaitForPodsReady(timeout_s=300.0, recovery_timeout_s=120.0)
    assert pods_ready_deadline(config, 10.0, False, None) == (WAIT_FOR_START, 310.0)
    assert pods_ready_deadline(config, 10.0, False, 500.0) == (WAIT_FOR_RECOVERY, 620.0)
    assert pods_ready_deadline(config, 10.0, True, 500.0) is None
    off = WaitForPodsReady(timeout_s=300.0, recovery_timeout_s=None)  # recoveryTimeout: 0s
    assert pods_ready_deadline(off, 10.0, False, 500.0) is None


def test_timeout_requeues_until_the_backoff_limit_count_then_deactivates() -> None:
    assert on_timeout(WaitForPodsReady(), 0, 300.0) == Requeue(1, 360.0)
    assert on_timeout(WaitForPodsReady(backoff_limit_count=2), 1, 300.0) == Requeue(2, 420.0)
    assert on_timeout(WaitForPodsReady(backoff_limit_count=2), 2, 300.0) == Deactivate()
    assert on_timeout(WaitForPodsReady(backoff_limit_count=0), 0, 300.0) == Deactivate()


def test_queue_order_time_is_the_eviction_time_for_a_pods_ready_timeout_by_eviction_or_a_check() -> None:
    config = WaitForPodsReady()
    assert queue_order_time(config, 5.0, (300.0, "PodsReadyTimeout")) == 300.0
    assert queue_order_time(config, 5.0, (300.0, "InCohortReclamation")) == 5.0
    assert (
        queue_order_time(WaitForPodsReady(timestamp=CREATION_TIMESTAMP), 5.0, (300.0, "PodsReadyTimeout"))
        == 5.0
    )
    # waitForPodsReady off: Kueue's manager still orders by ``Eviction`` (``podsReadyRequeuingTimestamp``),
    # what a dump's Workload evicted by the timeout reads
    assert queue_order_time(None, 5.0, (300.0, "PodsReadyTimeout")) == 300.0
    # evicted by an admission check: by its eviction time whatever the requeuing timestamp
    # (``IsEvictedByAdmissionCheck``)
    creation = WaitForPodsReady(timestamp=CREATION_TIMESTAMP)
    assert queue_order_time(creation, 5.0, (300.0, "AdmissionCheck")) == 300.0
    assert backoff_expired(None, 0.0) and backoff_expired(360.0, 360.0) and not backoff_expired(360.0, 359.0)


def test_block_admission_holds_fitting_heads_after_one_admission_but_not_preemptors() -> None:
    """``waitForPodsReadyIfNeeded``: with an un-ready admitted workload no fitting head is admitted (not set
    aside: it stays its queue's head); with none, the cycle's first admission blocks the later ones; a head
    that preempts is not held (``issuePreemptions`` comes first)."""
    queues = {"a": queue("a", 8, cohort=None), "b": queue("b", 8, cohort=None)}
    pending = [workload("a/one", "a", 4), workload("b/two", "b", 4, created=1)]
    held = schedule(pending, [], queues, FLAVORS, set(), block_admission=True, not_ready=True)
    assert held.admitted == [] and held.inadmissible == []
    assert held.messages == {"Job/a/one": WAITING_FOR_PODS_READY, "Job/b/two": WAITING_FOR_PODS_READY}
    first = schedule(pending, [], queues, FLAVORS, set(), block_admission=True)
    assert [w.key for w, _ in first.admitted] == ["Job/a/one"]
    assert first.messages["Job/b/two"] == WAITING_FOR_PODS_READY
    assert len(schedule(pending, [], queues, FLAVORS, set()).admitted) == 2
    strict = {"a": queue("a", 8, cohort=None, within_cluster_queue=LOWER_PRIORITY)}
    running = [admitted(workload("a/low", "a", 8))]
    urgent = [workload("a/urgent", "a", 8, priority=10)]
    preempting = schedule(urgent, running, strict, FLAVORS, set(), block_admission=True, not_ready=True)
    assert [t.key for _, t in preempting.preemptions] == ["Job/a/low"]


WITHOUT_CONFIGURATION = (
    "---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady:\n  enable: true\n"
    "  requeuingStrategy: {backoffLimitCount: 1}\n",
    "",
)


def test_without_a_configuration_kueue_runs_as_its_default_installation_waiting_30_minutes(
    tmp_path: Path,
) -> None:
    """Kueue's default installation reads a v1beta2 Configuration (``config/components/manager/
    controller_manager_config.yaml``), whose ``SetDefaults_Configuration`` always sets ``waitForPodsReady``
    (on since 0.19, ``DisableWaitForPodsReady`` off): 30 min, no ``blockAdmission``. The gang not ready is
    evicted 30 min after its admission, and the small Job is admitted beside it at once."""
    summary = run(tmp_path, (WITHOUT_CONFIGURATION,), duration="40m")
    got = workloads(summary)
    assert got["Job/ml/gang"]["evictions"] == [
        {"t_s": 1800.0, "reason": "PodsReadyTimeout", "by": None, "underlying_cause": WAIT_FOR_START}
    ]
    assert got["Job/ml/small"]["admissions"] == [60.0]
