"""What ``explain`` says of a cluster dump's NotReady nodes for a pod it cannot place.

- The NotReady nodes that reject the pod by the taint the node lifecycle controller puts on them
  (``node.kubernetes.io/not-ready`` for Ready ``False``, ``node.kubernetes.io/unreachable`` for
  ``Unknown``; one of a dump read without it gets it, ``kube.nodes``), named with their Ready condition
  and since when: kube-scheduler counts them among ``had untolerated taint``, and they take pods again
  only once their kubelet reports Ready. A node whose Ready condition is ``True`` but which still has
  the taint (the dump taken between the kubelet's report and the controller's next pass,
  ``doNoScheduleTaintingPass``) is named apart, as Ready and not yet usable.
- Whether cluster-autoscaler, where it runs on that cluster, is halted at the dump's time
  (``IsClusterHealthy``, ``autoscaling.cluster_state``): more nodes ``Unready`` (not Ready, registered
  ``MaxNodeStartupTime`` or more before the dump's time) than ``--ok-total-unready-count`` and than
  ``--max-total-unready-percentage`` of the registered nodes (the Simulation's ``spec.autoscaler`` flags,
  else upstream's defaults 3 and 45 %); then it adds no node for the pod, as ``describe pod`` says in a
  simulation (``ClusterAutoscalerLoop.pod_hints``). The dump's time is ``model.node_readiness``'s time 0.
"""

from __future__ import annotations

from datetime import UTC, datetime

from gpufleet.autoscaling.cluster_state import cluster_healthy, halted_hint, health_condition, readiness
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, tolerated
from gpufleet.model.node_readiness import LIFECYCLE_TAINT_KEYS, not_ready_at_start
from gpufleet.model.pod import Pod
from gpufleet.model.scenario import Scenario

_LIFECYCLE_KEYS = frozenset(LIFECYCLE_TAINT_KEYS.values())


class ReadinessHints:
    """The hints of one scenario's NotReady nodes for the pods ``explain`` cannot place."""

    def __init__(self, scenario: Scenario) -> None:
        settings = scenario.simulation
        start = settings.start_time_s if settings.start_time_set else None
        #: the nodes with a not-ready or unreachable taint, in name order (their taints never change here)
        self._tainted = sorted((n for n in scenario.nodes if _lifecycle_keys(n)), key=lambda n: n.name)
        found = not_ready_at_start(scenario.nodes, start)
        counted = readiness((n.name for n in found), {n.name: n.registered_s for n in found}, 0.0)
        ok = settings.autoscaler.ok_total_unready_count
        percentage = settings.autoscaler.max_total_unready_percentage
        registered = len(scenario.nodes)
        self.halted: str | None = None
        if not cluster_healthy(counted, registered, ok, percentage):
            health = health_condition(False, counted, registered)
            self.halted = halted_hint(health, ok, percentage, "is halted at the dump's time, where it runs")

    def for_pod(self, pod: Pod) -> list[str]:
        """The hints for ``pod``, not placed."""
        hints = []
        rejecting = [n for n in self._tainted if _untolerated(pod, n)]
        not_ready = [n for n in rejecting if n.ready != "True"]
        if not_ready:
            named = ", ".join(_describe(n) for n in not_ready)
            hints.append(
                f"NotReady nodes it cannot use: {named}: the node lifecycle controller's taint keeps "
                "kube-scheduler off them until their kubelet reports Ready"
            )
        ready = [n for n in rejecting if n.ready == "True"]
        if ready:
            named = ", ".join(_describe(n) for n in ready)
            hints.append(
                f"Ready nodes it cannot use yet: {named}: their kubelet reports Ready, and the node "
                "lifecycle controller takes the taint off at its next pass over the node"
            )
        if self.halted is not None:
            hints.append(self.halted)
        return hints


def _untolerated(pod: Pod, node: Node) -> list[str]:
    """The node's not-ready / unreachable taints the pod does not tolerate (those the filter reads)."""
    return [
        t.key
        for t in node.taints
        if t.key in _LIFECYCLE_KEYS
        and t.effect in (NO_SCHEDULE, NO_EXECUTE)
        and not tolerated(t, pod.tolerations)
    ]


def _describe(node: Node) -> str:
    since = (
        ""
        if node.ready_since_unix is None
        else f" since {datetime.fromtimestamp(node.ready_since_unix, UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"
    )
    return f"{node.name} (Ready={node.ready}{since}; {', '.join(_lifecycle_keys(node))})"


def _lifecycle_keys(node: Node) -> list[str]:
    """The keys of the node's not-ready and unreachable taints, each once, in order."""
    return sorted({t.key for t in node.taints if t.key in _LIFECYCLE_KEYS})
