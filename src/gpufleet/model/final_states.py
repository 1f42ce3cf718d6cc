"""What became of a pod, in the words users recognise: its *final state*, from its phase and reason.

Kubernetes ends a pod in phase ``Succeeded`` or ``Failed`` whatever took it away, so a phase count
calls a pod an HPA scaled down, the pods of a Job that Kueue suspended and a pod drained for a MIG
change "failed". The final state keeps them apart: ``Succeeded``; the ones that ended for a reason
of their own -- ``OOMKilled`` (CUDA out of memory with ``restartPolicy: Never``), ``Evicted`` (a
drain: cluster-autoscaler's scale-down, a spot reclaim, the MIG manager; or its node deleted,
PodGC's ``NodeDeleted``), ``Preempted`` (a scheduler's or Kueue's victim with nothing to create it
again), ``ScaledDown`` (a ReplicaSet, LeaderWorkerSet or RayCluster removing surplus replicas),
``Suspended`` (its Job, JobSet or training job suspended by Kueue, to run again once readmitted),
``Deleted`` (by its controller or the scenario, ``deleteAt``); ``Failed`` (a real failure: a
rejection by the kubelet such as ``OutOfnvidia.com/gpu``, or any other reason); and, for a pod
still there, ``Running`` or ``Pending``. The simulator's and a real cluster's pod records read the
same way (a real pod's reason is its ``status.reason`` or its container's termination reason).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

#: How the kubelet's ``rejectPod`` begins the status message of a pod it refused at admission (its Warning
#: event, reason the pod's, carries the message without it).
REJECTED = "Pod was rejected: "
#: the reason of a container waiting out the kubelet's back-off before it starts again (``doBackOff``'s
#: ``ErrCrashLoopBackOff``), whatever ended it: a failure, or an exit 0 under ``restartPolicy: Always``
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"

#: Every final state, in the order the reports list them.
FINAL_STATES = (
    "Pending",
    "Running",
    "Succeeded",
    "ScaledDown",
    "Suspended",
    "Preempted",
    "Evicted",
    "Deleted",
    "OOMKilled",
    "Failed",
)

#: The reasons that name a final state other than their phase's.
STATE_OF_REASON = {
    "OOMKilled": "OOMKilled",
    "Evicted": "Evicted",
    "NodeDeleted": "Evicted",
    "Preempted": "Preempted",
    "ScaledDown": "ScaledDown",
    "Suspended": "Suspended",
    "Deleted": "Deleted",
    "RecreateGroup": "Deleted",  # a LeaderWorkerSet recreating a group
}


def final_state(phase: str, reason: str | None, deleted: bool) -> str:
    """The final state of a pod in ``phase`` with ``reason``; ``deleted``: it is gone."""
    if phase == "Succeeded":
        return "Succeeded"
    state = STATE_OF_REASON.get(reason or "")
    if state is not None:
        return state
    if phase not in ("Running", "Pending"):
        return "Failed"  # deleted or not afterwards: it failed first
    return "Deleted" if deleted else phase


def count_final_states(states: Iterable[str]) -> dict[str, int]:
    """Pods per final state, in `FINAL_STATES` order, zero counts left out."""
    counts = Counter(states)
    return {state: counts[state] for state in FINAL_STATES if counts[state]}
