"""A cluster dump's node whose Ready condition is ``Unknown``: its kubelet posts nothing (the node lifecycle
controller's ``tryUpdateNodeHealth`` sets ``Unknown`` when the kubelet stopped posting its status and renewing
its Lease), so the API server hears nothing of its pods' containers: a pod the dump shows Running stays
Running as last posted (its Ready condition the controller's ``MarkPodsNotReady``), never completes, restarts
or counts as working; a pod bound there and not started stays Pending; a pod deleted there stays
Terminating (nobody confirms its containers gone). A node whose Ready is ``False`` has a kubelet that
posts, and its pods run on (``tests/sim/test_out_of_service.py``)."""

from __future__ import annotations

from pathlib import Path

from conftest import pods_by_name, simulated, write

UNKNOWN_NODE = """
apiVersion: v1
kind: Node
metadata: {name: node1}
spec:
  taints:
  - {key: node.kubernetes.io/unreachable, effect: NoSchedule}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
  conditions: [{type: Ready, status: "Unknown"}]
"""
READY_NODE = """
apiVersion: v1
kind: Node
metadata: {name: node2}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
  conditions: [{type: Ready, status: "True"}]
"""


def pod(name: str, phase: str, restart_policy: str, tolerations: str = "") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 60s}}
spec:
  nodeName: node1
  restartPolicy: {restart_policy}{tolerations}
  containers:
  - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
status: {{phase: {phase}}}
"""


def fields(record: dict[str, object]) -> tuple[object, ...]:
    keys = ("phase", "reason", "running_s", "finished_s", "working", "restarts")
    return tuple(record[k] for k in keys)


def test_a_running_pod_on_a_node_whose_kubelet_posts_nothing_neither_ends_nor_restarts(
    tmp_path: Path,
) -> None:
    """The only node is ``Unknown``, so the zone is fully disrupted and nothing is evicted
    (``handleDisruption``): a pod with ``restartPolicy: Always`` and one with ``Never``, each running a 60 s
    container by the dump, are still Running at the end of the run, never restarted, never working (before,
    the first restarted every 60 s for 30 days and the second succeeded at 60 s)."""
    text = "---".join([UNKNOWN_NODE, pod("always", "Running", "Always"), pod("never", "Running", "Never")])
    pods = pods_by_name(simulated(write(tmp_path, text)))
    assert fields(pods["always"]) == fields(pods["never"]) == ("Running", None, 0, None, False, 0)


def test_pods_evicted_from_a_node_whose_kubelet_posts_nothing_stay_as_they_were(tmp_path: Path) -> None:
    """With a Ready node beside it the zone is normal (one NotReady node of two: ``ComputeZoneState``), so the
    ``unreachable`` NoExecute taint goes on at the first pass: the Running pod, which does not tolerate it,
    is deleted at once, and the Pending one bound there, which tolerates it for 600 s, then
    (``TaintManagerEviction``); both stay as they were, Running and Pending, not finished: no kubelet
    confirms them gone, and none starts the Pending one."""
    toleration = (
        "\n  tolerations:\n  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute,"
        " tolerationSeconds: 600}"
    )
    text = "---".join(
        [
            UNKNOWN_NODE,
            READY_NODE,
            pod("running", "Running", "Never"),
            pod("bound", "Pending", "Never", toleration),
        ]
    )
    pods = pods_by_name(simulated(write(tmp_path, text)))
    assert fields(pods["running"]) == ("Running", "TaintManagerEviction", 0, None, False, 0)
    assert fields(pods["bound"]) == ("Pending", "TaintManagerEviction", None, None, False, 0)
    assert pods["bound"]["node"] == "node1"
