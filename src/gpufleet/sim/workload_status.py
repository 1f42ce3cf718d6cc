"""A workload's status as a user reads it (``kubectl get job -o yaml``'s ``status``), on the simulation's
clock: for a ``ReportsStatus`` controller (a Job), when it started (``status.startTime``), when each of
its conditions first held (``lastTransitionTime``) and, for a Job that completed, ``completionTime``
(``enactJobFinished``: the ``Complete`` condition's time). The controller says which conditions hold;
the driver notes the time each appears (``note``), after every reconcile and every pod it is told of.

``startTime`` is set as upstream sets it: at the Job's first sync when it is not suspended (when the
controller starts) and again each time it resumes (``syncJob``: "Resumed jobs will always reset StartTime");
a Job Kueue manages starts suspended and has none until admitted, and Kueue clears it when it evicts the Job
(``Job.Stop``): null then.

A StatefulSet's status (``computeReplicaStatus``) has no conditions and neither time: its replica counts
only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpufleet.workloads.kind import ReportsStatus, StatusCondition

#: the condition whose first time is ``status.completionTime`` (``batch.JobComplete``)
COMPLETE = "Complete"


@dataclass
class WorkloadStatus:
    """What the driver noted of one workload's status."""

    #: ``status.startTime``: None while the Job is suspended (Kueue has not admitted it, or evicted it)
    start_s: float | None
    #: each condition as it first held, and when (in the order they appeared)
    conditions: list[tuple[StatusCondition, float]] = field(default_factory=list)
    #: ``ttlSecondsAfterFinished``: when the finished Job expires (once it finished), and when it was deleted
    expires_s: float | None = None
    deleted_s: float | None = None

    def note(self, controller: ReportsStatus, now_s: float) -> None:
        """The conditions that hold now and were not noted yet start now (a condition type is noted
        once: ``ensureJobConditionStatus`` keeps a condition's time while it holds)."""
        seen = {c.type for c, _ in self.conditions}
        for condition in controller.status_conditions():
            if condition.type not in seen:
                self.conditions.append((condition, now_s))
                seen.add(condition.type)

    def as_dict(self, controller: ReportsStatus) -> dict[str, Any]:
        """``summary.json``'s record: conditions, pod counts, ``completedIndexes`` (an Indexed Job) and
        ``failedIndexes`` (a Job with ``backoffLimitPerIndex``), start and completion time (a Job's:
        ``ReportsStatus.status_times``), and when it was deleted (its ``ttlSecondsAfterFinished`` expired)
        where it was."""
        complete = next((t for c, t in self.conditions if c.type == COMPLETE), None)
        return {
            "conditions": [
                {"type": c.type, "status": "True", "reason": c.reason, "message": c.message, "time_s": t}
                for c, t in self.conditions
            ],
            **controller.status_counts(),
            **controller.status_indexes(),
            **(
                {"start_time_s": self.start_s, "completion_time_s": complete}
                if controller.status_times
                else {}
            ),
            **({"deleted_s": self.deleted_s} if self.deleted_s is not None else {}),
        }
