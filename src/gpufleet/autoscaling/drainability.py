"""What draining a node does with each of its pods: cluster-autoscaler 1.34's drainability rules
(``simulator/drainability/rules``, ``rules.Default`` with the ``NodeDeleteOptions`` of the flags:
``DeleteOptions``), in upstream's order, the first rule that decides winning:

1. a mirror (static) pod (annotation ``kubernetes.io/config.mirror``) stays: not moved, not blocking;
   so does a pod terminating for more than its ``terminationGracePeriodSeconds`` and 30 s
   (``longterminating``, ``drain.IsPodLongTerminating``: a pod on a node whose kubelet is down, which
   nobody confirms gone; ``long_terminating``);
2. a DaemonSet pod (owned by a DaemonSet, or annotated
   ``cluster-autoscaler.kubernetes.io/daemonset-pod: "true"``) goes with the node, not moved;
3. ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"``: moved, no later rule is asked (not
   even a PodDisruptionBudget);
4. a pod with no controller blocks (``NotReplicated``); so does, under
   ``--skip-nodes-with-custom-controller-pods`` (true by default), a pod whose controller is not a
   ReplicationController, Job, ReplicaSet or StatefulSet (``replicated.Rule``); gpufleet's Deployment pods,
   which it makes owned by their Deployment, count as their ReplicaSet's;
5. under ``--skip-nodes-with-system-pods`` (true by default), a ``kube-system`` pod that no
   PodDisruptionBudget selects blocks (``UnmovableKubeSystemPod``) until
   ``--blocking-system-pod-distruption-timeout`` (1 h) after it was created (its ``creationTimestamp``, a
   dump's pod's on the run's clock; gpufleet: its placement where the cluster does not say);
6. ``safe-to-evict: "false"`` blocks (``NotSafeToEvictAnnotation``);
7. a PodDisruptionBudget selecting the pod with no disruption left blocks (``NotEnoughPdb``).

Not modelled: terminal pods (gpufleet's pods leave their node when they end),
local storage (``--skip-nodes-with-local-storage``: gpufleet's pods have no volumes), and the
``replicacount`` rule that ``--skip-nodes-with-custom-controller-pods`` turns on (a controller that is
gone blocks, ``ControllerNotFound``; gpufleet's controllers outlive their pods; and ``--min-replica-count``,
0 by default, never blocks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR = "kubernetes.io/config.mirror"
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet", "Deployment"})
SYSTEM_NAMESPACE = "kube-system"
BLOCKING_SYSTEM_POD_TIMEOUT_S = 3600.0
#: ``drain.PodLongTerminatingExtraThreshold``
LONG_TERMINATING_EXTRA_S = 30.0


@dataclass(frozen=True)
class DeleteOptions:
    """``options.NodeDeleteOptions``: which blocking rules ``rules.Default`` keeps (each true by default,
    as its flag)."""

    skip_nodes_with_system_pods: bool = True  # --skip-nodes-with-system-pods: the system rule
    #: --skip-nodes-with-custom-controller-pods: only the replicated kinds' controllers make a pod replicated
    skip_nodes_with_custom_controller_pods: bool = True


DEFAULT_DELETE_OPTIONS = DeleteOptions()


@dataclass(frozen=True)
class Drain:
    """A pod's fate in a drain: moved elsewhere, or not (it stays, or goes with the node); or the
    reason it blocks the drain."""

    moved: bool
    blocker: str | None = None


def daemon_set_pod(pod: Pod) -> bool:
    """``pod.IsDaemonSetPod``: owned by a DaemonSet, or annotated as a DaemonSet's pod."""
    return (pod.owner is not None and pod.owner.kind == "DaemonSet") or pod.annotations.get(
        DAEMONSET_POD
    ) == "true"


def long_terminating(pod: Pod, deleted_s: float | None, now: float) -> bool:
    """``IsPodLongTerminating``: deleted (at ``deleted_s``) more than its grace period and 30 s ago."""
    return deleted_s is not None and deleted_s + pod.termination_grace_s + LONG_TERMINATING_EXTRA_S < now


def moved(pod: Pod) -> bool:
    """Whether a drain moves the pod: all but mirror and DaemonSet pods (rules 1 and 2)."""
    return not daemon_set_pod(pod) and MIRROR not in pod.annotations


def drainable(
    pod: Pod,
    budgets: Sequence[DisruptionBudget],
    allowed: Mapping[str, int],
    age_s: float,
    options: DeleteOptions = DEFAULT_DELETE_OPTIONS,
) -> Drain:
    """``Rules.Drainable`` then ``GetPodsToMove``; ``age_s``: how long ago the pod was created."""
    if not moved(pod):
        return Drain(False)
    annotation = pod.annotations.get(SAFE_TO_EVICT)
    if annotation == "true":
        return Drain(True)
    custom = pod.owner is not None and pod.owner.kind not in REPLICATED_KINDS
    if pod.owner is None or (custom and options.skip_nodes_with_custom_controller_pods):
        owner = f"owned by {pod.owner.kind} {pod.owner.name}" if pod.owner else "it has no controller"
        return Drain(True, f"pod {pod.key} is not replicated ({owner})")
    matching = [b for b in budgets if b.covers(pod)]
    system = options.skip_nodes_with_system_pods and pod.namespace == SYSTEM_NAMESPACE
    if system and not matching and age_s <= BLOCKING_SYSTEM_POD_TIMEOUT_S:
        return Drain(True, f"pod {pod.key} is a kube-system pod that no PodDisruptionBudget selects")
    if annotation == "false":
        return Drain(True, f'pod {pod.key} is annotated {SAFE_TO_EVICT}: "false"')
    for budget in matching:
        if allowed.get(f"{budget.namespace}/{budget.name}", 0) < 1:
            return Drain(
                True, f"pod {pod.key} is protected by PodDisruptionBudget {budget.namespace}/{budget.name}"
            )
    return Drain(True)
