"""A ProvisioningRequest (``autoscaling.x-k8s.io/v1``) as cluster-autoscaler reads it: its class, its pod sets
(each a PodTemplate's pod and a count), its parameters and its status conditions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.model.pod import Pod

CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
BEST_EFFORT_ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


@dataclass(frozen=True)
class Condition:
    """A ``metav1.Condition`` of the request's status."""

    type: str
    status: bool | None  # True, False, or None: Unknown
    reason: str
    message: str
    last_transition: float


@dataclass(frozen=True)
class PodSet:
    """``spec.podSets[i]``: ``count`` pods of the PodTemplate ``template`` names."""

    template: str
    count: int
    pod: Pod  # the template as a pod (``GetPodFromTemplate``)


@dataclass(frozen=True)
class ProvisioningRequest:
    name: str
    namespace: str
    class_name: str  # spec.provisioningClassName
    pod_sets: tuple[PodSet, ...]
    parameters: Mapping[str, str]
    created: float = 0.0
    conditions: tuple[Condition, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def condition(self, kind: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == kind), None)

    def is_true(self, kind: str) -> bool:
        found = self.condition(kind)
        return found is not None and found.status is True
