"""``policy/v1`` PodDisruptionBudget, and the disruptions it allows (``pkg/controller/disruption``)."""

from __future__ import annotations

import math
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
