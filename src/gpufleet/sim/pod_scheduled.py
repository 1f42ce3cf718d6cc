"""A pending pod's ``PodScheduled`` condition as cluster-autoscaler reads it (cluster-autoscaler 1.34.5,
``utils/kubernetes/listers.go``).

``isUnschedulable``: a pod not bound (``spec.nodeName``) nor being deleted (``deletionTimestamp``) whose
``PodScheduled`` condition is ``False`` with reason ``Unschedulable``, whichever scheduler wrote it:
cluster-autoscaler lists the pods of every scheduler, one the run does not simulate too.
``SchedulerUnprocessedPods`` (``--bypassed-scheduler-names``): a pod of one of those schedulers, not bound,
deleted nor unschedulable, with no ``PodScheduled`` condition or one ``False`` without a reason. Any other
reason (``SchedulerError``: kube-scheduler retries the pod; ``SchedulingGated``; a custom one) puts the pod in
neither list.

A pod's condition in the run: what its scheduler in the run last wrote (``PodRecord.reason``, None standing
for ``Unschedulable``, with its ``message``; no condition while both are None); before that scheduler first
tries a dump's pod, the dump's condition, which ``Simulation._create`` copies into the record; for a pod that
no scheduler of the run serves, the dump's (``PodRecord.dump_condition``) to the end: nothing in the run
writes it (its ``message`` without a dump condition is gpufleet's note, ``scheduling.messages.no_scheduler``).
The callers check the rest (pending, not bound, not deleted, not waiting at Permit, not held by Kueue).
"""

from __future__ import annotations

from gpufleet.sim.records import PodRecord


def unschedulable(rec: PodRecord, served: bool) -> bool:
    """``isUnschedulable``'s condition test; ``served``: a scheduler of the run serves the pod."""
    if not served:
        return rec.dump_condition is not None and rec.dump_condition.unschedulable
    return rec.message is not None and rec.reason is None


def unprocessed(rec: PodRecord, served: bool) -> bool:
    """``SchedulerUnprocessedPods``' condition test: no ``PodScheduled`` condition, or one without a
    reason."""
    if not served:
        return rec.dump_condition is None or rec.dump_condition.reason is None
    return rec.message is None and rec.reason is None
