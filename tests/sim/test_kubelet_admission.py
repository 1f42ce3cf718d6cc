"""A pod bound by ``spec.nodeName`` (which bypasses the scheduler) as the node's kubelet admits it
(``pkg/kubelet/lifecycle/predicate.go``, Kubernetes v1.34.10: ``predicateAdmitHandler.Admit`` over
``generalFilter``, the scheduler's ``AdmissionCheck`` and the ``NoExecute`` taints): a pod that fails is
rejected (``rejectPod``): Failed, never run, with the first failure's reason -- ``OutOf<resource>``
("Node didn't have enough resource: ..."), ``NodeAffinity``, ``NodePorts`` or ``TaintToleration``
("Predicate <name> failed: ...") -- and "Pod was rejected: " before its message. Its controller counts it
as any failed pod: a Job's pod so rejected counts toward ``backoffLimit``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {pool: cpu}
spec:
  taints: [{key: maintenance, value: "true", effect: NoExecute}, {key: gpu, effect: NoSchedule}]
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""
TOLERATE_ALL = "tolerations: [{operator: Exists}]"


def pod(name: str, spec: str, gpus: int = 1, ports: str = "[]") -> str:
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 10m}}
spec:
  nodeName: n1
  restartPolicy: Never
  {spec}
  containers:
  - {{name: c, image: x, ports: {ports}, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def run(tmp_path: Path, *docs: str) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text(NODE + "".join(docs))
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    summary = build_summary(sim)
    validate_summary(summary)
    return summary


def rejected(summary: dict[str, Any], name: str) -> tuple[Any, ...]:
    p = next(p for p in summary["pods"] if p["name"] == f"default/{name}")
    return p["phase"], p["reason"], p["message"], p["node"], p["bound_s"], p["finished_s"]


def test_a_pod_bound_to_a_node_not_matching_its_node_selector_is_rejected(tmp_path: Path) -> None:
    summary = run(tmp_path, pod("elsewhere", f"nodeSelector: {{pool: gpu}}\n  {TOLERATE_ALL}"))
    assert rejected(summary, "elsewhere") == (
        "Failed",
        "NodeAffinity",
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
        "n1",
        None,
        0.0,
    )
    assert summary["totals"]["gpus_allocated"] == 0


def test_a_pod_bound_to_a_node_with_an_untolerated_no_execute_taint_is_rejected(tmp_path: Path) -> None:
    """The kubelet reads only ``NoExecute`` taints (the pod tolerates the ``NoSchedule`` one)."""
    summary = run(tmp_path, pod("tainted", "tolerations: [{key: gpu, operator: Exists}]"))
    assert rejected(summary, "tainted")[:3] == (
        "Failed",
        "TaintToleration",
        "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
    )


def test_a_pod_bound_to_a_node_it_fits_runs_there_despite_a_no_schedule_taint(tmp_path: Path) -> None:
    summary = run(tmp_path, pod("fits", "tolerations: [{key: maintenance, operator: Exists}]"))
    p = summary["pods"][0]
    assert (p["phase"], p["node"], p["bound_s"], p["reason"]) == ("Succeeded", "n1", 0.0, "Completed")


def test_resources_are_checked_before_node_affinity(tmp_path: Path) -> None:
    """``AdmissionCheck``'s order, and ``Admit`` reports the first failure only."""
    summary = run(tmp_path, pod("both", f"nodeSelector: {{pool: gpu}}\n  {TOLERATE_ALL}", gpus=16))
    assert rejected(summary, "both")[1:3] == (
        "OutOfnvidia.com/gpu",
        "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 16, used: 0, "
        "capacity: 8",
    )


HOST_PORT = "[{containerPort: 80, hostPort: 8080}]"


def test_a_pod_bound_to_a_node_where_its_host_port_is_taken_is_rejected(tmp_path: Path) -> None:
    """``AdmissionCheck``'s ``nodeports.Fits`` against the pods the kubelet already admitted: the first pod
    takes host port 8080, the second asking for it is rejected; a third on another port runs."""
    summary = run(
        tmp_path,
        pod("first", TOLERATE_ALL, ports=HOST_PORT),
        pod("second", TOLERATE_ALL, ports=HOST_PORT),
        pod("other", TOLERATE_ALL, ports="[{containerPort: 80, hostPort: 8081}]"),
    )
    phases = {p["name"]: p["phase"] for p in summary["pods"]}
    assert phases == {"default/first": "Succeeded", "default/second": "Failed", "default/other": "Succeeded"}
    assert rejected(summary, "second")[1:4] == (
        "NodePorts",
        "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod "
        "ports",
        "n1",
    )


def test_host_ports_are_checked_after_node_affinity_and_before_taints(tmp_path: Path) -> None:
    """``generalFilter``: ``AdmissionCheck`` (resources, node affinity, node name, node ports), then the
    ``NoExecute`` taints; ``Admit`` reports the first failure only."""
    summary = run(
        tmp_path,
        pod("first", TOLERATE_ALL, ports=HOST_PORT),
        pod("tainted", "tolerations: [{key: gpu, operator: Exists}]", ports=HOST_PORT),
        pod("elsewhere", f"nodeSelector: {{pool: gpu}}\n  {TOLERATE_ALL}", ports=HOST_PORT),
    )
    assert rejected(summary, "tainted")[1] == "NodePorts"
    assert rejected(summary, "elsewhere")[1] == "NodeAffinity"


def test_a_jobs_pod_the_kubelet_rejects_counts_toward_its_backoff_limit(tmp_path: Path) -> None:
    """Each rejected pod is a failure: replaced after the pod failure backoff (10 s, then 20 s) until the
    failures pass ``backoffLimit: 2``; the Job then fails (``BackoffLimitExceeded``)."""
    job = f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: pinned}}
spec:
  backoffLimit: 2
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 10m}}
    spec:
      nodeName: n1
      restartPolicy: Never
      {TOLERATE_ALL}
      containers:
      - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 16}}}}}}
"""
    summary = run(tmp_path, job)
    pods = {p["name"]: p for p in summary["pods"]}
    assert [(name, p["reason"], p["finished_s"]) for name, p in sorted(pods.items())] == [
        ("default/pinned-0", "OutOfnvidia.com/gpu", 0.0),
        ("default/pinned-0-r1", "OutOfnvidia.com/gpu", 10.0),
        ("default/pinned-0-r2", "OutOfnvidia.com/gpu", 30.0),
    ]
    status = summary["workload_status"]["Job/default/pinned"]
    assert [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", 30.0),
        ("Failed", "BackoffLimitExceeded", 30.0),
    ]
    assert (status["failed"], status["active"]) == (3, 0)


def test_a_snapshots_running_pod_keeps_running_where_its_node_no_longer_matches_it(tmp_path: Path) -> None:
    """Node affinity is ``IgnoredDuringExecution``: a pod the snapshot shows Running on ``n1`` was admitted
    there before its labels changed, and is not admitted again (it tolerates the ``NoExecute`` taint, whose
    eviction is the taint eviction controller's: the next test)."""
    spec = "nodeSelector: {pool: gpu}\n  tolerations: [{key: maintenance, operator: Exists}]"
    p = run(tmp_path, pod("before", spec) + "status: {phase: Running}\n")["pods"][0]
    assert (p["phase"], p["node"], p["reason"]) == ("Succeeded", "n1", "Completed")


def test_a_snapshots_running_pod_not_tolerating_its_node_s_no_execute_taint_is_deleted_at_once(
    tmp_path: Path,
) -> None:
    """The kubelet does not admit it again, but the taint eviction controller deletes a pod on a node with a
    ``NoExecute`` taint it does not tolerate at once (``processPodOnNode``; upstream's ``TestCreateNode``,
    "Creating tainted Node matching already assigned Pod"): Failed with ``TaintManagerEviction`` once its
    30 s grace period is over."""
    p = run(tmp_path, pod("before", "nodeSelector: {pool: gpu}") + "status: {phase: Running}\n")["pods"][0]
    assert (p["phase"], p["node"], p["reason"], p["finished_s"]) == (
        "Failed",
        "n1",
        "TaintManagerEviction",
        30,
    )
