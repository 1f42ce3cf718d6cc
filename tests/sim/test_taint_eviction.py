"""The taint eviction controller in a run (``sim.taint_eviction``, Kubernetes v1.34.10
``pkg/controller/tainteviction/taint_eviction.go``): one deletion scheduled per pod, kept as it was when
the pod is looked at again (``processPodOnNode``, ``TimedWorkerQueue.AddWork``), and every pod whose
``nodeName`` is set looked at, whoever set it (``handlePodUpdate``)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import pods_by_name, simulated, write

#: two hand-written nodes of one zone: node1 tainted ``maintenance:NoExecute``, node2 Ready beside it (a
#: zone with a Ready node is not fully disrupted: its tainter taints node1 ``unreachable:NoExecute``)
NODES = """
apiVersion: v1
kind: Node
metadata: {name: node1}
spec:
  taints: [{key: maintenance, value: "true", effect: NoExecute}]
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: node2}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def bound_pod(name: str, tolerations: str) -> str:
    """A pod bound to node1 by ``spec.nodeName``, an hour of work."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 1h}}
spec:
  nodeName: node1
  restartPolicy: Never
  tolerations: {tolerations}
  containers:
  - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""


REBOOT_AT_0 = """
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {name: f}
spec:
  response: {reboot: 2h}
  faults:
  - {at: 0s, node: node1, kind: xid-79}
"""


def test_a_pod_bound_by_node_name_past_an_untolerated_no_execute_taint_is_rejected_and_deleted(
    tmp_path: Path,
) -> None:
    """``handlePodUpdate`` reads every pod whose ``nodeName`` is set: one bound by ``spec.nodeName`` to a
    node with a ``NoExecute`` taint it does not tolerate is rejected by the kubelet (Failed,
    ``TaintToleration``) and deleted by the taint eviction controller at once (``processPodOnNode``: not all
    taints tolerated)."""
    summary = simulated(write(tmp_path, NODES + bound_pod("p", "[]")))
    p = pods_by_name(summary)["p"]
    assert (p["phase"], p["reason"], p["bound_s"], p["finished_s"], p["deleted_s"]) == (
        "Failed",
        "TaintToleration",
        None,
        0.0,
        0.0,
    )


def test_a_second_taint_tolerated_for_less_keeps_the_deletion_scheduled_first(tmp_path: Path) -> None:
    """``processPodOnNode``: the pod, tolerating ``maintenance`` for 600 s, has its deletion scheduled at
    600 s as it is bound; node1's kubelet stops at 0, and at +50 s its zone's tainter taints it
    ``unreachable:NoExecute``, which the pod tolerates for ``DefaultTolerationSeconds``' 300 s: its least
    toleration is now 300 s, but the deletion scheduled before stays (``CreatedAt`` + 300 s is before
    now + 300 s): deleted at 600 s, not 350 s."""
    tolerations = "[{key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 600}]"
    summary = simulated(write(tmp_path, NODES + bound_pod("p", tolerations), REBOOT_AT_0))
    (fault,) = summary["faults"]["faults"]
    assert (fault["tainted_s"], fault["pods_evicted_s"]) == (50, 600)


def test_the_deletion_is_cancelled_when_the_taint_that_scheduled_it_goes_and_one_tolerated_forever_stays(
    tmp_path: Path,
) -> None:
    """``handleNodeUpdate`` with ``NoExecute`` taints left: the pod tolerates ``maintenance`` forever and
    ``unreachable`` for 60 s; tainted ``unreachable`` at +50 s, its deletion is scheduled at +110 s. The
    kubelet back at +100 s takes ``unreachable`` off (``markNodeAsReachable``), ``maintenance`` stays: the
    pod, tolerating it forever, has its deletion cancelled: never deleted (the kubelet back fails it,
    ``restartPolicy: Never``)."""
    tolerations = (
        "[{key: maintenance, operator: Exists, effect: NoExecute},"
        " {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 60}]"
    )
    fault = REBOOT_AT_0.replace("reboot: 2h", "reboot: 100s")
    summary = simulated(write(tmp_path, NODES + bound_pod("p", tolerations), fault))
    p = pods_by_name(summary)["p"]
    assert p["deleted_s"] is None and p["reason"] != "TaintManagerEviction"
