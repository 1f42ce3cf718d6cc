"""A dump's Kueue ``Workload`` objects (``gpufleet.kube.kueue_workloads``, ``model.kueue_dumped``): matched to
their jobs (kueue v0.19.2 ``pkg/controller/jobframework/reconciler.go`` ``FindMatchingWorkloads``: the
Workload controlled by the job), and what Kueue acts on carried into the run:

- queue order: ``Ordering.GetQueueOrderTimestamp`` (``pkg/workload/workload.go``): the Workload's own
  ``creationTimestamp``, or its ``Evicted`` condition's ``lastTransitionTime`` when evicted by the PodsReady
  timeout (``requeuingStrategy.timestamp: Eviction``) or by an admission check;
- ``status.requeueState``: ``backoffWaitingTimeExpired`` (``pkg/cache/queue/cluster_queue.go``) keeps the
  workload out of its queue until ``requeueAt``; ``UpdateRequeueState`` counts the next backoff on from
  ``count``;
- ``spec.active: false``: not admissible (``workload.IsAdmissible``);
- ``spec.priority``: what Kueue's scheduler orders by.

Each dump's time 0 is the latest time its Node shows (``model.node_readiness.clock_zero``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_dump_queue_order_creation_time import KUEUE, NEW, NODE, OLD, SIMULATION, kueue_job
from typer.testing import CliRunner

from conftest import run_simulation, write
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.live.kinds import KINDS

EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "wait-for-pods-ready.yaml"


def workload(
    job: str,
    created: str | None = None,
    status: str = "",
    spec: str = "",
    owner: str = "Job",
    namespace: str = "default",
) -> str:
    """The Workload Kueue made for the Job ``job`` (controlled by it), with ``status`` and more ``spec``."""
    stamp = "" if created is None else f'\n  creationTimestamp: "{created}"'
    return f"""
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: job-{job}-1a2b3
  namespace: {namespace}{stamp}
  ownerReferences:
  - {{apiVersion: batch/v1, kind: {owner}, name: {job}, uid: u-{job}, controller: true}}
spec:
  queueName: q{spec}
  podSets:
  - name: main
    count: 1
    template: {{spec: {{containers: [{{name: main, image: main:1}}]}}}}
{status}"""


def requeue_state(count: int | str, requeue_at: str | None = None) -> str:
    at = "" if requeue_at is None else f', requeueAt: "{requeue_at}"'
    return f"status:\n  requeueState: {{count: {count}{at}}}\n"


def evicted(reason: str, at: str) -> str:
    return (
        "status:\n  conditions:\n"
        f'  - {{type: Evicted, status: "True", reason: {reason}, message: m, lastTransitionTime: "{at}"}}\n'
    )


def admissions(tmp_path: Path, *documents: str) -> dict[str, list[float]]:
    sim = run_simulation(write(tmp_path, NODE, KUEUE, SIMULATION, *documents))
    return {key: wl.admissions for key, wl in sim.kueue.workloads.items()}


def test_jobs_are_admitted_in_their_workloads_creation_order_not_their_own(tmp_path: Path) -> None:
    """``GetQueueOrderTimestamp``: the Workload's ``creationTimestamp`` (StrictFIFO). Job b-old is the older
    Job, but a-new's Workload is older than b-old's (made an hour before the dump, b-old's 10 minutes before):
    a-new is admitted first, b-old once a-new's 10 minutes are over."""
    got = admissions(
        tmp_path,
        kueue_job("a-new", NEW),
        kueue_job("b-old", OLD),
        workload("a-new", "2026-12-06T04:00:00Z"),
        workload("b-old", "2026-12-06T04:50:00Z"),
    )
    assert (got["Job/default/a-new"], got["Job/default/b-old"]) == ([0.0], [600.0])


def test_without_its_workload_the_jobs_creation_time_still_orders_it(tmp_path: Path) -> None:
    """The Workload of a-new has no ``creationTimestamp``: its Job's counts (round 33's rule): b-old first."""
    got = admissions(
        tmp_path, kueue_job("a-new", NEW), kueue_job("b-old", OLD), workload("a-new", spec="\n  active: true")
    )
    assert (got["Job/default/b-old"], got["Job/default/a-new"]) == ([0.0], [600.0])


def test_a_workload_evicted_by_the_pods_ready_timeout_is_ordered_by_its_eviction(tmp_path: Path) -> None:
    """``GetQueueOrderTimestamp`` with ``requeuingStrategy.timestamp: Eviction`` (the default): b-old's
    Workload, created an hour before the dump, was evicted by the PodsReady timeout 10 minutes before it: it
    queues behind a-new's, created half an hour before."""
    got = admissions(
        tmp_path,
        kueue_job("a-new", NEW),
        kueue_job("b-old", OLD),
        workload("a-new", NEW),
        workload("b-old", OLD, evicted("PodsReadyTimeout", "2026-12-06T04:50:00Z")),
    )
    assert (got["Job/default/a-new"], got["Job/default/b-old"]) == ([0.0], [600.0])


def test_a_workload_evicted_by_preemption_keeps_its_creation_order(tmp_path: Path) -> None:
    """``GetQueueOrderTimestamp``: an eviction by preemption leaves the creation time: b-old first."""
    got = admissions(
        tmp_path,
        kueue_job("a-new", NEW),
        kueue_job("b-old", OLD),
        workload("a-new", NEW),
        workload("b-old", OLD, evicted("Preempted", "2026-12-06T04:50:00Z")),
    )
    assert (got["Job/default/b-old"], got["Job/default/a-new"]) == ([0.0], [600.0])


def test_a_requeue_at_in_the_future_delays_admission_until_then(tmp_path: Path) -> None:
    """``backoffWaitingTimeExpired``: ``requeueAt`` 5 minutes after the dump's time: the only Job, with quota
    free, is admitted at 300 s, not at 0; the wait says so."""
    later = "2026-12-06T05:05:00Z"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            KUEUE,
            SIMULATION,
            kueue_job("j", OLD),
            workload("j", OLD, requeue_state(1, later)),
        )
    )
    wl = sim.kueue.workloads["Job/default/j"]
    assert wl.admissions == [300.0]
    assert (wl.requeue_count, wl.requeue_at) == (1, None)  # cleared once admitted


def test_a_requeue_at_in_the_past_admits_at_once(tmp_path: Path) -> None:
    got = admissions(
        tmp_path, kueue_job("j", OLD), workload("j", OLD, requeue_state(1, "2026-12-06T04:59:00Z"))
    )
    assert got["Job/default/j"] == [0.0]


def test_the_requeue_count_continues_the_backoff(tmp_path: Path) -> None:
    """``UpdateRequeueState``: the gang's Workload has been requeued twice; at its PodsReady timeout (300 s)
    its count becomes 3 and its backoff 60 s * 2^2 = 240 s (without the Workload: count 1, 60 s)."""
    text = EXAMPLE.read_text()
    text = text[: text.index("---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: small\n")]
    text = text.replace("  requeuingStrategy: {backoffLimitCount: 1}\n", "").replace("40m", "400s")
    doc = workload("gang", namespace="ml", status=requeue_state(2)).replace(
        "queueName: q", "queueName: queue"
    )
    sim = run_simulation(write(tmp_path, text, doc))
    gang = sim.kueue.workloads["Job/ml/gang"]
    assert (gang.requeue_count, gang.requeue_at) == (3, 540.0)
    assert gang.admissions == [0.0]


def test_a_requeue_count_past_the_backoff_limit_deactivates_at_the_first_timeout(tmp_path: Path) -> None:
    """``triggerDeactivation``: ``backoffLimitCount: 1`` and a count of 1 already: the first timeout
    deactivates the gang (``RequeuingLimitExceeded``) instead of requeueing it."""
    text = EXAMPLE.read_text()
    text = text[: text.index("---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: small\n")]
    doc = workload("gang", namespace="ml", status=requeue_state(1)).replace(
        "queueName: q", "queueName: queue"
    )
    sim = run_simulation(write(tmp_path, text, doc))
    gang = sim.kueue.workloads["Job/ml/gang"]
    assert [(e["t_s"], e["reason"]) for e in gang.evictions] == [(300.0, "Deactivated")]
    assert gang.active is False


def test_a_deactivated_workload_is_never_admitted(tmp_path: Path) -> None:
    """``IsAdmissible``: ``spec.active: false``: the Job stays suspended although its quota is free."""
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            KUEUE,
            SIMULATION,
            kueue_job("j", OLD),
            workload("j", OLD, spec="\n  active: false"),
        )
    )
    wl = sim.kueue.workloads["Job/default/j"]
    assert (wl.admissions, wl.active, wl.message) == ([], False, "The workload is deactivated")


def test_the_workloads_priority_orders_it(tmp_path: Path) -> None:
    """Kueue's scheduler reads the Workload's ``spec.priority``: a-new's (100) goes before b-old's (none:
    its pods' 0), though b-old is older; the difference from the Job's derived priority is a warning."""
    docs = (
        kueue_job("a-new", NEW),
        kueue_job("b-old", OLD),
        workload("a-new", NEW, spec="\n  priority: 100"),
    )
    got = admissions(tmp_path, *docs)
    assert (got["Job/default/a-new"], got["Job/default/b-old"]) == ([0.0], [600.0])
    warnings = load_scenario(write(tmp_path, NODE, KUEUE, *docs)).warnings
    assert any(
        "(Workload/default/job-a-new-1a2b3): spec.priority: 100 is not the priority gpufleet derives from "
        "Job/default/a-new (0)" in w
        for w in warnings
    )


def test_a_workload_of_nothing_gpufleet_queues_is_a_warning_naming_it(tmp_path: Path) -> None:
    warnings = load_scenario(write(tmp_path, NODE, KUEUE, workload("gone", OLD))).warnings
    assert any(
        "document 1 (Workload/default/job-gone-1a2b3): metadata.ownerReferences: Workload "
        "default/job-gone-1a2b3 belongs to Job/default/gone, which is not a workload gpufleet's Kueue admits"
        in w
        for w in warnings
    )


def test_a_workload_holding_quota_while_its_job_is_suspended_is_a_warning(tmp_path: Path) -> None:
    status = (
        "status:\n  admission: {clusterQueue: cq, podSetAssignments: []}\n  conditions:\n"
        '  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: m, '
        'lastTransitionTime: "2026-12-06T04:01:00Z"}\n'
    )
    warnings = load_scenario(
        write(tmp_path, NODE, KUEUE, kueue_job("j", OLD), workload("j", OLD, status))
    ).warnings
    assert any(
        "status.admission: the Workload holds quota of ClusterQueue cq while Job/default/j is suspended" in w
        for w in warnings
    )


def test_a_pod_groups_workload_is_matched_by_its_pod_group_name_label(tmp_path: Path) -> None:
    """``pod_controller.go``: a group's Workload is named after ``kueue.x-k8s.io/pod-group-name`` and owned by
    each pod, none its controller; the group's Workload (created an hour before the dump) orders it."""
    pod = """
apiVersion: v1
kind: Pod
metadata:
  name: g-0
  namespace: default
  creationTimestamp: "2026-12-06T04:55:00Z"
  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: g, scheduling.x-k8s.io/pod-group: g}
  annotations: {gpufleet.io/duration: 10m}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: main:1, resources: {limits: {nvidia.com/gpu: 8}}}
status: {phase: Pending}
"""
    group = (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: default}\n"
    )
    group += "spec: {minMember: 1}\n"
    doc = workload("g", OLD).replace("name: job-g-1a2b3", "name: g").replace(", controller: true", "")
    sim = run_simulation(write(tmp_path, NODE, KUEUE, SIMULATION, group, pod, doc))
    assert sim.kueue.workloads["PodGroup/default/g"].created_s == -3600.0


@pytest.mark.parametrize(
    ("document", "path", "detail"),
    [
        (workload("j", "yesterday"), "metadata.creationTimestamp", "must be an RFC 3339 time"),
        (
            workload("j", OLD, requeue_state(-1)),
            "status.requeueState.count",
            "must be an int32, not negative",
        ),
        (workload("j", OLD, requeue_state(1, "soon")), "status.requeueState.requeueAt", "RFC 3339"),
        (
            workload("j", OLD, evicted("PodsReadyTimeout", "then")),
            "status.conditions[0].lastTransitionTime",
            "RFC",
        ),
        (workload("j", OLD, spec="\n  active: 'no'"), "spec.active", "must be a boolean"),
        (workload("j", OLD, spec="\n  priority: high"), "spec.priority", "must be an int32"),
    ],
    ids=["creation-timestamp", "negative-count", "requeue-at", "transition-time", "active", "priority"],
)
def test_a_bad_workload_value_exits_2_naming_file_document_and_field(
    tmp_path: Path, document: str, path: str, detail: str
) -> None:
    files = write(tmp_path, NODE, KUEUE, kueue_job("j", OLD), document)
    with pytest.raises(ScenarioError) as raised:
        load_scenario(files)
    assert any(
        f"{files[3]}: document 1 (Workload/default/job-j-1a2b3): {path}: Invalid value" in line
        and detail in line
        for line in str(raised.value).splitlines()
    )
    result = CliRunner().invoke(app, ["validate", *map(str, files)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_what_kueue_acts_on_that_gpufleet_does_not_carry_is_a_warning(tmp_path: Path) -> None:
    """``spec.maximumExecutionTimeSeconds`` and ``status.admissionChecks`` are not carried: warnings."""
    status = (
        "status:\n  admissionChecks:\n  - {name: prov, state: Ready, message: m, lastTransitionTime: "
        + (f'"{OLD}"}}\n')
    )
    doc = workload("j", OLD, status, spec="\n  maximumExecutionTimeSeconds: 600")
    warnings = load_scenario(write(tmp_path, NODE, KUEUE, kueue_job("j", OLD), doc)).warnings
    label = "(Workload/default/job-j-1a2b3)"
    for path in ("spec.maximumExecutionTimeSeconds", "status.admissionChecks"):
        assert any(f"{label}: {path} is not modelled; ignored" in w for w in warnings), path


def test_a_snapshot_reads_kueues_workloads() -> None:
    """``gpufleet snapshot`` lists ``workloads.kueue.x-k8s.io`` (skipped with a warning where not served)."""
    ref = KINDS["workloads"]
    assert (ref.resource, ref.kind, ref.namespaced, ref.builtin) == (
        "workloads.kueue.x-k8s.io",
        "Workload",
        True,
        False,
    )


def test_a_leaderworkersets_group_workload_is_a_warning(tmp_path: Path) -> None:
    """Kueue's LeaderWorkerSet integration makes a Workload per group, each controlled by the set: gpufleet
    does not match them to its groups, and says so."""
    lws = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: llm
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: c, image: server, resources: {limits: {nvidia.com/gpu: 1}}}
"""
    doc = workload("llm", OLD, owner="LeaderWorkerSet").replace(
        "apiVersion: batch/v1, kind", "apiVersion: x, kind"
    )
    warnings = load_scenario(write(tmp_path, NODE, KUEUE, lws, doc)).warnings
    assert any(
        "metadata.ownerReferences: Workload default/job-llm-1a2b3 is one of LeaderWorkerSet/default/llm's, "
        "one per group: gpufleet does not match them to its groups; ignored" in w
        for w in warnings
    )
