"""A dump's pending pod that an earlier preemption nominated to a node (``status.nominatedNodeName``), of a
scheduler the run simulates: kube-scheduler takes the nomination into its nominator as the pod enters the
active queue (``moveToActiveQ``'s ``AddNominatedPod``) and ``evaluateNominatedNode`` tries that node
first, so the pod goes there when it fits, unscored."""

from __future__ import annotations

from pathlib import Path

from conftest import run_simulation, write

T0 = "2026-12-06T05:00:00Z"


def node(name: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata:
  name: {name}
  creationTimestamp: "2026-12-01T00:00:00Z"
status:
  capacity: {{cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions:
  - {{type: Ready, status: "True", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-01T00:01:00Z"}}
"""


RUNNING = """
apiVersion: v1
kind: Pod
metadata: {name: resident, namespace: default, creationTimestamp: "2026-12-06T04:00:00Z"}
spec:
  nodeName: dump-a
  containers:
  - name: main
    image: main:1
    resources: {requests: {cpu: "32", memory: 256Gi}, limits: {nvidia.com/gpu: 4}}
status: {phase: Running}
"""


def pending(nominated: str | None) -> str:
    status = "  phase: Pending" + (f"\n  nominatedNodeName: {nominated}" if nominated else "")
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  namespace: default
  creationTimestamp: "2026-12-06T04:58:00Z"
  annotations: {{gpufleet.io/duration: 10m}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: main:1
    resources: {{requests: {{cpu: "8", memory: 64Gi}}, limits: {{nvidia.com/gpu: 4}}}}
status:
{status}
"""


SIMULATION = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 30m}
"""


def bound_node(tmp_path: Path, nominated: str | None) -> str | None:
    paths = write(tmp_path, SIMULATION, node("dump-a"), node("dump-b"), RUNNING, pending(nominated))
    sim = run_simulation(paths)
    return sim.records["default/urgent"].node


def test_a_dump_pod_nominated_to_a_node_goes_there_first(tmp_path: Path) -> None:
    """``evaluateNominatedNode``: nominated to the half-full dump-a, where it fits, the pod is placed there,
    though LeastAllocated scores the empty dump-b higher."""
    assert bound_node(tmp_path, "dump-a") == "dump-a"


def test_a_dump_pod_without_a_nomination_is_scored(tmp_path: Path) -> None:
    """The control: without a nomination the pod goes to the emptier dump-b."""
    assert bound_node(tmp_path, None) == "dump-b"


def test_a_dump_pod_nominated_to_a_node_that_is_gone_is_scored(tmp_path: Path) -> None:
    """``evaluateNominatedNode`` finds no such node: the pod is scheduled over every node, as the control."""
    assert bound_node(tmp_path, "gone") == "dump-b"
