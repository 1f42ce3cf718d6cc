"""cluster-autoscaler halted by an unhealthy cluster says so (``core/static_autoscaler.go`` ``RunOnce``, 1.34:
``Cluster is not ready for autoscaling`` and the ``ClusterUnhealthy`` Event; ``clusterstate/clusterstate.go``
``GetStatus``: the status ConfigMap's cluster-wide ``Health`` condition with its node counts,
``clusterstate/api/types.go``). The summary's autoscaler events carry a ``cluster-unhealthy`` event when a
scan finds the cluster unhealthy and a ``cluster-healthy`` one when it is healthy again, each with the counts;
a pending pod's diagnosis (and so ``describe pod``) says the autoscaler is halted and why while it is, and
names the node groups ``not ready for scale-up`` when that is why its pool did not grow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_cluster_and_node_group_health import LONG_AGO, busy_group, fill, waiting
from test_loops_through_a_port import Group, HandKeptCluster, ManualClock, autoscaler
from typer.testing import CliRunner

from conftest import gpu_node, gpu_pod, simulated, write
from gpufleet.cli import app
from gpufleet.model.simulation import NodePool
from gpufleet.report import render_html

#: Six busy 8-GPU nodes of an autoscaled pool (max 8); at 1h four of them reboot (XID 79), NotReady from
#: 1h 0m 50s (``--node-monitor-grace-period``) until they are back 30 minutes after detection (1h 0m 30s):
#: 4 Unready of 6 (more than 3 and than 45%) halts cluster-autoscaler. Their zone partially disrupted and
#: small, no pod is evicted (``ReducedQPSFunc``); their pods fail as their kubelets come back and are made
#: again; a 16-GPU Job (2 x 8) arrives at 1h 5m and waits.
SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: unhealthy}
spec: {duration: 4h}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 6
  max: 8
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
  provisioning: {boot: 3m, driver: 4m, join: 1m, devicePlugin: 30s}
---
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {name: reboots}
spec:
  faults:
  - {at: 1h, node: h100-0, kind: xid-node-reboot}
  - {at: 1h, node: h100-1, kind: xid-node-reboot}
  - {at: 1h, node: h100-2, kind: xid-node-reboot}
  - {at: 1h, node: h100-3, kind: xid-node-reboot}
  response: {detection: 30s, reboot: 30m}
---
apiVersion: batch/v1
kind: Job
metadata: {name: serve}
spec:
  parallelism: 6
  completions: 6
  backoffLimit: 10
  template:
    metadata:
      annotations: {gpufleet.io/duration: 3h}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example.com/serve:v1
        resources:
          limits: {nvidia.com/gpu: 8}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {gpufleet.io/submit-at: 1h5m}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata:
      annotations: {gpufleet.io/duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example.com/train:v1
        resources:
          limits: {nvidia.com/gpu: 8}
"""

DOWN_AT = 3650.0  # NotReady: the node monitor grace period after the reboots
UP_AT = 3630.0 + 1800.0  # back Ready: the reboot after its detection
UNHEALTHY = {
    "t_s": DOWN_AT,
    "kind": "cluster-unhealthy",
    "pool": None,
    "nodes": ["h100-0", "h100-1", "h100-2", "h100-3"],
    "pods": [],
    "reason": "Cluster is not ready for autoscaling: "
    "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6)",
    "node_counts": {"registered": 6, "ready": 2, "not_started": 0, "unready": 4},
}
HALTED = (
    f"cluster-autoscaler is halted since {DOWN_AT:g} s (Cluster is not ready for autoscaling): "
    "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6); more than 3 nodes "
    "(--ok-total-unready-count) and more than 45% of the 6 nodes (--max-total-unready-percentage) are "
    "Unready: it scales no node group up or down until fewer are"
)


def run(tmp_path: Path, duration_s: float | None = None) -> dict[str, Any]:
    return simulated(write(tmp_path, SCENARIO), duration_s=duration_s)


def scale_events(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The autoscaler's events but its soft DeletionCandidate taints (``test_soft_deletion_taints``)."""
    return [e for e in summary["autoscaler_events"] if not e["kind"].startswith("soft-taint")]


def pod(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in summary["pods"] if p["name"] == name)


def test_an_unhealthy_cluster_logs_cluster_unhealthy_and_a_pending_pod_s_diagnosis_says_it_is_halted(
    tmp_path: Path,
) -> None:
    """At 1h 20m, while four of six nodes are Unready: one ``cluster-unhealthy`` event with the Unready nodes
    and upstream's counts, no scale-up and no ``no-scale-up`` (the scan stops before scale-up), and the 16-GPU
    Job's pods, pending, say in their diagnosis that cluster-autoscaler is halted and why."""
    summary = run(tmp_path, duration_s=4800.0)
    assert scale_events(summary) == [UNHEALTHY]
    for name in ("default/train-0", "default/train-1"):
        record = pod(summary, name)
        assert record["phase"] == "Pending" and record["node"] is None
        assert record["diagnosis"]["hints"][-1] == HALTED


def test_the_cluster_healthy_again_logs_cluster_healthy_and_scales_up(tmp_path: Path) -> None:
    """The scan that finds the nodes Ready again logs ``cluster-healthy`` with the counts; the kubelets back
    fail the serving pods they find (``restartPolicy: Never``, their containers gone with the reboot), so
    the pending 16-GPU Job takes two of the rebooted nodes at once and the scan after the serving pods made
    again (after the serving Job's back-off: its four failures hold every creation 80 s, 10 s doubled thrice,
    ``manageJob``'s ``getRemainingTime``; then the 30 s wait for very new GPU pods) scales up for two of
    them; the Job runs. Nothing pending is left halted."""
    summary = run(tmp_path)
    events = scale_events(summary)
    assert events[0] == UNHEALTHY
    assert events[1] == {
        "t_s": UP_AT,
        "kind": "cluster-healthy",
        "pool": None,
        "nodes": [],
        "pods": [],
        "reason": "Health: Healthy (ready=6 unready=0 notStarted=0 registered=6)",
        "node_counts": {"registered": 6, "ready": 6, "not_started": 0, "unready": 0},
    }
    scale_up = next(e for e in events if e["kind"] == "scale-up")
    assert (scale_up["t_s"], scale_up["pool"]) == (UP_AT + 80 + 30, "h100")
    assert scale_up["pods"] == ["default/serve-1-r1", "default/serve-5-r1"] and len(scale_up["nodes"]) == 2
    assert pod(summary, "default/train-0")["bound_s"] == UP_AT
    assert [e["kind"] for e in events].count("cluster-unhealthy") == 1
    assert pod(summary, "default/train-0")["phase"] == "Succeeded"
    assert all(not p["diagnosis"] or HALTED not in p["diagnosis"]["hints"] for p in summary["pods"])


def test_describe_pod_and_the_report_say_it(tmp_path: Path) -> None:
    """``describe pod`` of the pending pod, from the saved summary, shows the halted hint in its
    explanation; the HTML report's autoscaler events table lists the ``cluster-unhealthy`` row with its
    reason and its four nodes."""
    summary = run(tmp_path, duration_s=4800.0)
    saved = tmp_path / "summary.json"
    saved.write_text(json.dumps(summary))
    result = CliRunner().invoke(app, ["describe", "pod", "train-0", "--summary", str(saved)])
    assert result.exit_code == 0, result.output
    assert "cluster-autoscaler is halted since 3650 s" in " ".join(result.output.split())
    page = render_html(summary)
    # (and the soft DeletionCandidate taints: on the six nodes empty at the scan at 0 s, before the serving
    # pods' first attempt, off at 10 s; the rebooted ones keep their pods while down)
    assert "3 events: 1 cluster-unhealthy, 1 soft-taint, 1 soft-taint-removed." in page
    row = page[page.index("<td>cluster-unhealthy</td>") :].split("</tr>")[0]
    assert 'title="h100-0, h100-1, h100-2, h100-3">4</td>' in row
    assert "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6)" in row


def halted_port() -> tuple[HandKeptCluster, list[str]]:
    """Five full static nodes and an autoscaled group at its max: the pending pod's pool cannot grow
    (``max node group size reached``)."""
    nodes = [gpu_node(f"static-{k}", 8) for k in range(5)]
    full = NodePool("h100", gpu_node("h100-template", 8), min=0, max=0)
    port = HandKeptCluster(nodes, [gpu_pod("train", 8)], [Group("h100", full)])
    fill(port, nodes)
    return waiting(port), [n.name for n in nodes]


def test_while_halted_the_pod_s_stale_not_trigger_scale_up_gives_way_to_the_halt() -> None:
    """A pod whose pool is at its max gets ``NotTriggerScaleUp``; four of five nodes then go Unready: the
    scan logs ``cluster-unhealthy`` and nothing else, and the pod's hints say the autoscaler is halted (not
    its last, stale, reason); once they are Ready the scan logs ``cluster-healthy`` and the hints are gone."""
    port, names = halted_port()
    clock = ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert [e.kind for e in ca.events] == ["no-scale-up"] and ca.pod_hints("default/train") == []
    port.unready = {n: LONG_AGO for n in names[:4]}
    ca.arm(10.0)
    clock.run_until(10.0)
    assert [(e.kind, e.nodes) for e in ca.events[1:]] == [("cluster-unhealthy", tuple(names[:4]))]
    assert ca.events[1].node_counts == {"registered": 5, "ready": 1, "not_started": 0, "unready": 4}
    [hint] = ca.pod_hints("default/train")
    assert hint.startswith("cluster-autoscaler is halted since 10 s (Cluster is not ready for autoscaling)")
    clock.run_until(30.0)  # (it scans every 10 s while halted) no second event
    assert len(ca.events) == 2 and ca.pod_hints("default/train") == [hint]
    port.unready = {}
    clock.run_until(40.0)
    assert [(e.t_s, e.kind, e.reason) for e in ca.events[2:]] == [
        (40.0, "cluster-healthy", "Health: Healthy (ready=5 unready=0 notStarted=0 registered=5)")
    ]
    assert ca.pod_hints("default/train") == []


def test_nodes_still_starting_count_not_started_not_unready() -> None:
    """``NotStarted``: four nodes not Ready within 15 minutes of registering (at 0 s) and one more long
    Unready: at 900 s the four become Unready and the cluster unhealthy; the event counts them so, none
    still starting."""
    port, names = halted_port()
    port.unready = {**{n: 0.0 for n in names[:4]}, names[4]: LONG_AGO}
    clock = ManualClock()
    ca = autoscaler(port, clock)
    ca.arm(890.0)
    clock.run_until(890.0)
    assert "cluster-unhealthy" not in [e.kind for e in ca.events]
    clock.run_until(900.0)
    [event] = [e for e in ca.events if e.kind == "cluster-unhealthy"]
    assert event.t_s == 900.0 and event.node_counts == {
        "registered": 5,
        "ready": 0,
        "not_started": 0,
        "unready": 5,
    }


def test_a_group_not_ready_for_scale_up_is_named_in_the_pod_s_hints() -> None:
    """``IsNodeGroupHealthy`` false for group a (four of eight nodes Unready) in a healthy cluster: the pod's
    ``NotTriggerScaleUp`` says ``1 not ready for scale-up`` and its hints name the group with its Health
    condition (``buildHealthStatusNodeGroup``: counts, ``cloudProviderTarget``, min and max size)."""
    nodes, group_a = busy_group("a", 8)
    static = [gpu_node(f"static-{k}", 8) for k in range(2)]
    port = HandKeptCluster([*nodes, *static], [gpu_pod("train", 8)], [group_a])
    fill(port, [*nodes, *static])
    port.unready = {n.name: LONG_AGO for n in nodes[:4]}
    clock = ManualClock()
    ca = autoscaler(waiting(port), clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    assert [e.reason for e in ca.events] == ["pod didn't trigger scale-up: 1 not ready for scale-up"]
    assert ca.pod_hints("default/train") == [
        "cluster-autoscaler: node group a is not ready for scale-up (Health: Unhealthy (ready=4 unready=4 "
        "notStarted=0 registered=8) cloudProviderTarget=8 (minSize=0, maxSize=20))"
    ]
    ca.port.unready = {}  # Ready again: the next scan grows the group and the hint is gone
    ca.arm(10.0)
    clock.run_until(10.0)
    assert ca.unready_groups == {} and ca.pod_hints("default/train") == []
