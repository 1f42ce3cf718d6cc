"""``apps/v1`` StatefulSet as a workload kind (Kubernetes 1.34's pkg/controller/statefulset): pods
``<set>-<ordinal>`` made in order (``OrderedReady``) or at once (``Parallel``), made again under their names
once the old pod is gone, scaled by an HPA through the scale subresource, highest ordinal first; read as
``ValidateStatefulSetSpec`` reads it; adopted from a snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import pods_by_name, simulated, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.live.kinds import KINDS
from gpufleet.workloads.statefulset import StatefulSet

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
"""


def stateful_set(replicas: int = 3, extra: str = "", annotations: str = "gpufleet.io/warmup: 30s") -> str:
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: data}}
spec:
  replicas: {replicas}
  {extra}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata:
      labels: {{app: db}}
      annotations: {{{annotations}}}
    spec:
      containers: [{{name: db, image: postgres, resources: {{requests: {{cpu: "2"}}}}}}]
"""


def _problems(tmp_path: Path, text: str) -> str:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, text))
    return str(caught.value)


def test_ordered_ready_creates_each_ordinal_once_the_one_before_is_running_and_ready(tmp_path: Path) -> None:
    """``processReplica`` under ``OrderedReady`` (the default): ``db-1`` is created once ``db-0`` turned
    Ready (30 s of warm-up), ``db-2`` once ``db-1`` did; each carries its identity labels and is owned by the
    StatefulSet."""
    summary = simulated(write(tmp_path, NODE, stateful_set(3)), duration_s=300.0)
    pods = pods_by_name(summary)
    assert {n: p["created_s"] for n, p in pods.items()} == {"db-0": 0.0, "db-1": 30.0, "db-2": 60.0}
    assert {p["workload"] for p in pods.values()} == {"StatefulSet/data/db"}
    assert summary["warnings"] == []


def test_parallel_creates_every_ordinal_at_once(tmp_path: Path) -> None:
    """``Parallel`` (``allowsBurst``) waits for no pod."""
    text = stateful_set(3, extra="podManagementPolicy: Parallel")
    pods = pods_by_name(simulated(write(tmp_path, NODE, text), duration_s=300.0))
    assert {n: p["created_s"] for n, p in pods.items()} == {"db-0": 0.0, "db-1": 0.0, "db-2": 0.0}


def test_min_ready_seconds_holds_the_next_ordinal_until_the_pod_is_available(tmp_path: Path) -> None:
    """``isRunningAndAvailable``: with ``minReadySeconds: 20`` a pod Ready at 30 s is available at 50 s, and
    only then is the next ordinal created (the set requeued after ``minReadySeconds``)."""
    text = stateful_set(2, extra="minReadySeconds: 20")
    pods = pods_by_name(simulated(write(tmp_path, NODE, text), duration_s=300.0))
    assert {n: p["created_s"] for n, p in pods.items()} == {"db-0": 0.0, "db-1": 50.0}


def test_start_ordinal_names_the_pods_from_it(tmp_path: Path) -> None:
    """``spec.ordinals.start`` (``getStartOrdinal``): ordinals 5 and 6."""
    text = stateful_set(2, extra="ordinals: {start: 5}")
    assert sorted(pods_by_name(simulated(write(tmp_path, NODE, text), duration_s=300.0))) == ["db-5", "db-6"]


PREEMPTING = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  namespace: data
  annotations: {gpufleet.io/submit-at: 60s}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "15"}}}]
"""


def test_a_deleted_pod_is_made_again_under_its_name_once_it_is_gone(tmp_path: Path) -> None:
    """A pod being deleted holds its name (``processReplica``: its replacement is made after it is removed,
    unlike a ReplicaSet's): ``db-0``, preempted at 60 s, terminates for its 30 s grace period; ``db-0`` is
    created again at 90 s, and waits for room."""
    summary = simulated(write(tmp_path, NODE, stateful_set(1), PREEMPTING), duration_s=300.0)
    records = [p for p in summary["pods"] if p["name"] == "data/db-0"]
    first, again = sorted(records, key=lambda p: p["created_s"])
    assert first["reason"] == "Preempted" and first["deleted_s"] == 90.0
    assert again["created_s"] == 90.0 and again["bound_s"] is None


HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: db, namespace: data}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Pods
    pods:
      metric: {name: requests_per_second}
      target: {type: AverageValue, averageValue: "5"}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: db, namespace: data}
spec:
  target: db
  targetKind: StatefulSet
  perReplicaRps: 10
  rps:
  - {at: 0s, value: 20}
  - {at: 10m, value: 0}
"""


def test_an_hpa_scales_a_stateful_set_up_in_order_and_down_from_the_highest_ordinal(tmp_path: Path) -> None:
    """The HPA sets ``spec.replicas`` through the scale subresource (``scaleTargetRef.kind: StatefulSet``):
    20 requests/s against an AverageValue of 5 asks 4 replicas, made one by one; with no load from 10 min it
    returns to 1, the StatefulSet deleting ``db-3``, ``db-2``, ``db-1`` in turn (``processCondemned``), each
    once the one before is gone, reason ScaledDown."""
    summary = simulated(write(tmp_path, NODE, stateful_set(1), HPA), duration_s=1200.0)
    assert summary["warnings"] == []
    replicas = summary["timeline"]["replicas"]["StatefulSet/data/db"]
    assert max(replicas) == 4 and replicas[-1] == 1
    pods = pods_by_name(summary)
    assert sorted(pods) == ["db-0", "db-1", "db-2", "db-3"]
    assert pods["db-1"]["created_s"] < pods["db-2"]["created_s"] < pods["db-3"]["created_s"]
    gone = sorted(
        (n for n, p in pods.items() if p["reason"] == "ScaledDown"), key=lambda n: pods[n]["deleted_s"]
    )
    assert gone == ["db-3", "db-2", "db-1"]
    assert pods["db-0"]["deleted_s"] is None


@pytest.mark.parametrize(
    ("replicas", "extra", "message"),
    [
        (-1, "", "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        (
            2,
            "ordinals: {start: -2}",
            "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0",
        ),
        (
            2,
            "podManagementPolicy: Burst",
            "spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'",
        ),
        (
            2,
            "minReadySeconds: -5",
            "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0",
        ),
    ],
)
def test_invalid_specs_are_the_api_servers_errors(
    tmp_path: Path, replicas: int, extra: str, message: str
) -> None:
    """``ValidateStatefulSetSpec``: each a problem of the document, at its field."""
    problems = _problems(tmp_path, stateful_set(replicas, extra=extra))
    assert f"0.yaml: document 1 (StatefulSet/data/db): {message}" in problems


def test_unmodelled_fields_are_warnings_and_the_claims_say_what_they_leave_out(tmp_path: Path) -> None:
    """``volumeClaimTemplates``, ``persistentVolumeClaimRetentionPolicy``, ``updateStrategy`` and
    ``serviceName`` change nothing simulated: a warning each, never dropped silently; the claims' say that no
    PersistentVolumeClaim exists and that a pod made again under its name is not held to its volume's node or
    zone (upstream's ``createPersistentVolumeClaims`` / ``getPersistentVolumeClaims``: the claim outlives the
    pod, and its bound volume's node affinity places the new one)."""
    extra = (
        "serviceName: db\n  updateStrategy: {type: OnDelete}\n"
        "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}\n"
        "  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce]}}]"
    )
    scenario = load_scenario(write(tmp_path, stateful_set(2, extra=extra)))
    at = f"{tmp_path}/0.yaml: document 1 (StatefulSet/data/db): spec."
    claims = (
        " (no PersistentVolumeClaim is made, kept or deleted, and a pod made again under its name may go to "
        "any node, where upstream its bound claim holds it to its volume's node or zone)"
    )
    assert sorted(scenario.warnings) == sorted(
        f"{at}{field} is not modelled{note}; ignored"
        for field, note in (
            ("volumeClaimTemplates", claims),
            ("persistentVolumeClaimRetentionPolicy", claims),
            ("updateStrategy", ""),
            ("serviceName", ""),
        )
    )
    (workload,) = scenario.other_workloads
    assert isinstance(workload, StatefulSet) and workload.replicas == 2


def test_a_kueue_queue_name_is_a_warning(tmp_path: Path) -> None:
    """Kueue's StatefulSet integration (``pkg/controller/jobs/statefulset``) is not modelled: the label is
    named, never dropped silently."""
    text = stateful_set(2).replace(
        "metadata: {name: db, namespace: data}",
        "metadata: {name: db, namespace: data, labels: {kueue.x-k8s.io/queue-name: main}}",
    )
    assert load_scenario(write(tmp_path, text)).warnings == [
        f"{tmp_path}/0.yaml: document 1 (StatefulSet/data/db): metadata.labels.kueue.x-k8s.io/queue-name is "
        "not modelled (Kueue's StatefulSet integration is not modelled); ignored"
    ]


def test_a_snapshot_reads_stateful_sets() -> None:
    """``gpufleet snapshot`` lists ``statefulsets.apps`` (built in: served by every API server)."""
    ref = KINDS["statefulsets"]
    assert (ref.resource, ref.kind, ref.namespaced, ref.builtin) == (
        "statefulsets.apps",
        "StatefulSet",
        True,
        True,
    )


SNAPSHOT_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: db-{ordinal}
  namespace: data
  labels: {{app: db}}
  creationTimestamp: "2025-01-01T00:00:00Z"
  ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u1, controller: true}}]
spec:
  nodeName: n1
  containers: [{{name: db, image: postgres, resources: {{requests: {{cpu: "2"}}}}}}]
status:
  phase: Running
  conditions: [{{type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:10Z"}}]
"""


def test_a_snapshots_stateful_set_adopts_its_pods_and_creates_only_the_missing_ordinals(
    tmp_path: Path,
) -> None:
    """Adoption (``getPodsForStatefulSet``): the dumped ``db-0`` and ``db-1``, Running and Ready, are the
    StatefulSet's; it creates ``db-2`` only, at once (its lower ordinals are Ready), not a second ``db-0``."""
    sts = stateful_set(3).replace(
        "metadata: {name: db, namespace: data}", "metadata: {name: db, namespace: data, uid: u1}"
    )
    texts = [NODE, sts, SNAPSHOT_POD.format(ordinal=0), SNAPSHOT_POD.format(ordinal=1)]
    scenario = load_scenario(write(tmp_path, *texts))
    assert [p.pod.name for p in scenario.owned["StatefulSet/data/db"].pods] == ["db-0", "db-1"]
    summary = simulated(write(tmp_path, *texts), duration_s=300.0)
    names = [p["name"] for p in summary["pods"]]
    assert sorted(names) == ["data/db-0", "data/db-1", "data/db-2"]
    assert pods_by_name(summary)["db-2"]["created_s"] == 0.0


EXAMPLE = Path(__file__).resolve().parents[2] / "examples/serving/statefulset-hpa.yaml"


def test_the_example_scales_in_ordinal_order_with_its_traffic() -> None:
    """examples/serving/statefulset-hpa.yaml: the HPA takes the StatefulSet 2 -> 1 -> 4 -> 1; ``triton-1``
    goes at the first scale-down and comes back under its name; ``triton-2`` is created once ``triton-1``
    has been Ready for ``minReadySeconds`` (30 s), ``triton-3`` once ``triton-2`` has; the last scale-down
    deletes ``triton-3``, ``triton-2``, ``triton-1`` in turn, 30 s apart (each once the one before is gone),
    ``triton-0`` serving throughout."""
    summary = simulated([EXAMPLE])
    assert summary["warnings"] == []
    records = sorted(summary["pods"], key=lambda p: (p["name"], p["created_s"]))
    created = [(p["name"].split("/")[1], p["created_s"]) for p in records]
    assert created == [
        ("triton-0", 0.0),
        ("triton-1", 58.0),
        ("triton-1", 900.0),
        ("triton-2", 950.0),
        ("triton-3", 1223.0),
    ]
    working = {p["name"].split("/")[1]: p["working_s"] for p in records}
    assert working["triton-1"] + 30.0 == 950.0 and working["triton-2"] + 30.0 == 1223.0
    last = {p["name"].split("/")[1]: p["deleted_s"] for p in records[2:]}
    assert last == {"triton-1": 2835.0, "triton-2": 2805.0, "triton-3": 2775.0}
    assert all(p["reason"] == "ScaledDown" for p in records[1:])
    assert records[0]["deleted_s"] is None
    times, replicas = (
        summary["timeline"]["t_s"],
        summary["timeline"]["replicas"]["StatefulSet/serving/triton"],
    )
    steps = [
        (t, r) for i, (t, r) in enumerate(zip(times, replicas, strict=True)) if i == 0 or r != replicas[i - 1]
    ]
    assert [r for _, r in steps] == [2.0, 1.0, 2.0, 3.0, 4.0, 1.0]


def test_an_adopted_pending_pod_turning_ready_lets_the_next_ordinal_come(tmp_path: Path) -> None:
    """The dumped ``db-0`` is Pending: the StatefulSet waits for it (``OrderedReady``), and creates ``db-1``
    once the adopted pod, scheduled in the run, turns Ready (30 s of warm-up after its binding)."""
    sts = stateful_set(2).replace(
        "metadata: {name: db, namespace: data}", "metadata: {name: db, namespace: data, uid: u1}"
    )
    pending = """
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  namespace: data
  labels: {app: db}
  annotations: {gpufleet.io/warmup: 30s}
  creationTimestamp: "2025-01-01T00:00:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u1, controller: true}]
spec:
  containers: [{name: db, image: postgres, resources: {requests: {cpu: "2"}}}]
status: {phase: Pending}
"""
    summary = simulated(write(tmp_path, NODE, sts, pending), duration_s=300.0)
    pods = pods_by_name(summary)
    assert sorted(pods) == ["db-0", "db-1"]
    assert pods["db-1"]["created_s"] == pods["db-0"]["bound_s"] + 30.0
