"""A loaded trace as Kubernetes manifests (``gpufleet trace import``): ``v1`` Nodes with their
labels and capacity, and bare ``v1`` Pods that ``gpufleet simulate`` replays in time.

A pod arrives at its ``creation_time`` (``gpufleet.io/submit-at``), runs for ``deletion_time -
creation_time`` (``gpufleet.io/duration``) and so, started at once, ends Succeeded at its deletion
time; one that had to wait is deleted at its ``deletion_time`` all the same, pending or running
(``gpufleet.io/delete-at``), as in the trace;
a fractional request becomes KAI's ``gpu-fraction`` annotation, whole GPUs a ``nvidia.com/gpu``
limit, a GPU model constraint a required node affinity.
"""

from __future__ import annotations

from typing import Any

from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.resources import CPU, GPU, MEMORY, format_units
from gpufleet.traces.base import TracePod


def node_manifest(node: Node) -> dict[str, Any]:
    labels = {k: v for k, v in node.labels.items() if k != "kubernetes.io/hostname"}
    capacity = {r: format_units(r, v) for r, v in node.capacity.items()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "status": {"capacity": capacity},
    }


def pod_manifest(trace_pod: TracePod) -> dict[str, Any]:
    pod = trace_pod.pod
    annotations: dict[str, str] = {}
    if trace_pod.created_s is not None:
        annotations["gpufleet.io/submit-at"] = _seconds(trace_pod.created_s)
    if trace_pod.created_s is not None and trace_pod.deleted_s is not None:
        annotations["gpufleet.io/duration"] = _seconds(max(trace_pod.deleted_s - trace_pod.created_s, 1.0))
    if trace_pod.deleted_s is not None:
        annotations["gpufleet.io/delete-at"] = _seconds(trace_pod.deleted_s)
    if pod.gpu_share is not None:
        annotations["gpu-fraction"] = f"{(pod.gpu_share.compute_milli or 0) / MILLI:g}"
    requests = {r: format_units(r, v) for r, v in pod.requests.items() if r in (CPU, MEMORY)}
    resources: dict[str, Any] = {"requests": requests}
    if pod.gpus:
        resources["limits"] = {GPU: str(pod.gpus)}
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "trace/pod", "resources": resources}],
    }
    if pod.required_terms:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": r.key, "operator": r.operator, "values": list(r.values)}
                                for r in term.expressions
                            ]
                        }
                        for term in pod.required_terms
                    ]
                }
            }
        }
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _seconds(value: float) -> str:
    """A Go duration in whole seconds (the trace's unit); fractions as milliseconds."""
    return f"{int(value)}s" if value == int(value) else f"{round(value * 1000)}ms"


#: A deleted pod's termination grace period (the API server's default): the run lasts that much longer.
GRACE_S = 30.0
#: Timeline samples a trace's Simulation document asks for (its sampleInterval is the span over this).
SAMPLES = 2000


def simulation_manifest(pods: list[TracePod], name: str) -> dict[str, Any]:
    """A ``Simulation`` that runs until the last pod's deletion time and its grace period, sampled
    ``SAMPLES`` times."""
    end = max((p.deleted_s or p.created_s or 0.0 for p in pods), default=0.0) + GRACE_S + 1.0
    spec = {
        "duration": _seconds(float(int(end))),
        "sampleInterval": _seconds(float(max(10, int(end // SAMPLES)))),
    }
    return {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": name},
        "spec": spec,
    }
