"""``policy/v1`` PodDisruptionBudget, and the disruptions it allows (``pkg/controller/disruption``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpufleet.model.pod import Pod


@dataclass(frozen=True)
class DisruptionBudget:
    """A ``policy/v1`` PodDisruptionBudget: ``minAvailable`` or ``maxUnavailable`` (int or "N%")."""

    namespace: str
    name: str
    selector: tuple[tuple[str, str], ...]
    min_available: int | str | None = None
    max_unavailable: int | str | None = None

    def covers(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and all(pod.labels.get(k) == v for k, v in self.selector)

    def allowed(self, healthy: int, expected: int) -> int:
        """``disruptionsAllowed`` as the disruption controller computes it."""

        def scaled(value: int | str, round_up: bool) -> int:
            if isinstance(value, int):
                return value
            share = float(value.rstrip("%")) * expected / 100
            return math.ceil(share) if round_up else math.floor(share)

        if self.min_available is not None:
            desired = scaled(self.min_available, round_up=True)
        elif self.max_unavailable is not None:
            desired = expected - scaled(self.max_unavailable, round_up=True)
        else:
            desired = expected
        return max(healthy - desired, 0)


def expected_pod_count(
    budget: DisruptionBudget, pods: Sequence[Pod], scale_of: Callable[[Pod], int | None]
) -> int | None:
    """The expected count of ``getExpectedPodCount`` (``pkg/controller/disruption/disruption.go``): with an
    integer ``minAvailable``, the covered pods; with ``maxUnavailable`` or a percentage, the scale
    (``spec.replicas``) of the controllers of the covered pods summed once each (``getExpectedScale``),
    pods without a controller left out. A controller whose scale is unknown (``scale_of`` gives None: a
    Job has no scale subresource) is the controller's error "found no controllers for pod": None, and
    ``failSafe`` allows no disruption."""
    if budget.max_unavailable is None and not isinstance(budget.min_available, str):
        return len(pods)
    scales: dict[tuple[str, str, str], int] = {}
    for pod in pods:
        owner = pod.owner
        if owner is None:
            continue
        key = (owner.kind, pod.namespace, owner.name)
        if key not in scales:
            scale = scale_of(pod)
            if scale is None:
                return None
            scales[key] = scale
    return sum(scales.values())
