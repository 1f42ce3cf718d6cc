"""A scenario (a cluster dump) whose Nodes are NotReady when it starts: NotReady from time 0, registered when
their ``creationTimestamp`` says, relative to the dump's time (``model.node_readiness``), with what the
simulation gives a node that went NotReady: kube-scheduler keeps off it by its not-ready / unreachable taint
(the node lifecycle controller's, ``doNoScheduleTaintingPass``), cluster-autoscaler counts it Unready from
``creationTimestamp`` + ``MaxNodeStartupTime`` and is halted by more than 3 and 45 % Unready nodes
(``clusterstate.IsClusterHealthy``, ``updateReadinessStats``, cluster-autoscaler 1.34)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import simulated, write

T0 = "2026-12-06T05:00:00Z"


def dump_node(name: str, ready: str, created: str, taint: str | None = None) -> str:
    taints = f"[{{key: {taint}, effect: NoSchedule}}]" if taint else "[]"
    return f"""
apiVersion: v1
kind: Node
metadata:
  name: {name}
  creationTimestamp: "{created}"
spec: {{taints: {taints}}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions:
  - {{type: Ready, status: "{ready}", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-06T04:30:00Z"}}
"""


POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 0
  max: 4
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
  provisioning: {boot: 3m, driver: 4m, join: 1m, devicePlugin: 30s}
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata:
      annotations: {gpufleet.io/duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example.com/train:v1
        resources:
          limits: {nvidia.com/gpu: 8}
"""


def nodes(created: str, taint: str | None = "node.kubernetes.io/unreachable") -> list[str]:
    """Four nodes down (Ready Unknown since 04:30) and two Ready, all registered at ``created``."""
    down = [dump_node(f"dump-{k}", "Unknown", created, taint) for k in range(4)]
    return down + [dump_node(f"dump-{k}", "True", created) for k in (4, 5)]


def run(tmp_path: Path, *documents: str, duration_s: float = 1800.0) -> dict[str, Any]:
    return simulated(write(tmp_path, "\n---\n".join(documents)), duration_s=duration_s)


def pods(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in summary["pods"]}


UNHEALTHY_AT_0 = {
    "t_s": 0.0,
    "kind": "cluster-unhealthy",
    "pool": None,
    "nodes": ["dump-0", "dump-1", "dump-2", "dump-3"],
    "pods": [],
    "reason": "Cluster is not ready for autoscaling: "
    "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6)",
    "node_counts": {"registered": 6, "ready": 2, "not_started": 0, "unready": 4},
}


def test_a_dump_with_four_of_six_nodes_unready_halts_cluster_autoscaler_from_the_start(
    tmp_path: Path,
) -> None:
    """Registered two hours before the dump: Unready at once; the Job's third pod waits with the halt in its
    diagnosis, and no node is launched."""
    summary = run(tmp_path, POOL, JOB, *nodes("2026-12-06T03:00:00Z"))
    assert summary["autoscaler_events"] == [UNHEALTHY_AT_0]
    by_name = pods(summary)
    placed = sorted(p["node"] for p in by_name.values() if p["node"] is not None)
    assert placed == ["dump-4", "dump-5"]  # never on the tainted NotReady nodes
    (waiting,) = [p for p in by_name.values() if p["node"] is None]
    assert waiting["message"].startswith(
        "0/6 nodes are available: 2 Insufficient nvidia.com/gpu, 4 node(s) had untolerated taint(s)."
    )
    assert waiting["diagnosis"]["hints"][-1].startswith(
        "cluster-autoscaler is halted since 0 s (Cluster is not ready for autoscaling): "
        "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6)"
    )


def test_nodes_registered_five_minutes_before_the_dump_are_not_started_until_fifteen_minutes(
    tmp_path: Path,
) -> None:
    """Registered at 04:55, five minutes before the dump's time: ``NotStarted`` at first (cluster-autoscaler
    scales up for the third pod, at 30 s: ``allPodsAreNew`` waits until that GPU pod, created at 0 s, is 30 s
    old), Unready from 10 minutes into the run (``MaxNodeStartupTime`` after their
    creation): then the cluster is unhealthy."""
    summary = run(tmp_path, POOL, JOB, *nodes("2026-12-06T04:55:00Z"))
    kinds = [(e["t_s"], e["kind"]) for e in summary["autoscaler_events"]]
    assert kinds[0] == (30.0, "scale-up")
    assert (600.0, "cluster-unhealthy") in kinds


def test_a_not_ready_node_without_its_taint_takes_no_pod(tmp_path: Path) -> None:
    """Ready False without the not-ready taint in the dump: tainted as the node lifecycle controller taints
    it, so kube-scheduler keeps off it (gpufleet used to treat it as Ready and place the pod there)."""
    only = dump_node("dump-0", "False", "2026-12-06T03:00:00Z")
    summary = run(
        tmp_path, JOB.replace("parallelism: 3\n  completions: 3", "parallelism: 1\n  completions: 1"), only
    )
    (pod,) = summary["pods"]
    assert pod["node"] is None
    assert pod["message"] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
