"""SchedulingGates (``pkg/scheduler/framework/plugins/schedulinggates``), Kubernetes 1.34.10.

PreEnqueue: a pod that still carries ``spec.schedulingGates`` does not enter the scheduling queue
(``UnschedulableAndUnresolvable``, ``waiting for scheduling gates: [foo bar]``, gate names in spec
order); it is never tried until an update removes its last gate (``UpdatePodSchedulingGatesEliminated``).
What the pod shows meanwhile is the API server's, set when it was created
(``applySchedulingGatedCondition``): ``PodScheduled=False``, reason ``SchedulingGated``, message
``Scheduling is blocked due to non-empty scheduling gates``.
"""

from __future__ import annotations

from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import SUCCESS, Code, PreEnqueue, Status
from gpufleet.scheduling.registry import register

#: ``v1.PodReasonSchedulingGated`` and the condition's message (``pkg/registry/core/pod/strategy.go``)
REASON = "SchedulingGated"
CONDITION_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def waiting_message(gates: tuple[str, ...]) -> str:
    """PreEnqueue's status message: the gate names as Go's ``%v`` prints a string slice."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def explained(gates: tuple[str, ...]) -> str:
    """What ``gpufleet explain`` says of a gated pod."""
    return (
        f"cannot be scheduled yet: scheduling gates [{', '.join(gates)}] "
        f"(PodScheduled=False, reason {REASON}: {CONDITION_MESSAGE})"
    )


@register
class SchedulingGates(PreEnqueue):
    name = "SchedulingGates"
    origin = "kube-scheduler"

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        reason = waiting_message(pod.scheduling_gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,), self.name)
