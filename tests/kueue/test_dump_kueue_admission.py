"""A dump's admitted Kueue ``Workload`` holds its quota from the run's start on the flavors it was admitted
with, and its pods keep their nodes (``kube.kueue_workloads``, ``model.kueue_dumped.DumpedAdmission``,
``control.kueue_queues``): kueue v0.19.2's cache counts an admitted Workload's usage from its
``status.admission`` (``pkg/cache/scheduler`` ``AddOrUpdateWorkload``; ``pkg/workload/workload.go``
``NewInfo``, ``totalRequestsFromAdmission``: each ``podSetAssignments`` entry's ``resourceUsage`` on its
``flavors``), and Kueue does not admit it again. Disagreements with the input are warnings naming the
Workload and its field. The ``Requeued`` condition (``backoffWaitingTimeExpired``,
``pkg/cache/queue/cluster_queue.go``; the workload controller's ``Reconcile`` sets it ``True``) is read as
upstream does, or warned about.

Time 0 is the latest time the dump's Nodes show: 05:00:00.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_dump_kueue_workloads import workload
from test_dump_queue_order_creation_time import KUEUE, NEW, NODE, OLD, SIMULATION, kueue_job

from conftest import run_simulation, write
from gpufleet.kube import load_scenario
from gpufleet.live import snapshot as snapshot_module
from gpufleet.live.kinds import KindRef
from gpufleet.live.snapshot import take_snapshot

T0 = "2026-12-06T05:00:00Z"
ADMITTED_AT = "2026-12-06T04:55:00Z"  # 300 s before time 0


def gpu_node(name: str, pool: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{pool: {pool}}}
  creationTimestamp: "2026-12-01T00:00:00Z"
status:
  capacity: {{cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions:
  - {{type: Ready, status: "True", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-01T00:01:00Z"}}
"""


#: two flavors of 8 GPUs each, on-demand first: Kueue tries them in that order
TWO_FLAVORS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {pool: od}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: spot}
spec: {nodeLabels: {pool: spot}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: on-demand
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
    - name: spot
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
"""


def running_job(name: str, parallelism: int, gpus: int, duration: str = "1h") -> str:
    """A Job of queue ``q`` Kueue admitted (unsuspended), one pod active."""
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "2026-12-06T04:54:00Z"
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: false
  parallelism: {parallelism}
  completions: {parallelism}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: {duration}}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: main:1
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
status: {{active: 1, startTime: "{ADMITTED_AT}"}}
"""


def running_pod(name: str, job: str, node: str, gpus: int, duration: str = "1h") -> str:
    """The Job's pod bound to ``node`` at 04:30:00 (its ``PodScheduled`` condition), running."""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "2026-12-06T04:55:00Z"
  labels: {{kueue.x-k8s.io/queue-name: q, batch.kubernetes.io/job-name: {job}}}
  annotations: {{gpufleet.io/duration: {duration}}}
  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: {job}, uid: u-{job}, controller: true}}]
spec:
  nodeName: {node}
  restartPolicy: Never
  containers:
  - name: main
    image: main:1
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
status:
  phase: Running
  startTime: "2026-12-06T04:55:03Z"
  conditions:
  - {{type: PodScheduled, status: "True", lastTransitionTime: "2026-12-06T04:55:01Z"}}
"""


def admitted(
    flavor: str = "spot",
    gpus: int = 8,
    count: int = 2,
    cluster_queue: str = "cq",
    conditions: tuple[str, ...] = ("QuotaReserved", "Admitted"),
    more: str = "",
) -> str:
    """A Workload's status: admitted to ``cluster_queue``, its pod set ``main`` on ``flavor``."""
    lines = "".join(
        f'  - {{type: {c}, status: "True", reason: {c}, message: m, lastTransitionTime: "{ADMITTED_AT}"}}\n'
        for c in conditions
    )
    return f"""status:
  admission:
    clusterQueue: {cluster_queue}
    podSetAssignments:
    - name: main
      count: {count}
      flavors: {{nvidia.com/gpu: {flavor}}}
      resourceUsage: {{nvidia.com/gpu: "{gpus}"}}{more}
  conditions:
{lines}"""


def test_an_admitted_workload_holds_its_quota_from_the_start_so_a_queued_job_waits_for_it(
    tmp_path: Path,
) -> None:
    """``AddOrUpdateWorkload``: the running Job's Workload, admitted 3,540 s before the dump, holds all 8
    GPUs of ``cq`` from time 0: the queued Job is admitted when it finishes (600 s), not at 0 beside it
    (gpufleet admitted it again before, and counted none of the running Job's quota)."""
    job = kueue_job("run", OLD).replace("suspend: true", "suspend: false")
    job += 'status: {active: 1, startTime: "2026-12-06T04:01:00Z"}\n'
    pod = running_pod("run-abc", "run", "dump-1", 8, "10m")
    status = admitted("default", count=1).replace(ADMITTED_AT, "2026-12-06T04:01:00Z")
    sim = run_simulation(
        write(
            tmp_path, NODE, KUEUE, SIMULATION, job, pod, workload("run", OLD, status), kueue_job("wait", NEW)
        )
    )
    run, wait = sim.kueue.workloads["Job/default/run"], sim.kueue.workloads["Job/default/wait"]
    assert (run.admissions, run.pods, wait.admissions) == ([-3540.0], ["default/run-abc"], [600.0])


@pytest.mark.parametrize("pod_first", [False, True], ids=["job-first", "pod-first"])
def test_an_admitted_workload_keeps_its_flavor_and_its_new_pod_goes_to_that_flavors_nodes(
    tmp_path: Path, pod_first: bool
) -> None:
    """The Job's Workload was admitted on ``spot`` (count 2, 8 GPUs) 300 s before the dump with one of its
    two pods running there (for 2 hours: still admitted at the run's end): the pod the Job creates in the run
    gets ``spot``'s ``nodeLabels`` (``podset.Merge``) and binds on ``spot-1``, beside the first, where
    admitting it again would pick ``on-demand``, the first flavor with room; a queued 8-GPU Job takes
    ``on-demand`` at once, ``spot``'s quota being held. The running pod is the workload's whichever of it
    and its Job the dump lists first: both its pods are Ready before ``waitForPodsReady``'s 30 minutes from
    the admission, no eviction."""
    job, pod = running_job("train", 2, 4, "2h"), running_pod("train-a", "train", "spot-1", 4, "2h")
    sim = run_simulation(
        write(
            tmp_path,
            gpu_node("od-1", "od"),
            gpu_node("spot-1", "spot"),
            TWO_FLAVORS,
            SIMULATION,
            *((pod, job) if pod_first else (job, pod)),
            workload("train", OLD, admitted("spot")),
            kueue_job("other", NEW),
        )
    )
    train = sim.kueue.workloads["Job/default/train"]
    assert train.admitted is not None and train.admitted.flavors == {"main": {"nvidia.com/gpu": "spot"}}
    assert train.admitted.usage == {("spot", "nvidia.com/gpu"): 8}
    assert (train.admissions, train.evictions, "default/train-a" in train.pods) == ([-300.0], [], True)
    nodes = {k: r.node for k, r in sim.records.items() if k.startswith("default/train-")}
    assert sorted(nodes.values()) == ["spot-1", "spot-1"] and len(nodes) == 2
    other = sim.kueue.workloads["Job/default/other"]
    assert other.admissions == [0.0]
    assert [r.node for k, r in sim.records.items() if k.startswith("default/other-")] == ["od-1"]


def _warnings(tmp_path: Path, *documents: str) -> list[str]:
    files = write(tmp_path, gpu_node("od-1", "od"), gpu_node("spot-1", "spot"), TWO_FLAVORS, *documents)
    return load_scenario(files).warnings


LABEL = "(Workload/default/job-train-1a2b3)"


def test_an_admission_that_disagrees_with_the_input_is_a_warning_naming_the_workload_and_field(
    tmp_path: Path,
) -> None:
    """A ClusterQueue not in the input, a flavor that is no ResourceFlavor, a flavor the ClusterQueue has no
    quota of: each a warning at its field naming the Workload; gpufleet queues it afresh."""
    job = running_job("train", 2, 4)
    cases = {
        "status.admission.clusterQueue": (
            admitted(cluster_queue="gone"),
            "Workload default/job-train-1a2b3 is admitted to ClusterQueue 'gone', which is not in the input: "
            "gpufleet queues it afresh",
        ),
        "status.admission.podSetAssignments[0].flavors.nvidia.com/gpu": (
            admitted("reserved"),
            "Workload default/job-train-1a2b3 is admitted with flavor 'reserved' is no ResourceFlavor",
        ),
    }
    for i, (path, (status, message)) in enumerate(cases.items()):
        (tmp_path / str(i)).mkdir()
        warnings = _warnings(tmp_path / str(i), job, workload("train", OLD, status))
        assert any(f"{LABEL}: {path}: {message}" in w for w in warnings), (path, warnings)
    extra = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: reserved}\n"
    (tmp_path / "quota").mkdir()
    warnings = _warnings(tmp_path / "quota", extra, job, workload("train", OLD, admitted("reserved")))
    assert any(
        f"{LABEL}: status.admission.podSetAssignments[0].flavors.nvidia.com/gpu: Workload "
        "default/job-train-1a2b3 "
        "is admitted with ClusterQueue cq has no quota of nvidia.com/gpu in flavor 'reserved'" in w
        for w in warnings
    ), warnings


def test_quota_without_admitted_an_admission_without_quota_and_a_topology_assignment_are_warnings(
    tmp_path: Path,
) -> None:
    """``HasQuotaReservation``: an admission without ``QuotaReserved`` is not counted; one holding quota but
    not ``Admitted`` waits on admission checks whose states are not carried: both queued afresh, said so. A
    pod set's ``topologyAssignment`` is not modelled (its pods keep their nodes)."""
    job = running_job("train", 2, 4)
    topology = (
        "\n      topologyAssignment: {levels: [kubernetes.io/hostname], "
        "domains: [{values: [spot-1], count: 2}]}"
    )
    cases = {
        "status.conditions: Workload default/job-train-1a2b3 holds quota of ClusterQueue cq but is not "
        "Admitted "
        "(its admission checks' states are not carried): gpufleet queues it afresh": admitted(
            conditions=("QuotaReserved",)
        ),
        "status.admission: Workload default/job-train-1a2b3 has no QuotaReserved condition True: Kueue's "
        "cache "
        "does not count its admission (HasQuotaReservation); ignored": admitted(conditions=("Admitted",)),
        "status.admission.podSetAssignments[0].topologyAssignment is not modelled (its pods keep the nodes "
        "they "
        "are bound to": admitted(more=topology),
    }
    for i, (message, status) in enumerate(cases.items()):
        (tmp_path / str(i)).mkdir()
        warnings = _warnings(tmp_path / str(i), job, workload("train", OLD, status))
        assert any(message in w for w in warnings), (message, warnings)


def test_a_requeued_false_condition_kueue_lifts_by_itself_is_read_and_any_other_is_a_warning(
    tmp_path: Path,
) -> None:
    """``backoffWaitingTimeExpired``: ``Requeued=False`` keeps a Workload out of its queue until the workload
    controller sets it ``True``. Reason ``PodsReadyTimeout`` with ``requeueAt`` 5 minutes after the dump: it
    does so then (``BackoffFinished``), and gpufleet admits the Job at 300 s, no warning; another reason (a
    controller gpufleet does not run) cannot be timed: a warning naming the condition, and it is queued."""
    later = "2026-12-06T05:05:00Z"
    requeued = (
        'status:\n  requeueState: {count: 1, requeueAt: "' + later + '"}\n  conditions:\n'
        '  - {type: Requeued, status: "False", reason: REASON, message: m, lastTransitionTime: "'
        + OLD
        + '"}\n'
    )
    files = write(
        tmp_path,
        NODE,
        KUEUE,
        SIMULATION,
        kueue_job("j", OLD),
        workload("j", OLD, requeued.replace("REASON", "PodsReadyTimeout")),
    )
    assert not [w for w in load_scenario(files).warnings if "Requeued" in w]
    assert run_simulation(files).kueue.workloads["Job/default/j"].admissions == [300.0]
    (tmp_path / "other").mkdir()
    other = workload("j", OLD, requeued.replace("REASON", "DRAFailed"))
    warnings = load_scenario(write(tmp_path / "other", NODE, KUEUE, kueue_job("j", OLD), other)).warnings
    assert any(
        "(Workload/default/job-j-1a2b3): status.conditions[0] Requeued=False (DRAFailed) is not modelled "
        "(Kueue "
        "keeps the Workload out of its queue until its workload controller sets it True; gpufleet queues it "
        "from the start); ignored" in w
        for w in warnings
    ), warnings


class _Api:
    """A stand-in for the API server that ``gpufleet snapshot`` lists (``LiveCluster.list_pages``): the
    objects of each kind as written, every kind served."""

    server = "https://api.example"

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.warnings: list[str] = []

    def list_pages(
        self, kind: KindRef, namespace: str | None = None, field_selector: str | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], str]]:
        found = [o for o in self.objects if o["kind"] == kind.kind and o["apiVersion"].startswith(kind.group)]
        if field_selector is None and found:
            yield found, ""


def test_a_snapshot_writes_the_admission_and_the_pods_binding_and_a_run_of_it_reads_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``gpufleet snapshot`` writes each object as the API serves it, status and all (``managedFields``
    left out): a run of the snapshot taken at time 0 holds the Workload's ``spot`` quota from its admission
    300 s before and its running pod bound at 299 s before (its ``PodScheduled`` condition)."""
    texts = (
        gpu_node("od-1", "od"),
        gpu_node("spot-1", "spot"),
        TWO_FLAVORS,
        running_job("train", 2, 4, "2h"),
        running_pod("train-a", "train", "spot-1", 4, "2h"),
        workload("train", OLD, admitted("spot")),
    )
    objects = [d for text in texts for d in yaml.safe_load_all(text) if d]
    at = datetime.fromisoformat(T0)

    class _Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> _Clock:
            return cls.fromtimestamp(at.timestamp(), UTC)

    monkeypatch.setattr(snapshot_module, "datetime", _Clock)
    result = take_snapshot(_Api(objects), tmp_path / "snap")  # type: ignore[arg-type]
    assert result.counts["workloads"] == 1 and result.counts["pods"] == 1
    sim = run_simulation([tmp_path / "snap"], 60.0)
    train = sim.kueue.workloads["Job/default/train"]
    assert train.admissions == [-300.0] and train.admitted is not None
    assert train.admitted.flavors == {"main": {"nvidia.com/gpu": "spot"}}
    assert sim.records["default/train-a"].bound_s == -299.0


def test_a_plain_pods_admitted_workload_holds_its_quota_until_the_pod_ends(tmp_path: Path) -> None:
    """Kueue's pod integration: the running pod's Workload (controlled by the pod) admitted 300 s before the
    dump holds ``cq``'s 8 GPUs until the pod ends at 600 s; the queued Job is admitted then."""
    pod = (
        running_pod("solo", "x", "dump-1", 8, "10m")
        .replace("batch.kubernetes.io/job-name: x", "app: solo")
        .replace(
            "ownerReferences: [{apiVersion: batch/v1, kind: Job, name: x, uid: u-x, controller: true}]", ""
        )
    )
    doc = workload("solo", OLD, admitted("default", count=1), owner="Pod").replace(
        "apiVersion: batch/v1", "apiVersion: v1"
    )
    sim = run_simulation(write(tmp_path, NODE, KUEUE, SIMULATION, pod, doc, kueue_job("wait", NEW)))
    solo, wait = sim.kueue.workloads["Pod/default/solo"], sim.kueue.workloads["Job/default/wait"]
    assert (solo.admissions, solo.pods, solo.finished_s, wait.admissions) == (
        [-300.0],
        ["default/solo"],
        600.0,
        [600.0],
    )


URGENT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
"""


def test_an_admitted_workload_of_the_dump_is_preempted_as_any_admitted_one(tmp_path: Path) -> None:
    """``withinClusterQueue: LowerPriority``: the urgent Job finds ``cq``'s 8 GPUs held by the dump's
    admitted Job: Kueue preempts that one (reason ``InClusterQueue``), its running pod is deleted (the Job
    suspended: ``Suspended``), and the urgent Job is admitted once the pod is gone, then binds there."""
    queues = KUEUE.replace("queueingStrategy: StrictFIFO", "preemption: {withinClusterQueue: LowerPriority}")
    job = kueue_job("run", OLD).replace("suspend: true", "suspend: false").replace("10m", "2h")
    job += 'status: {active: 1, startTime: "2026-12-06T04:55:00Z"}\n'
    urgent = kueue_job("urgent", NEW).replace(
        "labels: {kueue.x-k8s.io/queue-name: q}",
        "labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: urgent}",
    )
    status = admitted("default", count=1)
    files = write(
        tmp_path,
        NODE,
        queues,
        URGENT,
        SIMULATION,
        job,
        running_pod("run-abc", "run", "dump-1", 8, "2h"),
        workload("run", OLD, status),
        urgent,
    )
    sim = run_simulation(files)
    run, first = sim.kueue.workloads["Job/default/run"], sim.kueue.workloads["Job/default/urgent"]
    assert [(e["t_s"], e["reason"], e["by"]) for e in run.evictions] == [
        (0.0, "InClusterQueue", "Job/default/urgent")
    ]
    evicted = sim.records["default/run-abc"]
    assert (evicted.reason, first.admissions) == ("Suspended", [evicted.finished_s])
    assert sim.records["default/urgent-0"].node == "dump-1"
