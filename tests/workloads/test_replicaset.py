"""``apps/v1`` ReplicaSet as a workload kind (pkg/controller/replicaset): ``replicas`` pods, named
``<rs>-<5 characters>`` as upstream's controller names them (``GetPodFromTemplate`` sets
``generateName: <rs>-``), replaced when they end; read as pkg/apis/apps/validation reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import pods_by_name, simulated
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.generated_names import ALPHANUMS
from gpufleet.workloads import controller_for
from gpufleet.workloads.replicaset import POD_DELETION_COST, ActivePod, ReplicaSet, pods_to_delete

NODES = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  replicas: 2
  template:
    status:
      capacity: {cpu: "16", memory: 64Gi, pods: "110"}
"""


def replica_set(replicas: int = 3, labels: str = "{app: web}", extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: web, namespace: shop}}
spec:
  replicas: {replicas}
  {extra}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata:
      labels: {labels}
      annotations: {{gpufleet.io/duration: 10m}}
    spec:
      containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "4"}}}}}}]
"""


def write(tmp_path: Path, *texts: str) -> list[Path]:
    paths = [tmp_path / f"{i}.yaml" for i in range(len(texts))]
    for path, text in zip(paths, texts, strict=True):
        path.write_text(text)
    return paths


def _replica_set(tmp_path: Path, text: str) -> ReplicaSet:
    (workload,) = load_scenario(write(tmp_path, text)).other_workloads
    assert isinstance(workload, ReplicaSet)
    return workload


def test_a_replica_set_keeps_replicas_pods_named_as_its_controller_names_them(tmp_path: Path) -> None:
    pods = pods_by_name(simulated(write(tmp_path, NODES, replica_set(3)), duration_s=300.0))
    assert len(pods) == 3
    assert all(re.fullmatch(f"web-[{ALPHANUMS}]{{5}}", name) for name in pods)
    assert all(p["phase"] == "Running" for p in pods.values())


def test_a_replica_set_replaces_a_pod_that_ends_under_a_new_name(tmp_path: Path) -> None:
    controller = controller_for(_replica_set(tmp_path, replica_set(2)))
    first = controller.wanted([])
    assert [p.owner.kind if p.owner else None for p in first] == ["ReplicaSet", "ReplicaSet"]
    assert controller.wanted([]) == []
    assert controller.finished(first[0], succeeded=True)
    (again,) = controller.wanted([])
    assert again.name not in {p.name for p in first}


def test_replica_set_pod_names_are_the_same_on_every_run(tmp_path: Path) -> None:
    names = [
        [p.name for p in controller_for(_replica_set(tmp_path, replica_set(4))).wanted([])] for _ in "ab"
    ]
    assert names[0] == names[1] and len(set(names[0])) == 4


def test_replicas_defaults_to_one(tmp_path: Path) -> None:
    text = replica_set().replace("  replicas: 3\n", "")
    assert _replica_set(tmp_path, text).replicas == 1


def test_a_selector_that_does_not_match_the_template_is_the_api_servers_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, replica_set(labels="{app: other}")))
    assert "(ReplicaSet/shop/web): spec.template.metadata.labels: Invalid value: " in str(caught.value)
    assert "`selector` does not match template `labels`" in str(caught.value)


def test_min_ready_seconds_is_a_warning(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, replica_set(extra="minReadySeconds: 5")))
    assert scenario.warnings == [
        f"{tmp_path}/0.yaml: document 1 (ReplicaSet/shop/web): spec.minReadySeconds is not modelled; ignored"
    ]


SERVING = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  minReplicas: 2
  maxReplicas: 6
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
metadata: {name: web, namespace: shop}
spec:
  target: web
  targetKind: ReplicaSet
  perReplicaRps: 10
  rps:
  - {at: 0s, value: 30}
  - {at: 10m, value: 0}
"""


def test_an_hpa_scales_a_replica_set_up_under_load_and_back_down(tmp_path: Path) -> None:
    """The HPA scales a ReplicaSet through its scale subresource as it scales a Deployment: 30 requests/s
    over 2 serving pods is 15 each against an AverageValue of 5, so ceil(2 x 15 / 5) = 6, reached within
    the legacy limit of max(2 x current, 4) per sync; with no load from 10 min it returns to minReplicas
    (scale-down window 0), the ReplicaSet deleting the surplus with reason ScaledDown."""
    summary = simulated(write(tmp_path, NODES, SERVING), duration_s=900.0)
    assert summary["warnings"] == []
    replicas = summary["timeline"]["replicas"]["ReplicaSet/shop/web"]
    assert max(replicas) == 6 and replicas[-1] == 2
    pods = pods_by_name(summary).values()
    assert sum(1 for p in pods if p["reason"] == "ScaledDown") == 4
    assert sum(1 for p in pods if p["phase"] == "Running" and p["deleted_s"] is None) == 2


def test_a_keda_scaled_object_scales_a_replica_set(tmp_path: Path) -> None:
    """KEDA's ScaledObject on a ReplicaSet (``scaleTargetRef.kind: ReplicaSet``): activation 0 -> 1 on a
    non-empty list, then its HPA's External AverageValue: ceil(4 queued items / 1) = 4 replicas (nothing
    consumes the list)."""
    scaled = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  minReplicaCount: 0
  maxReplicaCount: 6
  triggers:
  - type: redis
    metadata: {address: "redis:6379", listName: "web:jobs", listLength: "1"}
---
apiVersion: gpufleet.io/v1alpha1
kind: QueueFeed
metadata: {name: web, namespace: shop}
spec:
  list: web:jobs
  items: [{at: 0s, count: 4, work: 1h}]
"""
    summary = simulated(write(tmp_path, NODES, replica_set(0), scaled), duration_s=120.0)
    assert summary["warnings"] == []
    assert max(summary["timeline"]["replicas"]["ReplicaSet/shop/web"]) == 4


def test_a_prometheus_trigger_reads_a_replica_sets_pods_by_their_replicaset_label(tmp_path: Path) -> None:
    """A ReplicaSet's ready pods are scraped with the label ``replicaset``: sum(requests_per_second) is the
    30 requests/s of its Traffic, so KEDA's HPA asks ceil(30 / 10) = 3 replicas."""
    replica_set_doc, _, traffic = SERVING.split("---\n")
    scaled = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  minReplicaCount: 2
  maxReplicaCount: 6
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      threshold: "10"
      query: 'sum(requests_per_second{replicaset="web"})'
"""
    summary = simulated(write(tmp_path, NODES, replica_set_doc, traffic, scaled), duration_s=300.0)
    assert summary["warnings"] == []
    assert max(summary["timeline"]["replicas"]["ReplicaSet/shop/web"]) == 3


def test_two_hpas_on_one_replica_set_are_ambiguous_and_neither_scales(tmp_path: Path) -> None:
    """horizontal.go ``validateAndParseSelector``: the ReplicaSet's pods are controlled by two HPAs, so
    each gets AmbiguousSelector and computes no metrics: under the same load it stays at 2 replicas; the
    loader says so on both."""
    second = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web-too, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  minReplicas: 2
  maxReplicas: 4
"""
    summary = simulated(write(tmp_path, NODES, SERVING, second), duration_s=300.0)
    assert set(summary["timeline"]["replicas"]["ReplicaSet/shop/web"]) == {2.0}
    ambiguous = (
        "spec.scaleTargetRef: ReplicaSet shop/web is also scaled by HorizontalPodAutoscaler/shop/{}: its "
        "pods are controlled by multiple HPAs, so the HPA controller computes no metrics for any of them "
        "(AmbiguousSelector)"
    )
    # (the second HPA's default cpu metric reads no usage: its pods' Traffic models none, said too)
    no_usage = (
        "spec.metrics: the pods of ReplicaSet shop/web have no cpu usage (no Traffic aimed at it models it, "
        "no gpufleet.io/cpu-usage annotation): the Resource metric reads no value and the HPA holds on it"
    )
    assert summary["warnings"] == [
        f"{tmp_path}/1.yaml: document 2 (HorizontalPodAutoscaler/shop/web): " + ambiguous.format("web-too"),
        f"{tmp_path}/2.yaml: document 1 (HorizontalPodAutoscaler/shop/web-too): " + no_usage,
        f"{tmp_path}/2.yaml: document 1 (HorizontalPodAutoscaler/shop/web-too): " + ambiguous.format("web"),
    ]


def test_an_hpa_aimed_at_a_kind_gpufleet_does_not_scale_says_so(tmp_path: Path) -> None:
    """Only Deployments and ReplicaSets have a scale subresource gpufleet runs; an HPA on a DaemonSet
    (which has none upstream either) scales nothing, with a warning."""
    daemonset = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: agent}]
"""
    hpa = """
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: agent, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: DaemonSet, name: agent}
  maxReplicas: 10
"""
    scenario = load_scenario(write(tmp_path, daemonset, hpa))
    assert scenario.warnings == [
        f"{tmp_path}/1.yaml: document 1 (HorizontalPodAutoscaler/shop/agent): spec.scaleTargetRef: "
        "apps/v1/DaemonSet shop/agent is not a Deployment or ReplicaSet of the scenario: it scales nothing "
        "gpufleet runs"
    ]


NOW = 1_000_000.0


def active(
    key: str,
    node: str | None = "node",
    phase: str = "Running",
    ready_s: float | None = None,
    created_s: float = 0.0,
    restarts: int = 0,
    cost: str | None = None,
) -> ActivePod:
    annotations = {} if cost is None else {POD_DELETION_COST: cost}
    return ActivePod(key, node, phase, ready_s, created_s, restarts, annotations)


def test_scale_down_deletes_unscheduled_then_pending_then_unready_pods_first() -> None:
    """``ActivePodsWithRanks.Less`` rules 1-3: unassigned < assigned; Pending < Unknown < Running; not
    ready < ready."""
    pods = [
        active("ready", ready_s=NOW - 60),
        active("not-ready"),
        active("unknown", phase="Unknown"),
        active("pending", phase="Pending"),
        active("unscheduled", node=None, phase="Pending"),
    ]
    assert pods_to_delete(pods, 4, NOW) == ["unscheduled", "pending", "unknown", "not-ready"]


def test_scale_down_honours_the_pod_deletion_cost_annotation() -> None:
    """Rule 4 (PodDeletionCost, on since 1.22): the lower cost goes first; a cost that is not an int32
    counts as 0."""
    pods = [
        active("high", ready_s=NOW - 60, cost="100"),
        active("bad", ready_s=NOW - 60, cost="1e3"),
        active("low", ready_s=NOW - 60, cost="-5"),
    ]
    assert pods_to_delete(pods, 2, NOW) == ["low", "bad"]


def test_scale_down_prefers_pods_doubled_up_on_a_node() -> None:
    """Rule 5 (``getPodsRankedByRelatedPodsOnSameNode``): a pod sharing its node with more of the set's
    active pods goes first."""
    pods = [
        active("alone", node="a", ready_s=NOW - 60),
        active("shared-1", node="b", ready_s=NOW - 3600),
        active("shared-2", node="b", ready_s=NOW - 3600),
    ]
    assert pods_to_delete(pods, 1, NOW) in (["shared-1"], ["shared-2"])


def test_scale_down_of_a_replicaset_no_controller_owns_ranks_no_pod_by_node() -> None:
    """``getIndirectlyRelatedPods`` lists the pods of ``getReplicaSetsWithSameController``, none for a
    ReplicaSet without a controller: every rank is 0, so the pod ready for less time goes first though the
    others share a node."""
    pods = [
        active("alone", node="a", ready_s=NOW - 60),
        active("shared-1", node="b", ready_s=NOW - 3600),
        active("shared-2", node="b", ready_s=NOW - 3600),
    ]
    assert pods_to_delete(pods, 1, NOW, by_node=False) == ["alone"]


def test_scale_down_takes_the_most_recently_ready_then_restarted_then_newest_in_log2_buckets() -> None:
    """Rules 6-8 with LogarithmicScaleDown (GA in 1.31): ready for less time goes first, but times in
    the same power-of-two bucket of age are equal and the UID decides; then more restarts; then newer."""
    assert pods_to_delete([active("old", ready_s=NOW - 3600), active("new", ready_s=NOW - 60)], 1, NOW) == [
        "new"
    ]
    # 5 h and 8 h are both in the 2^44 ns bucket: the UID (here the key) decides
    same_bucket = [active("b", ready_s=NOW - 5 * 3600), active("a", ready_s=NOW - 8 * 3600)]
    assert pods_to_delete(same_bucket, 1, NOW) == ["a"]
    restarted = [active("calm", ready_s=NOW - 60), active("crashy", ready_s=NOW - 60, restarts=3)]
    assert pods_to_delete(restarted, 1, NOW) == ["crashy"]
    created = [
        active("older", ready_s=NOW - 60, created_s=NOW - 7200),
        active("newer", ready_s=NOW - 60, created_s=NOW - 120),
    ]
    assert pods_to_delete(created, 1, NOW) == ["newer"]
