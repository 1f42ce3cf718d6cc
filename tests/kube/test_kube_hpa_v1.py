"""``autoscaling/v1`` HorizontalPodAutoscaler read as the API server converts it to v2
(pkg/apis/autoscaling/v1/conversion.go, k8s.io/kubernetes v1.34.10)."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, warnings

from gpufleet.model.hpa import ResourceMetricSource

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}
---
"""
HPA_V1 = """
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
"""


def _metric(tmp_path: Path, text: str) -> ResourceMetricSource:
    ((key, spec),) = load(tmp_path, DEPLOYMENT + text).hpas
    assert key == "default/web"
    (metric,) = spec.metrics
    assert isinstance(metric, ResourceMetricSource)
    return metric


def test_target_cpu_utilization_percentage_becomes_a_cpu_utilization_metric(tmp_path: Path) -> None:
    # Convert_v1_HorizontalPodAutoscalerSpec_To_autoscaling_HorizontalPodAutoscalerSpec
    metric = _metric(tmp_path, HPA_V1 + "  targetCPUUtilizationPercentage: 50\n")
    assert (metric.name, metric.target.type, metric.target.average_utilization) == ("cpu", "Utilization", 50)


def test_without_a_target_v1_defaults_to_80_percent_cpu(tmp_path: Path) -> None:
    # Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler: DefaultCPUUtilization
    assert _metric(tmp_path, HPA_V1).target.average_utilization == 80


def test_v1_min_replicas_defaults_to_one_and_max_is_kept(tmp_path: Path) -> None:
    ((_, spec),) = load(tmp_path, DEPLOYMENT + HPA_V1).hpas
    assert (spec.min_replicas, spec.max_replicas, spec.scale_target_ref.name) == (1, 10, "web")


def test_round_trip_annotations_are_warned_about_not_read(tmp_path: Path) -> None:
    annotations = "annotations: {autoscaling.alpha.kubernetes.io/metrics: '[]'}"
    text = HPA_V1.replace("metadata: {name: web}", f"metadata: {{name: web, {annotations}}}")
    assert warnings(tmp_path, DEPLOYMENT + text) == [
        "scenario.yaml: document 2 (HorizontalPodAutoscaler/default/web): metadata.annotations"
        "[autoscaling.alpha.kubernetes.io/metrics] is not modelled (a v2 object's round-trip annotation); "
        "ignored",
        "scenario.yaml: document 2 (HorizontalPodAutoscaler/default/web): "
        "spec.targetCPUUtilizationPercentage: the pods of Deployment default/web have no cpu usage (no "
        "Traffic aimed at it models it, no gpufleet.io/cpu-usage annotation): the Resource metric reads no "
        "value and the HPA holds on it",
    ]
