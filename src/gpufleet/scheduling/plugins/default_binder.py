"""DefaultBinder (``pkg/scheduler/framework/plugins/defaultbinder``): binds the pod to its node.

In simulation the binding is immediate and takes no time; a live backend binds through the
Binding subresource."""

from __future__ import annotations

from gpufleet.scheduling.framework import Bind
from gpufleet.scheduling.registry import register


@register
class DefaultBinder(Bind):
    name = "DefaultBinder"
    origin = "kube-scheduler"
