"""``autoscaling/v1`` HorizontalPodAutoscaler, converted to the ``autoscaling/v2`` form as the API
server converts it to its internal version (pkg/apis/autoscaling/v1/conversion.go, k8s.io/kubernetes
v1.34.10).

``Convert_v1_HorizontalPodAutoscalerSpec_To_autoscaling_HorizontalPodAutoscalerSpec``: the target,
``minReplicas`` and ``maxReplicas`` are kept; ``targetCPUUtilizationPercentage`` becomes one
``Resource`` metric on ``cpu`` with an ``Utilization`` target. Without it,
``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`` applies v1's implicit
default, the same metric at ``DefaultCPUUtilization`` (80). ``minReplicas`` is defaulted later, as
for v2 (``SetDefaults_HorizontalPodAutoscaler``: 1). The round-trip annotations through which a v2
object read as v1 keeps its other metrics and behavior (``autoscaling.alpha.kubernetes.io/metrics``,
``.../behavior``) are written by the API server, not by users: they are warnings, not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Reporter

#: ``autoscaling.DefaultCPUUtilization`` (pkg/apis/autoscaling/annotations.go)
DEFAULT_CPU_UTILIZATION = 80
#: ``MetricSpecsAnnotation``, ``BehaviorSpecsAnnotation`` (pkg/apis/autoscaling/annotations.go)
ROUND_TRIP_ANNOTATIONS = (
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/behavior",
)


def to_v2(body: Mapping[str, Any], report: Reporter) -> dict[str, Any]:
    """The ``autoscaling/v2`` document that the ``autoscaling/v1`` ``body`` converts to."""
    spec = mapping(body.get("spec"))
    annotations = mapping(mapping(body.get("metadata")).get("annotations"))
    for key in ROUND_TRIP_ANNOTATIONS:
        if key in annotations:
            report.not_modelled(f"metadata.annotations[{key}]", note="a v2 object's round-trip annotation")
    target = spec.get("targetCPUUtilizationPercentage")
    utilization = DEFAULT_CPU_UTILIZATION if target is None else target
    metric = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }
    converted = {key: spec[key] for key in ("scaleTargetRef", "minReplicas", "maxReplicas") if key in spec}
    return {**body, "apiVersion": "autoscaling/v2", "spec": {**converted, "metrics": [metric]}}
