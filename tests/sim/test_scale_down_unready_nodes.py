"""cluster-autoscaler's scale-down of a node that went NotReady (a reboot fault: its kubelet is down until
it is back), end to end: ``--scale-down-unready-time`` (20m) instead of ``--scale-down-unneeded-time``
(10m), none under ``--scale-down-unready-enabled=false``, and a node unready within 15 minutes of
registering still starting (``clusterstate``'s ``NotStarted``), as cluster-autoscaler 1.34 does. A node
scaled down is deleted ``--node-delete-delay-after-taint`` (5 s) after the scan that chose it
(``deleteNodesAsync``: ``DELAY``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import simulated, write

#: ``--node-delete-delay-after-taint``'s default: an empty node goes that long after its scale-down
DELAY = 5.0


def scenario(autoscaler: str = "{}", fault_at: str = "1h") -> list[str]:
    """An autoscaled pool of two 8-GPU nodes (registered at 0 s), each running one 8-GPU pod of a 3-hour
    Job; h100-1 falls off the bus at ``fault_at`` (XID 79) and reboots for 2 hours. Its kubelet down, the
    node is NotReady 50 s later (``--node-monitor-grace-period``) and its pod, tolerating ``unreachable`` for
    the 300 s of ``DefaultTolerationSeconds``, is deleted by the taint eviction controller 350 s after the
    fault and stays Terminating; the one made again waits: h100-0 is full and the pool at its max. The
    Terminating pod is long terminating once deleted more than its grace period (30 s) and 30 s ago
    (``drain.IsPodLongTerminating``, ``PodLongTerminatingExtraThreshold``): 410 s after the fault, from
    when scale-down neither counts it in utilisation nor moves it (``longterminating``)."""
    return [
        f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  autoscaler: {autoscaler}
""",
        """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 2
  min: 0
  max: 2
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
  provisioning: {boot: 5m}
""",
        """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 10
  template:
    metadata:
      annotations: {gpufleet.io/duration: 3h}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 8}
""",
        f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: 2h}}
  faults:
  - {{at: {fault_at}, node: h100-1, kind: xid-79}}
""",
    ]


def run(tmp_path: Path, autoscaler: str = "{}", fault_at: str = "1h") -> dict[str, Any]:
    return simulated(write(tmp_path, *scenario(autoscaler, fault_at)))


def deleted(summary: dict[str, Any]) -> dict[str, float | None]:
    return {n["name"]: n["deleted_s"] for n in summary["nodes"]}


def scaled_down(summary: dict[str, Any]) -> list[tuple[float, str]]:
    return [
        (e["t_s"], n) for e in summary["autoscaler_events"] if e["kind"] == "scale-down" for n in e["nodes"]
    ]


def test_an_empty_node_gone_not_ready_is_removed_after_the_unready_time_not_the_unneeded_time(
    tmp_path: Path,
) -> None:
    """``Nodes.RemovableAt``: h100-1, NotReady from 1h0m50s and its only pod long terminating after 1h6m50s,
    is unneeded from the scan after (1h7m) and removed once unneeded for more than
    ``--scale-down-unready-time`` (20 min: the scan at 1h27m10s), not the 10 minutes of a Ready node; the
    long-terminating pod is not evicted (``GetPodsToMove`` skips it): the node goes as an empty one, once
    the delay after its taint is over."""
    summary = run(tmp_path)
    assert (3600.0 + 420.0 + 1210.0, "h100-1") in scaled_down(summary)
    assert deleted(summary)["h100-1"] == 3600.0 + 420.0 + 1210.0 + DELAY


def test_a_ready_empty_node_still_goes_after_the_unneeded_time(tmp_path: Path) -> None:
    """The same run: h100-0, Ready, falls empty when its pod ends at 3h and goes at the scan after 10 minutes
    (``--scale-down-unneeded-time``); the unready time is for unready nodes only."""
    summary = run(tmp_path)
    assert deleted(summary)["h100-0"] == 3 * 3600.0 + 610.0 + DELAY


def test_the_unready_time_is_read_from_the_scenario(tmp_path: Path) -> None:
    """``scaleDownUnreadyTime: 30m``: h100-1, unneeded from 1h7m, goes at the scan after 1h37m."""
    summary = run(tmp_path, "{scaleDownUnreadyTime: 30m}")
    assert deleted(summary)["h100-1"] == 3600.0 + 420.0 + 1810.0 + DELAY


def test_with_scale_down_unready_disabled_a_node_down_is_never_removed_by_scale_down(tmp_path: Path) -> None:
    """``--scale-down-unready-enabled=false`` (``ScaleDownUnreadyDisabled``): h100-1 stays through its
    reboot (1h to 3h); Ready again and empty (the pod made again took h100-0, free at 3h), it goes at the
    scan after 10 minutes as any Ready node."""
    summary = run(tmp_path, "{scaleDownUnreadyEnabled: false}")
    assert [(t, n) for t, n in scaled_down(summary) if n == "h100-1"] == [(3 * 3600.0 + 610.0, "h100-1")]


def test_a_node_unready_within_15_minutes_of_registering_is_still_starting(tmp_path: Path) -> None:
    """``updateReadinessStats``: a node not Ready within ``MaxNodeStartupTime`` (15 min) of its creation is
    ``NotStarted``, an upcoming node ``RunOnce`` takes out of scale-down's candidates. h100-1 (registered at
    0 s) goes down at 5 min, its pod long terminating from 11m50s: it is a candidate from 15 min only, and
    goes at the scan after 20 more minutes."""
    summary = run(tmp_path, fault_at="5m")
    assert deleted(summary)["h100-1"] == 900.0 + 1210.0 + DELAY
