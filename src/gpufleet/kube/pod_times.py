"""When a dump's pod was bound to its node, as Kubernetes v1.34 records it in the pod's status.

The binding subresource (``pkg/registry/core/pod/storage/storage.go`` ``setPodNodeAndMetadata``) sets the
``PodScheduled`` condition ``True`` with ``podutil.UpdatePodCondition``, which stamps its
``lastTransitionTime`` now: the moment the scheduler bound the pod. ``status.startTime`` is the kubelet's
(``pkg/kubelet/status/status_manager.go`` ``updateStatusInternal``: set at its first status of the pod, kept
after): when the kubelet took the pod up, at or after the binding, later by the kubelet's watch and its pod
workers. So the bound time is the ``PodScheduled=True`` condition's ``lastTransitionTime``; a pod without one
(written with ``spec.nodeName``: never bound by a scheduler, the kubelet adds the condition at its first
status) is bound at its ``startTime``. A time that is no RFC 3339 time is an error at its field, as a Node's
times are (``kube.nodes.unix_time``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.nodes import unix_time
from gpufleet.kube.objects import items
from gpufleet.kube.problems import Reporter

POD_SCHEDULED = "PodScheduled"


def bound_time(status: Mapping[str, Any], report: Reporter) -> float | None:
    """When the pod of ``status`` was bound, in Unix seconds (None: neither time is given)."""
    for i, condition in enumerate(items(status.get("conditions"))):
        if condition.get("type") == POD_SCHEDULED and condition.get("status") == "True":
            path = f"status.conditions[{i}].lastTransitionTime"
            at = unix_time(condition.get("lastTransitionTime"), report, path)
            if at is not None:
                return at
    return unix_time(status.get("startTime"), report, "status.startTime")
