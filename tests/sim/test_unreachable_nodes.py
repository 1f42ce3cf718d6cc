"""A node whose kubelet stops (a ``lost`` or ``reboot`` fault), as Kubernetes 1.34 learns of it
(``sim.unreachable_nodes``): NotReady after ``--node-monitor-grace-period`` (50 s), tainted
``node.kubernetes.io/unreachable``, its pods deleted by the taint eviction controller after what they tolerate
(``DefaultTolerationSeconds``: 300 s), Terminating until the kubelet is back or PodGC deletes them once the
Node is gone; the controllers replace them as they see them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import pods_by_name, simulated, write
from tests.sim.serve_scenario import serve

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.node_lifecycle_zones import zone_key
from gpufleet.model.pod import Pod
from gpufleet.model.taint_eviction import toleration_s
from gpufleet.sim.invariants import InvariantChecks
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.unreachable_nodes import UNREACHABLE_NO_EXECUTE

FAULT_AT = 3600.0


def pool(replicas: int = 2) -> str:
    """A fixed pool (no ``max``) of 8-GPU nodes, launched through the cloud provider."""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: {replicas}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
  provisioning: {{boot: 5m}}
"""


def deployment(tolerations: str = "") -> str:
    """One 8-GPU replica (on h100-0, the first node), ``tolerations`` its own."""
    return serve("3h", "\n      restartPolicy: Always" + tolerations)


def job(replacement: str) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 4h}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  completions: 1
  backoffLimit: 10
  podReplacementPolicy: {replacement}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: 8}}
"""


def faults(kind: str, reboot: str = "10m") -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: {reboot}}}
  faults:
  - {{at: 1h, node: h100-0, kind: {kind}}}
"""


UNREACHABLE_30S = """
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}"""
UNREACHABLE_FOREVER = """
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}"""


def run(tmp_path: Path, *texts: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    summary = simulated(write(tmp_path, pool(), *texts))
    return summary, pods_by_name(summary)


def only_fault(summary: dict[str, Any]) -> dict[str, Any]:
    (fault,) = summary["faults"]["faults"]
    return fault


def test_a_lost_node_s_pod_is_replaced_once_the_cloud_controller_deleted_the_node_and_podgc_the_pod(
    tmp_path: Path,
) -> None:
    """``lost`` at 1h: the pod's container dies at once, but nothing tells the API server. The node lifecycle
    controller's ``monitorNodeHealth`` sets Ready Unknown after the 50 s grace period (3650 s) and taints it
    unreachable; the cloud node lifecycle controller (``MonitorNodes``, every 5 s) finds the instance gone at
    its next pass and deletes the Node (3655 s); PodGC's ``gcOrphaned`` (every 20 s) sees the pod orphaned at
    3660 s and, after its 40 s ``quarantineTime``, marks it Failed (``DeletionByPodGC``) and deletes it at
    3700 s = 1h + 50 + 5 + 5 + 40: the ReplicaSet replaces it then (not at the fault), on h100-1. The taint
    eviction controller's 300 s never came: the pod was gone first."""
    summary, pods = run(tmp_path, deployment(), faults("node-loss"))
    first, again = pods["serve-0"], pods["serve-1"]
    assert (first["phase"], first["reason"], first["finished_s"]) == ("Failed", "NodeDeleted", FAULT_AT + 100)
    assert (again["created_s"], again["node"], again["bound_s"]) == (FAULT_AT + 100, "h100-1", FAULT_AT + 100)
    fault = only_fault(summary)
    assert fault["pods_hit"] == ["default/serve-0"]
    times = (
        "not_ready_s",
        "tainted_s",
        "pods_evicted_s",
        "node_deleted_s",
        "pods_collected_s",
        "pods_ended_s",
    )
    assert [fault[k] for k in times] == [50, 50, None, 55, 100, 100]
    assert {n["name"]: n["deleted_s"] for n in summary["nodes"]}["h100-0"] == FAULT_AT + 55


def test_a_rebooting_node_s_pod_is_evicted_after_the_default_300_s_and_replaced_at_once(
    tmp_path: Path,
) -> None:
    """``reboot`` of 600 s: NotReady at +50 s, tainted ``unreachable:NoExecute``; the pod has the 300 s
    toleration ``DefaultTolerationSeconds`` gives every pod, so the taint eviction controller
    (``processPodOnNode``) deletes it at +350 s; the ReplicaSet replaces it then (``FilterActivePods`` leaves
    out a pod being deleted), on h100-1, while the old one stays Terminating, its requests still counted on
    h100-0, until the kubelet is back at +600 s and confirms it gone."""
    summary, pods = run(tmp_path, deployment(), faults("xid-79", "10m"))
    first, again = pods["serve-0"], pods["serve-1"]
    assert (first["reason"], first["finished_s"]) == ("TaintManagerEviction", FAULT_AT + 600)
    assert (again["created_s"], again["node"], again["bound_s"]) == (FAULT_AT + 350, "h100-1", FAULT_AT + 350)
    fault = only_fault(summary)
    assert (fault["not_ready_s"], fault["pods_evicted_s"], fault["pods_ended_s"]) == (50, 350, 600)
    assert fault["node_deleted_s"] is None and fault["time_to_recovery_s"] == 600


def test_a_pod_tolerating_unreachable_for_30_s_is_evicted_30_s_after_the_taint(tmp_path: Path) -> None:
    """The pod's own ``tolerationSeconds: 30`` for ``unreachable`` (``DefaultTolerationSeconds`` adds none
    where the pod has one): ``getMinTolerationTime`` gives 30 s, so the eviction is at +50 + 30 s."""
    _, pods = run(tmp_path, deployment(UNREACHABLE_30S), faults("xid-79", "10m"))
    assert pods["serve-0"]["reason"] == "TaintManagerEviction"
    assert pods["serve-1"]["created_s"] == FAULT_AT + 80


def test_a_pod_tolerating_unreachable_forever_stays_and_restarts_when_the_kubelet_is_back(
    tmp_path: Path,
) -> None:
    """A toleration without ``tolerationSeconds`` tolerates the taint forever (``getMinTolerationTime``: -1):
    the pod is never deleted; the kubelet, back after an hour, finds its container gone and starts it again
    (``computePodActions``: a new sandbox; ``restartPolicy: Always``): the same pod, one restart."""
    _, pods = run(tmp_path, deployment(UNREACHABLE_FOREVER), faults("xid-79", "1h"))
    assert list(pods) == ["serve-0"]
    pod = pods["serve-0"]
    assert (pod["phase"], pod["node"], pod["deleted_s"], pod["restarts"]) == ("Running", "h100-0", None, 1)


def test_a_restart_policy_never_pod_fails_when_the_kubelet_comes_back_before_any_eviction(
    tmp_path: Path,
) -> None:
    """A reboot of 2 min, before the taint evicted anything: the kubelet finds the container gone; under
    ``restartPolicy: Never`` the pod fails (its container's state ``ContainerStatusUnknown``, exit code 137)
    and its Job makes the next one after its 10 s back-off."""
    _, pods = run(tmp_path, job("Failed"), faults("xid-79", "2m"))
    first, again = pods["train-0"], pods["train-0-r1"]
    assert (first["phase"], first["reason"], first["finished_s"]) == ("Failed", "Error", FAULT_AT + 120)
    assert again["created_s"] == FAULT_AT + 120 + 10


def test_a_job_replacing_only_failed_pods_waits_for_the_pod_deleted_on_a_dead_node_to_end(
    tmp_path: Path,
) -> None:
    """``podReplacementPolicy: Failed``: the pod deleted by the taint eviction controller at +350 s is
    Terminating, not Failed, until the kubelet is back at +600 s: the Job makes the next one only then (after
    its first back-off, 10 s); under ``TerminatingOrFailed`` it makes it as the deletion begins."""
    (tmp_path / "failed").mkdir()
    (tmp_path / "terminating").mkdir()
    _, failed_only = run(tmp_path / "failed", job("Failed"), faults("xid-79", "10m"))
    _, terminating = run(tmp_path / "terminating", job("TerminatingOrFailed"), faults("xid-79", "10m"))
    assert failed_only["train-0"]["reason"] == terminating["train-0"]["reason"] == "TaintManagerEviction"
    assert failed_only["train-0-r1"]["created_s"] == FAULT_AT + 600 + 10
    assert terminating["train-0-r1"]["created_s"] == FAULT_AT + 350 + 10


def test_a_job_replacing_only_failed_pods_replaces_a_lost_node_s_pod_once_podgc_failed_it(
    tmp_path: Path,
) -> None:
    """``lost``: PodGC marks the orphaned pod Failed at +100 s (``markFailedAndDeletePodWithCondition``):
    a Job under ``podReplacementPolicy: Failed`` makes the next one then, after its 10 s back-off."""
    _, pods = run(tmp_path, job("Failed"), faults("node-loss"))
    assert (pods["train-0"]["reason"], pods["train-0"]["finished_s"]) == ("NodeDeleted", FAULT_AT + 100)
    assert pods["train-0-r1"]["created_s"] == FAULT_AT + 100 + 10


def test_no_pod_is_evicted_when_no_node_of_any_zone_is_ready(tmp_path: Path) -> None:
    """``handleDisruption``: with every zone fully disrupted (the only node down) the controller stops all
    evictions (no NoExecute taint): the pod stays through a 1 h reboot and restarts in place."""
    summary = simulated(write(tmp_path, pool(replicas=1), deployment(), faults("xid-79", "1h")))
    pods = pods_by_name(summary)
    assert list(pods) == ["serve-0"] and pods["serve-0"]["restarts"] == 1
    fault = only_fault(summary)
    assert fault["not_ready_s"] == 50 and fault["tainted_s"] is None and fault["pods_evicted_s"] is None


def test_toleration_seconds_follow_the_taint_eviction_controller_and_default_toleration_seconds() -> None:
    """``getMinTolerationTime`` over the first toleration matching each NoExecute taint, after
    ``DefaultTolerationSeconds`` added its 300 s ones where the pod has none for the key."""
    taints = (UNREACHABLE_NO_EXECUTE,)
    exists_all = Toleration(operator="Exists")
    own = Toleration("node.kubernetes.io/unreachable", "Exists", effect="NoExecute", toleration_seconds=30)
    negative = Toleration(
        "node.kubernetes.io/unreachable", "Exists", effect="NoExecute", toleration_seconds=-5
    )
    assert toleration_s(Pod("p"), taints) == 300
    assert toleration_s(Pod("p", tolerations=(own,)), taints) == 30
    assert toleration_s(Pod("p", tolerations=(negative,)), taints) == 0
    assert toleration_s(Pod("p", tolerations=(exists_all,)), taints) is None
    other = Taint("dedicated", "gpu", "NoExecute")
    assert toleration_s(Pod("p"), (*taints, other)) == 0  # a NoExecute taint it does not tolerate


def test_zones_are_the_region_and_zone_labels() -> None:
    """``utilnode.GetZoneKey``: no label, the one zone ""."""
    assert zone_key(Node("a")) == ""
    labelled = Node("b", labels={"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "z"})
    assert zone_key(labelled) == "r:\x00:z"


def test_a_pod_deleted_after_its_lost_node_was_deleted_goes_at_once_and_leaves_the_counts_right(
    tmp_path: Path,
) -> None:
    """Scaled to 0 at 1h + 70 s, after the cloud controller deleted the lost node (1h + 55 s) and before PodGC
    (1h + 100 s): the API server removes the pod at once (no node left to confirm its end), and the run's
    Pending and Running counts stay those of its pods (found by the invariants' soak: the pod, Running, was
    counted off as Pending)."""
    scenario = load_scenario(write(tmp_path, pool(), deployment(), faults("node-loss")))
    sim = Simulation(scenario)
    sim.invariants = checks = InvariantChecks()
    sim.loop.at(FAULT_AT + 70, Priority.ARRIVAL, lambda: sim.scale("Deployment/default/serve", 0))
    sim.run()
    assert checks.events == sim.loop.steps
    first = sim.records["default/serve-0"]
    assert first.deleted_s == FAULT_AT + 70
    assert (sim.lifecycle.pending, sim.lifecycle.running) == (0, 0)


def test_a_pod_on_a_node_whose_kubelet_stopped_stays_ready_until_the_node_goes_not_ready(
    tmp_path: Path,
) -> None:
    """``monitorNodeHealth`` marks the pods of a node that went NotReady not ready in the same pass
    (``MarkPodsNotReady``): until then their Ready condition is what the kubelet last reported, True, though
    their containers died with the node at the fault (they no longer work). Found against the real node
    lifecycle controller (``e2e.fidelity.node_failure_run``): gpufleet had them lose Ready at the fault."""
    sim = Simulation(load_scenario(write(tmp_path, pool(), deployment(), faults("xid-79", "10m"))))
    seen: dict[float, tuple[bool, bool]] = {}
    rec = "default/serve-0"
    for after in (1.0, 49.0, 50.0):
        at = FAULT_AT + after
        sim.loop.at(
            at,
            Priority.SAMPLE,
            lambda at=at: seen.setdefault(at, (sim.records[rec].ready, sim.records[rec].working)),
        )
    sim.run()
    assert seen == {FAULT_AT + 1: (True, False), FAULT_AT + 49: (True, False), FAULT_AT + 50: (False, False)}
