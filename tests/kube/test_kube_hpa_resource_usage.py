"""An HPA's own ``Resource`` metric over pods that have no usage of that resource is a warning, as a KEDA
cpu/memory trigger's is: the metrics server reports no sample for them, the replica calculation finds
``no metrics returned from resource metrics API`` (``replica_calculator.go`` ``GetResourceReplicas``,
Kubernetes 1.34) and the HPA holds on that metric. The warning names the HPA's field: ``spec.metrics[i]``
(the index as written), ``spec.metrics`` where it is empty (``SetDefaults_HorizontalPodAutoscaler``: cpu
at 80 %), or an ``autoscaling/v1`` HPA's ``spec.targetCPUUtilizationPercentage`` (written or defaulted).
A pod's usage is a Traffic's ``idleCpu``/``cpuPerRequest`` (cpu) or ``idleMemory``/
``memoryPerQueuedRequest`` (memory) aimed at the target, or the template's ``gpufleet.io/cpu-usage`` /
``memory-usage``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import warnings

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: serving}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}
---
"""
HPA_V2 = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: serving}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
"""
HPA_V1 = HPA_V2.replace("autoscaling/v2", "autoscaling/v1")
CPU = "  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}\n"
MEMORY = "  - {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 2Gi}}}\n"
PODS = (
    "  - {type: Pods, pods: {metric: {name: queue_length}, "
    "target: {type: AverageValue, averageValue: '5'}}}\n"
)
CONTAINER = (
    "  - {type: ContainerResource, containerResource: {name: cpu, container: c, "
    "target: {type: Utilization, averageUtilization: 60}}}\n"
)
LABEL = "scenario.yaml: document 2 (HorizontalPodAutoscaler/serving/web)"
TRAFFIC = (
    "---\napiVersion: gpufleet.io/v1alpha1\nkind: Traffic\nmetadata: {name: chat, namespace: serving}\n"
    "spec: {target: web, perReplicaRps: 10, rps: [{at: 0s, value: 5}]USAGE}\n"
)


def _no_usage(field: str, resource: str = "cpu") -> str:
    return (
        f"{LABEL}: {field}: the pods of Deployment serving/web have no {resource} usage (no Traffic aimed at "
        f"it models it, no gpufleet.io/{resource}-usage annotation): the Resource metric reads no value and "
        "the HPA holds on it"
    )


def _annotated(annotation: str) -> str:
    return DEPLOYMENT.replace(
        "metadata: {labels: {app: web}}", f"metadata: {{labels: {{app: web}}, annotations: {{{annotation}}}}}"
    )


@pytest.mark.parametrize(
    ("hpa", "expected"),
    [
        pytest.param(HPA_V2 + "  metrics:\n" + CPU, [_no_usage("spec.metrics[0]")], id="v2 cpu"),
        pytest.param(
            HPA_V2 + "  metrics:\n" + PODS + MEMORY,
            [_no_usage("spec.metrics[1]", "memory")],
            id="v2 memory after a Pods metric",
        ),
        pytest.param(HPA_V2, [_no_usage("spec.metrics")], id="v2 without metrics: the default cpu metric"),
        pytest.param(
            HPA_V1 + "  targetCPUUtilizationPercentage: 50\n",
            [_no_usage("spec.targetCPUUtilizationPercentage")],
            id="v1 target",
        ),
        pytest.param(HPA_V1, [_no_usage("spec.targetCPUUtilizationPercentage")], id="v1 default target"),
    ],
)
def test_a_resource_metric_over_pods_without_usage_is_a_warning_naming_the_hpas_field(
    tmp_path: Path, hpa: str, expected: list[str]
) -> None:
    assert warnings(tmp_path, DEPLOYMENT + hpa) == expected


def test_the_index_is_the_metrics_as_written_past_a_container_resource_metric(tmp_path: Path) -> None:
    """A ContainerResource metric is not modelled (its own warning) and not kept, but the Resource metric
    after it is still ``spec.metrics[1]``."""
    lines = warnings(tmp_path, DEPLOYMENT + HPA_V2 + "  metrics:\n" + CONTAINER + CPU)
    assert lines[-1] == _no_usage("spec.metrics[1]")
    assert len(lines) == 2 and "spec.metrics[0].containerResource is not modelled" in lines[0]


@pytest.mark.parametrize(
    ("deployment", "extra", "expected"),
    [
        pytest.param(_annotated("gpufleet.io/cpu-usage: 300m"), "", [], id="cpu-usage annotation"),
        pytest.param(
            _annotated("gpufleet.io/memory-usage: 1Gi"),
            "",
            [_no_usage("spec.metrics[0]")],
            id="a memory-usage annotation does not give cpu",
        ),
        pytest.param(
            DEPLOYMENT, TRAFFIC.replace("USAGE", ", cpuPerRequest: 50m"), [], id="Traffic cpuPerRequest"
        ),
        pytest.param(DEPLOYMENT, TRAFFIC.replace("USAGE", ", idleCpu: 100m"), [], id="Traffic idleCpu"),
        pytest.param(
            DEPLOYMENT,
            TRAFFIC.replace("USAGE", ", idleMemory: 1Gi"),
            [_no_usage("spec.metrics[0]")],
            id="a Traffic modelling only memory",
        ),
    ],
)
def test_a_cpu_metric_is_not_warned_about_where_the_pods_have_a_cpu_usage(
    tmp_path: Path, deployment: str, extra: str, expected: list[str]
) -> None:
    assert warnings(tmp_path, deployment + HPA_V2 + "  metrics:\n" + CPU + extra) == expected


def test_a_resource_gpufleet_models_no_usage_of_is_a_warning(tmp_path: Path) -> None:
    """Only cpu and memory have a usage; a Resource metric on another resource reads nothing."""
    metric = CPU.replace("name: cpu", "name: ephemeral-storage")
    hpa = HPA_V2 + "  metrics:\n" + metric
    assert warnings(tmp_path, _annotated("gpufleet.io/cpu-usage: 300m") + hpa) == [
        f"{LABEL}: spec.metrics[0]: gpufleet models no ephemeral-storage usage (only cpu and memory): the "
        "Resource metric reads no value and the HPA holds on it"
    ]


def test_an_hpa_with_only_pods_metrics_is_not_warned_about(tmp_path: Path) -> None:
    assert (
        warnings(tmp_path, DEPLOYMENT + HPA_V2 + "  metrics:\n" + PODS + TRAFFIC.replace("USAGE", "")) == []
    )
