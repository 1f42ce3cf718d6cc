"""NotReady nodes, and pods' creation, of a cluster dump, on a run's clock.

A Node read from a dump carries its Ready condition's status and wall-clock times (``Node.ready``,
``ready_since_unix``, ``created_unix``, ``observed_unix``). A run (a simulation, ``explain``) starts at the
dump's time, its time 0: the Simulation's ``spec.startTime`` where it sets one, else the latest time any
Node of the dump shows (the kubelet posts its conditions' ``lastHeartbeatTime`` at least every
``nodeStatusReportFrequency``, 5 minutes, so that is at most that long before the dump was taken). Each
NotReady node is then NotReady from time 0, since its ``lastTransitionTime`` less time 0 and registered at
its ``creationTimestamp`` less time 0 (both negative: before the run). A NotReady node without a
``creationTimestamp`` (a hand-written manifest) counts as registered long ago, as cluster-autoscaler reads a
zero ``creationTimestamp``: ``Unready`` at once (``REGISTERED_LONG_AGO_S``), not ``NotStarted``; one
without ``lastTransitionTime`` is NotReady since time 0.

A pod of the dump is created on the same clock (``created_on_clock``): at its ``creationTimestamp`` less
time 0, negative when it is older than the run: what its age counts from (cluster-autoscaler's
``allPodsAreNew``, ``filterOutYoungPods`` and blocking ``kube-system`` pod timeout, the ReplicaSet
controller's ``ActivePodsWithRanks``, ``describe node``'s Age). A pod without one, or of a dump with no
time 0, is created when it arrives in the run (time 0 for a dump's pods); a ``creationTimestamp`` after
time 0 (a pod newer than the latest time the dump's Nodes show) counts as created at its arrival, as a
NotReady node's times after time 0 count as time 0.

The node lifecycle controller taints a node whose Ready condition is ``False`` with
``node.kubernetes.io/not-ready`` and one whose Ready condition is ``Unknown`` with
``node.kubernetes.io/unreachable`` (``nodeConditionToTaintKeyStatusMap``, ``doNoScheduleTaintingPass``);
kube-scheduler reads those taints, never the condition (TaintToleration). Its ``NoExecute`` tainter
(``doNoExecuteTaintingPass``) takes the same key for each status with the ``NoExecute`` effect
(``NotReadyTaintTemplate``, ``UnreachableTaintTemplate``), taking the other status's off
(``SwapNodeControllerTaint``): ``no_execute_taints``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpufleet.model.node import NO_EXECUTE, Node, Taint

#: The Ready statuses of a NotReady node: its kubelet says so, or has not posted its status in time
READY_FALSE, READY_UNKNOWN = "False", "Unknown"
NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT_KEY = "node.kubernetes.io/unreachable"
#: The taint the node lifecycle controller puts on a node for its Ready condition's status.
LIFECYCLE_TAINT_KEYS = {READY_FALSE: NOT_READY_TAINT_KEY, READY_UNKNOWN: UNREACHABLE_TAINT_KEY}
#: When a NotReady node without a ``creationTimestamp`` registered: a day before time 0, long past
#: cluster-autoscaler's ``MaxNodeStartupTime`` (15 minutes)
REGISTERED_LONG_AGO_S = -86400.0


def no_execute_taints(ready: str) -> tuple[Taint, Taint]:
    """``doNoExecuteTaintingPass`` for a node whose Ready condition is ``ready`` (``False`` or ``Unknown``):
    the ``NoExecute`` taint it puts on, and the one it takes off (``SwapNodeControllerTaint``)."""
    other = READY_UNKNOWN if ready == READY_FALSE else READY_FALSE
    return Taint(LIFECYCLE_TAINT_KEYS[ready], effect=NO_EXECUTE), Taint(
        LIFECYCLE_TAINT_KEYS[other], effect=NO_EXECUTE
    )


@dataclass(frozen=True)
class NotReadyNode:
    """A node NotReady when the run starts: its Ready condition's status, since when and when it
    registered, in seconds of the run's clock (negative: before time 0)."""

    name: str
    status: str
    since_s: float
    registered_s: float


def clock_zero(nodes: Iterable[Node], start_time_s: float | None = None) -> float | None:
    """The wall-clock time (Unix seconds) of the run's time 0: ``start_time_s`` (``spec.startTime``)
    when given, else the latest time the nodes' objects show; None when neither says."""
    if start_time_s is not None:
        return start_time_s
    seen = [n.observed_unix for n in nodes if n.observed_unix is not None]
    return max(seen) if seen else None


def not_ready_at_start(nodes: Iterable[Node], start_time_s: float | None = None) -> list[NotReadyNode]:
    """The nodes whose Ready condition is not ``True``, in the order given, on the run's clock."""
    nodes = list(nodes)
    zero = clock_zero(nodes, start_time_s)
    out = []
    for n in nodes:
        if n.ready == "True":
            continue
        since = 0.0 if n.ready_since_unix is None or zero is None else min(n.ready_since_unix - zero, 0.0)
        registered = (
            REGISTERED_LONG_AGO_S
            if n.created_unix is None or zero is None
            else min(n.created_unix - zero, 0.0)
        )
        out.append(NotReadyNode(n.name, n.ready, since, registered))
    return out


def created_on_clock(created_unix: float | None, zero: float | None, arrival_s: float) -> float:
    """When a dump's pod that arrives in the run at ``arrival_s`` was created, on the run's clock:
    its ``creationTimestamp`` (``created_unix``) less time 0 (``zero``: ``clock_zero``), no later than its
    arrival; its arrival without either."""
    if created_unix is None or zero is None:
        return arrival_s
    return min(created_unix - zero, arrival_s)
