"""What the scheduler may ask about PodDisruptionBudgets: each budget with its current
``status.disruptionsAllowed``, as kube-scheduler's PDB lister gives them to DefaultPreemption
(``pkg/scheduler/framework/preemption/preemption.go``, ``getPodDisruptionBudgets``). The driver
that knows the pods' health (the simulator's disruption controller, or a live cluster's PDB
status) answers; the scheduler only reads it, so its decisions stay pure.
"""

from __future__ import annotations

from typing import Protocol

from gpufleet.model.disruption_budget import DisruptionBudget


class DisruptionView(Protocol):
    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """Every PodDisruptionBudget, in a fixed order, with its ``disruptionsAllowed`` now."""
        ...
