"""When things happen in a Job controller fidelity case (``e2e.fidelity.job_cases``), on either side, and
whether the two sides agree on it.

Two times are compared, both in seconds after the Job's creation: each pod's creation (in order), which the
pod failure backoff (``pkg/controller/job/backoff_utils.go``: ``DefaultJobPodFailureBackOff`` 10 s doubling
per failure since the last success, from each failed pod's ``getFinishedTime``), the pod durations,
suspension and resumption decide; and when the Job's end was decided (its first ``FailureTarget``,
``SuccessCriteriaMet``, ``Failed`` or ``Complete`` condition: the interim condition comes first,
``delayTerminalCondition``, and the terminal one only once kwok has removed the deleted pods), which
``activeDeadlineSeconds`` (``pastActiveDeadline``) decides too. On the real side both are when the case's
watches first told of the pod and of the condition (``watches.Watches``); gpufleet's are its pods'
``created_s`` and its condition's ``time_s``.

The real side is late and uneven in ways gpufleet does not model: kube-scheduler binding and kwok's Stages
(``e2e/kwok/stages.yaml``: Ready once bound, Succeeded, Failed or restarted ``gpufleet.io/duration`` after)
take time; the Job controller batches the syncs that pod updates cause (``SyncJobBatchPeriod``, 1 s), so
that a step that follows a pod's end is about a second late; and the times it reads back from the API
server are whole seconds (``metav1.Time``: a failed pod's ``finishedAt``, from which the backoff counts, and
``status.startTime``, from which the deadline counts, are truncated), so that a retry or a deadline may come
up to a second early. kube-controller-manager runs with a worker per Job and no client rate limit to speak
of (``e2e.controlplane.CONTROLLER_MANAGER_PACING``): with its defaults (five workers, 20 requests a second)
it fell seconds behind while two dozen Jobs ran at once, so that the cases whose times are pod lifetimes
chained through the controller's syncs could not be compared in time. The times are compared step by step:
each event (a pod created, then the end decided) as the time since the event before it (the first since the
Job's creation), so that one slow step does not shift every later one.

Measured over 4 runs of every case with that pacing (on two cores shared with other work, load average 7 to
9): a step's spread across the runs was 0.7 s at the median, 1.7 s at the 90th percentile and 3.0 s at
most; against gpufleet's, the real side's steps were between 3.0 s early and 4.4 s late (0.4 s late at the
median, 1.5 s at the 90th percentile), the latest the end of ``on-failure-restart-count``, whose step
chains five of kwok's Stages. ``TOLERANCE_S`` is 5 s: a few times the spread, above the worst step seen,
and half the smallest backoff (10 s), so that a retry that did not wait, or waited one doubling too many or
too few, a container restart counted before its back-off, or a deadline that did not restart on resumption
(the cases keep that 8 s apart), disagrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: how far a real step may be from gpufleet's and still agree (see the module's docstring)
TOLERANCE_S = 5.0


@dataclass(frozen=True)
class Times:
    """A Job's times in seconds after its creation: its pods' creations, in order, and when its end was
    decided (its first ``FailureTarget``, ``SuccessCriteriaMet``, ``Failed`` or ``Complete`` condition; None:
    it had none)."""

    pods: tuple[float, ...]
    finished: float | None

    def as_json(self) -> dict[str, Any]:
        return {"pods_created_s": [round(t, 2) for t in self.pods], "finished_s": _round(self.finished)}

    def steps(self, pods: int) -> list[tuple[str, float, float]]:
        """Its first ``pods`` pods' creations, then the end decided: each as what, when (after the Job's
        creation) and how long after the event before it."""
        events = [(f"pod {n} created", t) for n, t in enumerate(self.pods[:pods])]
        if self.finished is not None:
            events.append(("end decided", self.finished))
        before = [0.0, *(t for _, t in events)]
        return [(what, t, t - b) for (what, t), b in zip(events, before, strict=False)]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def times_disagree(real: Times, gpufleet: Times, tolerance_s: float = TOLERANCE_S) -> str:
    """Where a step of the real side's (``Times.steps``) is more than ``tolerance_s`` from gpufleet's (the
    pods in order of creation, as far as both created them: a different count is the outcome's to tell), or
    where only one side decided its end; empty when nowhere."""
    if (real.finished is None) != (gpufleet.finished is None):
        return f"end decided at {_round(real.finished)} s, gpufleet {_round(gpufleet.finished)} s"
    pods = min(len(real.pods), len(gpufleet.pods))
    return "; ".join(
        f"{what} at {r_at:.2f} s ({r_step:.2f} s after the event before), "
        f"gpufleet {g_at:.2f} s ({g_step:.2f} s)"
        for (what, r_at, r_step), (_, g_at, g_step) in zip(
            real.steps(pods), gpufleet.steps(pods), strict=True
        )
        if abs(r_step - g_step) > tolerance_s
    )
