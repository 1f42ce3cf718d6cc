"""Nodes (``v1`` Node, and the Node-like template of a NodePool) as kube-scheduler sees them.

``status.capacity`` and ``status.allocatable`` (which defaults to capacity, as the
scheduler's ``NodeInfo`` reads it), labels, ``spec.taints`` and ``spec.unschedulable``. A
node without ``pods`` gets the kubelet's default ``maxPods`` of 110. Node conditions other
than ``Ready=True``, and pressure conditions that hold, are warnings: the node lifecycle
controller turns them into taints, which a snapshot carries in ``spec.taints`` anyway.
``status.images`` (each image's ``names`` and ``sizeBytes``) are the images already on the node, by
every name, as the scheduler's snapshot indexes them for ImageLocality (``createImageExistenceMap``).
The annotation ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` keeps the node (or
the NodePool's nodes) from cluster-autoscaler's scale-down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube import pod_annotations, resource_lists, taints
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter
from gpufleet.model.node import Node
from gpufleet.model.resources import PODS

#: The kubelet's default ``maxPods``.
DEFAULT_MAX_PODS = 110
#: The status of each condition when the node is healthy.
_HEALTHY = {"Ready": "True"}
_HEALTHY_OTHERWISE = "False"

#: cluster-autoscaler's node annotation that keeps the node from scale-down (``ScaleDownDisabledKey``)
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


def node(meta: Meta, body: Mapping[str, Any], report: Reporter, name: str | None = None) -> Node:
    """The node ``body`` describes (``name`` overrides ``metadata.name``); problems go to ``report``."""
    pod_annotations.read(meta.annotations, report.at("metadata"), pod_annotations.NO_KEYS)
    spec, status = mapping(body.get("spec")), mapping(body.get("status"))
    capacity = resource_lists.read(status.get("capacity"), report, "status.capacity")
    allocatable = resource_lists.read(status.get("allocatable"), report, "status.allocatable") or dict(
        capacity
    )
    if not mapping(status.get("capacity")) and not mapping(status.get("allocatable")):
        report.error("status.capacity", "a node needs capacity (cpu, memory, pods, ...)")
    allocatable.setdefault(PODS, capacity.get(PODS, DEFAULT_MAX_PODS))
    if capacity:
        capacity.setdefault(PODS, allocatable[PODS])
    node_taints = taints.taints(spec.get("taints"), report, "spec.taints")
    _warn_conditions(status, report)
    return Node(
        name=name if name is not None else meta.name,
        labels=dict(meta.labels),
        taints=node_taints,
        unschedulable=bool(spec.get("unschedulable")),
        capacity=capacity,
        allocatable=allocatable,
        images=_images(status),
        scale_down_disabled=meta.annotations.get(SCALE_DOWN_DISABLED) == "true",
    )


def _images(status: Mapping[str, Any]) -> dict[str, int]:
    images: dict[str, int] = {}
    for image in items(status.get("images")):
        size = image.get("sizeBytes")
        for name in image.get("names") or ():
            if isinstance(name, str):
                images[name] = size if isinstance(size, int) and size > 0 else 0
    return images


def _warn_conditions(status: Mapping[str, Any], report: Reporter) -> None:
    for i, condition in enumerate(items(status.get("conditions"))):
        kind, state = condition.get("type"), condition.get("status")
        if state != _HEALTHY.get(str(kind), _HEALTHY_OTHERWISE):
            note = "the node is treated as Ready" if kind == "Ready" else ""
            report.not_modelled(f"status.conditions[{i}]", f"{kind}={state}", note=note)
