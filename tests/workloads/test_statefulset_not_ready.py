"""A StatefulSet whose pod was Ready and stops being so while it runs (``kind.HearsNotReady``), and the
StatefulSet's status in ``summary.json`` and ``gpufleet describe pod``.

Upstream (Kubernetes 1.34, ``pkg/controller/statefulset/stateful_set_control.go``): every sync
(``updateStatefulSet``) reads each pod's Ready condition again; under ``OrderedReady`` (``monotonic``)
``processReplica`` stops at the first pod not Running and Ready ("StatefulSet is waiting for Pod ... to be
Running and Ready"), so an ordinal is created only while every lower one is Ready *now*, not merely once was.
Two ways gpufleet turns a running pod not Ready: the node lifecycle controller's ``MarkPodsNotReady`` once
its node is NotReady (``sim.unreachable_nodes``), and its container restarting (``restartPolicy: Always``,
its work exiting). The status is ``computeReplicaStatus``'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conftest import pods_by_name, simulated, write
from gpufleet.cli import app

POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 3
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""
#: h100-0's kubelet stops at 40 min and is back an hour later
REBOOT = """
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {name: f}
spec:
  response: {detection: 0s, reboot: 1h}
  faults:
  - {at: 40m, node: h100-0, kind: xid-79}
"""
#: the pods stay on their unreachable node (no taint eviction)
TOLERATE_UNREACHABLE = (
    "tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}]"
)


def stateful_set(
    annotations: str, policy: str = "OrderedReady", spec: str = "", pod_spec: str = "", replicas: int = 3
) -> str:
    """``db``: each pod a whole 8-GPU node."""
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  {spec}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata:
      labels: {{app: db}}
      annotations: {{{annotations}}}
    spec:
      {pod_spec}
      containers: [{{name: db, image: x, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
"""


def created(summary: dict[str, Any]) -> dict[str, float]:
    return {name: pod["created_s"] for name, pod in pods_by_name(summary).items()}


def test_a_pod_marked_not_ready_with_its_node_halts_the_next_ordinal_until_it_is_ready_again(
    tmp_path: Path,
) -> None:
    """``db-0`` (Ready at 30 min, on h100-0) loses its node's kubelet at 40 min: NotReady at 40 min 50 s,
    ``MarkPodsNotReady`` unsets its Ready. ``db-1`` turns Ready at 60 min, but ``processReplica`` halts at
    ``db-0``: no ``db-2`` (before, it came at 60 min). The kubelet is back at 1 h 40 min and starts
    ``db-0``'s container again: Ready after its 30 min warm-up, at 2 h 10 min, when ``db-2`` comes."""
    scenario = write(
        tmp_path, POOL, stateful_set("gpufleet.io/warmup: 30m", pod_spec=TOLERATE_UNREACHABLE), REBOOT
    )
    summary = simulated(scenario, duration_s=4 * 3600.0)
    assert created(summary) == {"db-0": 0.0, "db-1": 1800.0, "db-2": 7800.0}
    assert pods_by_name(summary)["db-0"]["restarts"] == 1


def test_parallel_is_not_halted_by_a_pod_not_ready_again(tmp_path: Path) -> None:
    """``Parallel`` (``allowsBurst``): ``runForAll`` does not stop at an unhealthy pod: every ordinal is
    created at once, and ``db-0`` marked not Ready with its node (the same fault) changes nothing."""
    scenario = write(
        tmp_path,
        POOL,
        stateful_set("gpufleet.io/warmup: 30m", "Parallel", pod_spec=TOLERATE_UNREACHABLE),
        REBOOT,
    )
    summary = simulated(scenario, duration_s=4 * 3600.0)
    assert created(summary) == {"db-0": 0.0, "db-1": 0.0, "db-2": 0.0}


def test_a_pod_restarting_its_container_halts_the_next_ordinal(tmp_path: Path) -> None:
    """Each pod is Ready 30 s after its container starts and its work exits 25 s later (``restartPolicy:
    Always``: the kubelet starts it again, its warm-up again, not Ready meanwhile). ``db-0`` is Ready over
    [30, 55] s, [85, 110] s, ...; ``db-1`` (created at 30 s) over [60, 85] s, [115, 140] s, ...: never both
    at once, so ``db-2`` never comes (before, it came at 60 s, while ``db-0`` restarted)."""
    annotations = "gpufleet.io/warmup: 30s, gpufleet.io/duration: 25s"
    summary = simulated(write(tmp_path, POOL, stateful_set(annotations)), duration_s=600.0)
    assert created(summary) == {"db-0": 0.0, "db-1": 30.0}
    assert all(pod["restarts"] > 0 for pod in pods_by_name(summary).values())


def test_the_summary_has_the_stateful_sets_replica_status(tmp_path: Path) -> None:
    """``updateStatus`` / ``computeReplicaStatus`` at the end (150 s), under ``minReadySeconds: 60``:
    ``db-0`` Ready at 30 s, available at 90 s, when ``db-1`` comes, Ready at 120 s and not yet available:
    2 replicas, 2 ready, 1 available, 2 current and updated (one revision); no conditions, no start time."""
    scenario = write(tmp_path, POOL, stateful_set("gpufleet.io/warmup: 30s", spec="minReadySeconds: 60"))
    summary = simulated(scenario, duration_s=150.0)
    assert summary["workload_status"] == {
        "StatefulSet/default/db": {
            "conditions": [],
            "replicas": 2,
            "readyReplicas": 2,
            "availableReplicas": 1,
            "currentReplicas": 2,
            "updatedReplicas": 2,
        }
    }


def test_describe_pod_shows_its_stateful_sets_replica_status(tmp_path: Path) -> None:
    """``gpufleet describe pod`` of a StatefulSet's pod: ``Controlled By`` and the StatefulSet's status
    counts, as the summary has them, once ``db-0`` restarted its container (not Ready at the end: 600 s)."""
    simulation = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 10m}
"""
    annotations = "gpufleet.io/warmup: 30s, gpufleet.io/duration: 25s"
    paths = write(tmp_path, simulation, POOL, stateful_set(annotations))
    result = CliRunner().invoke(app, ["describe", "pod", "db-0", *map(str, paths)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert next(line for line in lines if line.startswith("Controlled By:")).split(":", 1)[1].strip() == (
        "StatefulSet/db"
    )
    status = next(line for line in lines if line.startswith("StatefulSet Replicas:"))
    assert status.split(":", 1)[1].strip() == "2 total | 0 ready | 0 available | 2 current | 2 updated"
