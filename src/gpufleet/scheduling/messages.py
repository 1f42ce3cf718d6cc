"""kube-scheduler's ``FailedScheduling`` message (``framework.FitError.Error``, Kubernetes 1.34).

``0/N nodes are available:`` then, if a PreFilter plugin rejected the pod, `` <its message>.``;
otherwise the histogram of every node's filter reasons, ``"<count> <reason>"`` entries
sorted as strings (so ``10 ...`` sorts before ``2 ...``) and joined with ``, ``, then ``.``;
then, if PostFilter plugins said something, a space and their messages joined with ``, ``
(DefaultPreemption's ends with its own period).
"""

from __future__ import annotations

from collections import Counter

from gpufleet.model.scheduler_records import Recorded

NO_NODE_AVAILABLE = "0/{n} nodes are available:"
#: ``ErrNoNodesAvailable`` (``schedule_one.go``): the cluster has no nodes at all; no FitError, no preemption.
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
NO_SCHEDULER = "no scheduler serves schedulerName"


def no_scheduler(scheduler_name: str) -> str:
    """What gpufleet says of a pod whose ``schedulerName`` no scheduler has (kube-scheduler says
    nothing: the pod stays Pending without a condition)."""
    return (
        f'{NO_SCHEDULER} "{scheduler_name}": no KubeSchedulerConfiguration profile has that name, '
        "so the pod stays Pending"
    )


def not_simulated(scheduler_name: str, condition: Recorded) -> str:
    """What gpufleet says of a pending pod of a dump whose ``schedulerName`` no scheduler of the run serves
    (another scheduler, one gpufleet does not run) and whose ``PodScheduled=False`` ``condition`` that
    scheduler wrote: the condition stays the dump's; cluster-autoscaler lists the pod when its reason is
    ``Unschedulable`` (``utils/kubernetes/listers.go`` ``isUnschedulable``), whatever its scheduler; whether
    that scheduler would place the pod, gpufleet cannot say."""
    reason = condition.reason or "no reason"
    if condition.unschedulable:
        autoscaler = (
            "cluster-autoscaler lists it as unschedulable at every loop (isUnschedulable) and may scale up "
            "for it when no node fits it"
        )
    else:
        autoscaler = (
            f"cluster-autoscaler does not list it as unschedulable (isUnschedulable: reason {reason}, not "
            "Unschedulable)"
        )
    return (
        f'scheduler "{scheduler_name}" is not simulated: the pod keeps its dump\'s PodScheduled=False '
        f"condition ({reason}: {condition.message}); {autoscaler}; gpufleet cannot say whether that "
        "scheduler would place the pod, on a node cluster-autoscaler adds for it or on any other"
    )


def fit_error(
    num_nodes: int, histogram: Counter[str], pre_filter_msg: str = "", post_filter_msg: str = ""
) -> str:
    msg = NO_NODE_AVAILABLE.format(n=num_nodes)
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        entries = sorted(f"{count} {reason}" for reason, count in histogram.items() if count)
        if entries:
            msg += f" {', '.join(entries)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg
