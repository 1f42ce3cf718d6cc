"""The ``node.kubernetes.io/out-of-service`` taint (KEP-2268, non-graceful node shutdown, GA in Kubernetes
1.28): a user puts it on a node that is shut down, so that its pods go without waiting for its kubelet.

- It is a ``NoExecute`` taint (``kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:
  NoExecute``): the taint eviction controller deletes the pods that do not tolerate it, at once
  (``DefaultTolerationSeconds`` adds no toleration for it).
- PodGC's ``gcTerminating`` (``pkg/controller/podgc/gc_controller.go``, each ``gcCheckPeriod``, 20 s):
  a pod being deleted (``isPodTerminating``: its ``deletionTimestamp`` set) whose node is not Ready
  (``nodeutil.IsNodeReady``: its Ready condition not ``True``) and has a taint of that key, of any value
  and effect (``taints.TaintKeyExists``), is force-deleted: marked Failed where it is not terminal
  (``markFailedAndDeletePod``, no condition added), then deleted with no grace period.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.model.node import NO_EXECUTE, Taint

OUT_OF_SERVICE_TAINT_KEY = "node.kubernetes.io/out-of-service"
#: the taint as the Kubernetes documentation has a user put it on a node shut down
OUT_OF_SERVICE = Taint(OUT_OF_SERVICE_TAINT_KEY, "nodeshutdown", NO_EXECUTE)


def out_of_service(taints: Iterable[Taint]) -> bool:
    """``taints.TaintKeyExists(taints, v1.TaintNodeOutOfService)``: any value, any effect."""
    return any(t.key == OUT_OF_SERVICE_TAINT_KEY for t in taints)


def force_deleted_by_pod_gc(terminating: bool, node_ready: bool, taints: Iterable[Taint]) -> bool:
    """``gcTerminating``: whether PodGC force-deletes a pod (``terminating``: being deleted) bound to a
    node (Ready or not) with these taints."""
    return terminating and not node_ready and out_of_service(taints)
