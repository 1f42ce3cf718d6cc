"""Kueue tenant queues through the simulator (``gpufleet.control.kueue_queues``), on
``examples/kueue/cohort-reclaim.yaml``: team-b borrows team-a's quota, team-a's job arrives at
10 min and reclaims it (Kueue's ``reclaimWithinCohort``), the borrower is suspended and requeued."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import pods_by_name, simulated

EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "cohort-reclaim.yaml"
PLAIN_POOL = """
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata:
  name: plain
spec:
  replicas: 1
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def run(tmp_path: Path, edit: tuple[str, str] | None = None, extra: str = "") -> dict[str, Any]:
    text = EXAMPLE.read_text()
    if edit is not None:
        assert edit[0] in text
        text = text.replace(*edit)
    path = tmp_path / "scenario.yaml"
    path.write_text(text + extra)
    return simulated([path])


def pods(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return pods_by_name(summary, namespaced=True)


def test_borrower_is_reclaimed_and_requeued(tmp_path: Path) -> None:
    summary = run(tmp_path)
    got = pods(summary)
    a, victim, again = got["team-a/a-train-0"], got["team-b/b-borrower-0"], got["team-b/b-borrower-0-r1"]
    # team-a's job is created at 600 s and admitted when the borrower's pod is gone (30 s grace)
    assert (a["created_s"], a["bound_s"], a["finished_s"]) == (600.0, 630.0, 2430.0)
    assert a["stages"] == {"queueing": 30.0}
    assert (victim["phase"], victim["reason"], victim["finished_s"]) == ("Failed", "Suspended", 630.0)
    # requeued: its pod is created again at once, gated, and admitted when team-a's job ends
    assert (again["created_s"], again["bound_s"], again["phase"]) == (630.0, 2430.0, "Succeeded")
    assert got["team-b/b-first-0"]["bound_s"] == 0.0
    queues = summary["kueue"]["cluster_queues"]
    assert queues["team-b"]["preempted"] == {"InCohortReclamation": 1}
    assert queues["team-a"]["preempting"] == 1
    assert (queues["team-a"]["admitted"], queues["team-b"]["admitted"]) == (1, 3)
    gpus = queues["team-b"]["usage"]["h100/nvidia.com/gpu"]
    assert (gpus["nominal"], gpus["peak"], gpus["borrowed_peak"]) == (8, 16.0, 8.0)
    # the requeued pod resumes from the 10 min its predecessor checkpointed (every 5 min): 2 h - 10 min
    assert gpus["steps"] == [[0.0, 16.0], [630.0, 8.0], [2430.0, 16.0], [3600.0, 8.0], [9030.0, 0.0]]
    workloads = {w["name"]: w for w in summary["kueue"]["workloads"]}
    assert workloads["Job/team-b/b-borrower"]["evictions"] == [
        {"t_s": 600.0, "reason": "InCohortReclamation", "by": "Job/team-a/a-train"}
    ]


def test_pending_workload_carries_kueues_quota_reserved_message(tmp_path: Path) -> None:
    short = "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
    short += "spec: {duration: 610s}\n"
    waiting = pods(run(tmp_path, extra=short))["team-a/a-train-0"]
    assert waiting["phase"] == "Pending" and waiting["message"] == (
        "couldn't assign flavors to pod set main: "
        "insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
        ". Pending the preemption of 1 workload(s)"
    )


def test_reclaim_never_waits_for_the_borrower_to_finish(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        (
            "    reclaimWithinCohort: Any\n    withinClusterQueue",
            "    reclaimWithinCohort: Never\n    withinClusterQueue",
        ),
    )
    got = pods(summary)
    # team-b's own job ends at 1 h: team-b then uses 8 of the cohort's 16, and team-a fits
    assert got["team-a/a-train-0"]["bound_s"] == 3600.0
    assert got["team-b/b-borrower-0"]["reason"] == "Completed"
    assert summary["kueue"]["cluster_queues"]["team-b"]["preempted"] == {}


def test_suspension_is_not_a_job_failure(tmp_path: Path) -> None:
    head = "  name: b-borrower\n  namespace: team-b\n  labels:\n    kueue.x-k8s.io/queue-name: queue\nspec:\n"
    edit = (head, head + "  backoffLimit: 0\n")
    got = pods(run(tmp_path, edit))
    assert got["team-b/b-borrower-0-r1"]["phase"] == "Succeeded"


def test_admitted_pods_get_the_flavors_node_labels(tmp_path: Path) -> None:
    got = pods(run(tmp_path, extra=PLAIN_POOL))
    assert {p["node"] for p in got.values() if p["bound_s"] is not None} <= {"h100-0", "h100-1"}


def test_same_input_same_summary(tmp_path: Path) -> None:
    first = json.dumps(run(tmp_path), sort_keys=True)
    assert json.dumps(run(tmp_path), sort_keys=True) == first


PODS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 10Ti}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "16"}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata:
  name: gang-0
  labels: {kueue.x-k8s.io/queue-name: q, scheduling.x-k8s.io/pod-group: gang}
  annotations: {gpufleet.io/duration: 1h}
spec:
  restartPolicy: Never
  containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: gang-1
  labels: {kueue.x-k8s.io/queue-name: q, scheduling.x-k8s.io/pod-group: gang}
  annotations: {gpufleet.io/duration: 1h}
spec:
  restartPolicy: Never
  containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: single
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {gpufleet.io/duration: 1h, gpufleet.io/submit-at: 1m}
spec:
  restartPolicy: Never
  containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: lost
  labels: {kueue.x-k8s.io/queue-name: nope}
spec:
  containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_pod_group_and_single_pod_workloads(tmp_path: Path) -> None:
    """A PodGroup's labelled pods are one workload (admitted once minMember exist); a labelled pod is
    its own; a LocalQueue that does not exist leaves the pod waiting with Kueue's message."""
    path = tmp_path / "pods.yaml"
    path.write_text(PODS)
    got = pods(simulated([path]))
    assert [got[f"default/gang-{i}"]["bound_s"] for i in (0, 1)] == [0.0, 0.0]
    # 8 GPUs of quota: the single 4-GPU pod waits for the gang (8 GPUs) to finish
    assert (got["default/single"]["bound_s"], got["default/single"]["stages"]) == (
        3600.0,
        {"queueing": 3540.0},
    )
    assert got["default/lost"]["message"] == "LocalQueue nope doesn't exist"


FUNGIBILITY_EXAMPLE = EXAMPLE.with_name("flavor-fungibility.yaml")


def test_when_can_borrow_try_next_flavor_sends_the_second_job_to_spot_not_to_borrowed_quota(
    tmp_path: Path,
) -> None:
    """``examples/kueue/flavor-fungibility.yaml``: Kueue's ``shouldTryNextFlavor``. With
    ``whenCanBorrow: TryNextFlavor`` the second job skips on-demand, where it would borrow team-b's
    GPUs, for spot within team-a's own quota; with the default (``MayStopSearch``) it borrows."""
    text = FUNGIBILITY_EXAMPLE.read_text()
    tried = simulated([FUNGIBILITY_EXAMPLE])
    nodes = {name: p["node"] for name, p in pods(tried).items()}
    assert nodes == {"team-a/first-0": "on-demand-0", "team-a/second-0": "spot-0"}
    usage = tried["kueue"]["cluster_queues"]["team-a"]["usage"]
    assert usage["on-demand/nvidia.com/gpu"]["borrowed_peak"] == 0.0
    default = tmp_path / "default.yaml"
    default.write_text(text.replace("    whenCanBorrow: TryNextFlavor", "    whenCanBorrow: MayStopSearch"))
    borrowed = simulated([default])
    assert pods(borrowed)["team-a/second-0"]["node"] == "on-demand-1"
    usage = borrowed["kueue"]["cluster_queues"]["team-a"]["usage"]
    assert usage["on-demand/nvidia.com/gpu"]["borrowed_peak"] == 8.0
