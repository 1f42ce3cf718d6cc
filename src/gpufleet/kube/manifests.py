"""Model objects back to Kubernetes API objects: what gpufleet writes to a real API server.

The inverse of ``kube.nodes`` for a Node, and of ``kube.pods`` for a pod of one container. A
Node: labels, taints, ``spec.unschedulable`` and ``status.capacity``/``status.allocatable`` as
canonical quantities (``96``, ``1500m``, ``768Gi``, exact bytes otherwise), so that reading the
object back gives the same node. A node of a ``NodePool`` carries the pool's template as the
scheduler sees it (GPU Feature Discovery labels included, as the pool's template declares them).
"""

from __future__ import annotations

from typing import Any

from gpufleet.model.node import Node, Toleration
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.resources import CPU, is_extended, native_first

_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def quantity(resource: str, value: int) -> str:
    """A canonical value as an exact Kubernetes quantity."""
    if resource == CPU:
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    for suffix, factor in _BINARY:
        if value >= factor and value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def resource_list(resources: dict[str, int]) -> dict[str, str]:
    return {r: quantity(r, resources[r]) for r in native_first(resources)}


def node_manifest(
    node: Node, annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``v1`` Node that ``node`` models (``annotations`` and ``labels`` added to its own)."""
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in node.taints
        ]
    if node.unschedulable:
        spec["unschedulable"] = True
    metadata: dict[str, Any] = {"name": node.name, "labels": {**node.labels, **(labels or {})}}
    if annotations:
        metadata["annotations"] = dict(annotations)
    status: dict[str, Any] = {
        "capacity": resource_list(node.capacity),
        "allocatable": resource_list(node.allocatable),
    }
    if node.images:  # one entry per name: ImageLocality indexes them by name alike
        status["images"] = [{"names": [n], "sizeBytes": size} for n, size in sorted(node.images.items())]
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec, "status": status}


def _requirement(r: Requirement) -> dict[str, Any]:
    out: dict[str, Any] = {"key": r.key, "operator": r.operator}
    if r.values:
        out["values"] = list(r.values)
    return out


def _term(term: SelectorTerm) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if term.expressions:
        out["matchExpressions"] = [_requirement(r) for r in term.expressions]
    if term.fields:
        out["matchFields"] = [_requirement(r) for r in term.fields]
    return out


def _toleration(t: Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": t.operator}
    if t.key:
        out["key"] = t.key
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def node_selector_terms(pod: Pod) -> list[dict[str, Any]]:
    """The pod's required node affinity as ``nodeSelectorTerms``."""
    return [_term(t) for t in pod.required_terms or ()]


def tolerations(pod: Pod) -> list[dict[str, Any]]:
    return [_toleration(t) for t in pod.tolerations]


def pod_manifest(pod: Pod, priority_class: str | None = None) -> dict[str, Any]:
    """The ``v1`` Pod of one container that ``pod`` models: its image (its last container's), requests
    (an extended resource's limit equal to its request, as the API server requires), host ports, node
    selector and node affinity, tolerations, scheduler, node and grace period. A priority needs a
    PriorityClass on a real API server: ``priority_class`` (else the pod's own class) names it."""
    requests = resource_list(pod.requests)
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    limits = {r: q for r, q in requests.items() if is_extended(r)}
    if limits:
        resources["limits"] = limits
    image = pod.behavior.image or (pod.images[-1] if pod.images else "registry.example.com/app:v1")
    container: dict[str, Any] = {"name": "main", "image": image}
    if resources:
        container["resources"] = resources
    if pod.host_ports:
        container["ports"] = [
            {"containerPort": p.port, "hostPort": p.port, "hostIP": p.ip, "protocol": p.protocol}
            for p in pod.host_ports
        ]
    spec: dict[str, Any] = {
        "containers": [container],
        "schedulerName": pod.scheduler_name,
        "restartPolicy": pod.restart_policy,
        "terminationGracePeriodSeconds": int(pod.termination_grace_s),
    }
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    node_affinity: dict[str, Any] = {}
    if pod.required_terms is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": node_selector_terms(pod)
        }
    if pod.preferred_terms:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": p.weight, "preference": _term(p.term)} for p in pod.preferred_terms
        ]
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    if pod.tolerations:
        spec["tolerations"] = tolerations(pod)
    if priority_class or pod.priority_class_name:
        spec["priorityClassName"] = priority_class or pod.priority_class_name
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    if pod.annotations:
        metadata["annotations"] = dict(pod.annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
