"""The ``node.kubernetes.io/out-of-service`` taint (KEP-2268; ``model.out_of_service``) in a run: a user
puts it on a node shut down (a scheduled fault's ``outOfService``, or a dumped node carrying it); the taint
eviction controller deletes the pods that do not tolerate it at once, and PodGC's ``gcTerminating``
(Kubernetes v1.34.10 ``pkg/controller/podgc/gc_controller.go``, every 20 s) force-deletes the pods being
deleted on it while it is NotReady (``sim.pod_gc_terminating``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import pods_by_name, simulated, write
from tests.sim.serve_scenario import labelled_pool, serve

from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.report.fault_section import fault_section

FAULT_AT = 3600


def faults(fault: str) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: 30m}}
  faults:
  - {fault}
"""


def test_a_node_down_tainted_out_of_service_has_its_pods_deleted_and_collected_at_once(
    tmp_path: Path,
) -> None:
    """h100-0's kubelet stops at 1h (``xid-79``, back after 30 min); NotReady and tainted ``unreachable`` at
    +50 s; a user taints it out-of-service at +120 s: its serving pod, which tolerates ``unreachable`` for
    300 s but not the out-of-service taint, is deleted at once (``processPodOnNode``) and, being deleted on
    a NotReady node so tainted, force-deleted by PodGC's pass at +120 s (a multiple of 20 s): Failed and
    gone then, not Terminating until the kubelet is back at +1800 s. Its replacement runs on h100-1."""
    texts = [
        labelled_pool("h100", 2) + "---" + serve("3h"),
        faults("{at: 1h, node: h100-0, kind: xid-79, outOfService: 2m}"),
    ]
    summary = simulated(write(tmp_path, *texts))
    (fault,) = summary["faults"]["faults"]
    assert (
        fault["tainted_s"],
        fault["out_of_service_s"],
        fault["pods_evicted_s"],
        fault["pods_collected_s"],
    ) == (
        50,
        120,
        120,
        120,
    )
    pods = pods_by_name(summary)
    first = pods["serve-0"]
    assert (first["phase"], first["reason"], first["finished_s"], first["deleted_s"]) == (
        "Failed",
        "TaintManagerEviction",
        FAULT_AT + 120,
        FAULT_AT + 120,
    )
    assert [p["node"] for name, p in pods.items() if name != "serve-0"] == ["h100-1"]


def test_without_the_taint_the_pod_stays_terminating_until_the_kubelet_is_back(tmp_path: Path) -> None:
    """The same fault without ``outOfService``: deleted at +350 s (300 s of toleration), the pod stays
    Terminating until the kubelet confirms its end at +1800 s (``gcTerminating`` needs the taint)."""
    texts = [labelled_pool("h100", 2) + "---" + serve("3h"), faults("{at: 1h, node: h100-0, kind: xid-79}")]
    summary = simulated(write(tmp_path, *texts))
    (fault,) = summary["faults"]["faults"]
    assert (fault["out_of_service_s"], fault["pods_evicted_s"], fault["pods_collected_s"]) == (
        None,
        350,
        None,
    )
    assert pods_by_name(summary)["serve-0"]["deleted_s"] == FAULT_AT + 1800


@pytest.mark.parametrize(
    "kind", ["xid-gpu-reset", "xid-node-replace", "process-hang", "xid-48"], ids=lambda k: f"kind {k}"
)
def test_out_of_service_on_a_fault_that_leaves_the_node_up_is_an_input_error(
    tmp_path: Path, kind: str
) -> None:
    """Only a fault that takes the node down (response ``reboot`` or ``lost``) may have a user taint the node
    out-of-service: on another, one line naming the field."""
    texts = [labelled_pool("h100", 1), faults(f"{{at: 1h, node: h100-0, kind: {kind}, outOfService: 1m}}")]
    with pytest.raises(ScenarioError) as err:
        load_scenario(write(tmp_path, *texts))
    (line,) = str(err.value).splitlines()
    assert line.endswith(
        'spec.faults[0].outOfService: Invalid value: "1m": outOfService needs a fault that takes the node '
        f"down (response reboot or lost); {kind} has response "
        + {"xid-node-replace": "replace", "process-hang": "hang"}.get(kind, "gpu")
    )


DUMP = """
apiVersion: v1
kind: Node
metadata: {name: node1}
spec:
  taints:
  - {key: node.kubernetes.io/out-of-service, value: nodeshutdown, effect: NoExecute}
  - {key: node.kubernetes.io/not-ready, effect: NoSchedule}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
  conditions: [{type: Ready, status: "False"}]
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {gpufleet.io/duration: 1h}
spec:
  nodeName: node1
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
status: {phase: Running}
"""


def test_a_dumped_not_ready_node_tainted_out_of_service_has_its_running_pod_force_deleted(
    tmp_path: Path,
) -> None:
    """A dumped node, Ready ``False`` and tainted out-of-service, with a pod running there: the taint
    eviction controller deletes it at once (it does not tolerate the taint), and PodGC's pass at time 0
    force-deletes it (not after its 30 s grace period): Failed, reason ``Deleted`` (PodGC sets no reason, and
    this pod's kubelet, up in gpufleet, had not yet ended it with the eviction's)."""
    summary = simulated(write(tmp_path, DUMP))
    p = pods_by_name(summary)["p"]
    assert (p["phase"], p["reason"], p["finished_s"], p["deleted_s"]) == (
        "Failed",
        "Deleted",
        0,
        0,
    )


def test_the_report_says_when_the_node_was_tainted_out_of_service(tmp_path: Path) -> None:
    """The faults section's "Kubernetes after the fault" column names the out-of-service taint."""
    texts = [
        labelled_pool("h100", 2) + "---" + serve("3h"),
        faults("{at: 1h, node: h100-0, kind: xid-79, outOfService: 2m}"),
    ]
    html = fault_section(simulated(write(tmp_path, *texts)))
    assert "NoExecute taint 50 s · out-of-service 2m · pods deleted 2m · PodGC 2m" in html
