"""A launched GPU node that joins the cluster but whose GPUs do not register (its device plugin never
comes up, or late), end to end, as cluster-autoscaler 1.34 takes it.

``processors/customresources/gpu_processor.go`` ``FilterOutNodesWithUnreadyResources``: a node that should
have GPUs (its group's template has them) with none allocatable is replaced by a not-Ready copy
(``kubernetes.GetUnreadyNodeCopy``, reason ``ResourceUnready``, its Ready condition's ``lastTransitionTime``
the node's ``creationTimestamp``). ``clusterstate.updateReadinessStats`` counts it ``NotStarted`` within
``MaxNodeStartupTime`` (15 min) of its creation, ``Unready`` after: no longer upcoming
(``GetUpcomingNodes``), a scale-down candidate (``RunOnce`` takes only the NotStarted ones out), counted by
``IsClusterHealthy``. Scale-down removes it once unneeded for more than ``scaleDownUnreadyTime``
(``core/scaledown/unneeded/nodes.go`` ``unremovableReason``: the unready time counts from when the planner
first found it unneeded, ``v.since``, that is from the first scan after it stopped being NotStarted; not
from its Ready condition's transition), none under ``scaleDownUnreadyEnabled: false``
(``eligibility.go``: ``ScaleDownUnreadyDisabled``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import simulated, write

#: the first scale-up: the GPU pods created at 0 s are very new until 30 s (``allPodsAreNew``)
LAUNCHED = 30.0
JOINED = LAUNCHED + 300.0  # boot 5m: the node joins, no GPU allocatable
STARTED = JOINED + 900.0  # MaxNodeStartupTime after its creation: Unready, a scale-down candidate


def scenario(device_plugin: str, autoscaler: str = "{}", pods: int = 1) -> list[str]:
    """An autoscaled pool of 8-GPU nodes (at most one more than ``pods``) whose nodes join 5 minutes after
    their launch and register their GPUs ``device_plugin`` later; a DaemonSet puts an agent pod on each node
    as it joins; ``pods`` 8-GPU pods of a 1-hour Job wait."""
    return [
        f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  duration: 1h
  autoscaler: {autoscaler}
""",
        f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: 0
  min: 0
  max: {pods + 1}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
  provisioning: {{boot: 5m, devicePlugin: {device_plugin}}}
""",
        """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: c
        image: busybox
        resources:
          requests: {cpu: "1", memory: 1Gi}
""",
        f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  completions: {pods}
  parallelism: {pods}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: 8}}
""",
    ]


def run(tmp_path: Path, device_plugin: str = "100h", autoscaler: str = "{}", **kw: int) -> dict[str, Any]:
    return simulated(write(tmp_path, *scenario(device_plugin, autoscaler, **kw)))


def events(summary: dict[str, Any], kind: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e["t_s"], tuple(e["nodes"])) for e in summary["autoscaler_events"] if e["kind"] == kind]


def node(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in summary["nodes"] if n["name"] == name)


def test_a_node_whose_gpus_never_register_is_removed_once_unneeded_for_the_unready_time(
    tmp_path: Path,
) -> None:
    """h100-0, launched at 30 s, joins 5 min later without GPUs (its agent pod on it): ``NotStarted`` for
    15 min, then ``Unready`` (``ResourceUnready``) and unneeded from the scan then (``STARTED``); removed at
    the first scan after it has been unneeded for more than ``scaleDownUnreadyTime`` (20 min: 20m10s later),
    with a ``scale-down`` event, and deleted ``--node-delete-delay-after-taint`` (5 s) later
    (``deleteNodesAsync``). Its daemon pod does not hold it."""
    summary = run(tmp_path)
    assert events(summary, "soft-taint")[0] == (STARTED, ("h100-0",))
    assert (STARTED + 1210.0, ("h100-0",)) in events(summary, "scale-down")
    assert node(summary, "h100-0")["gpu_ready_s"] is None
    assert node(summary, "h100-0")["deleted_s"] == STARTED + 1215.0


def test_a_node_unready_for_its_gpus_is_no_longer_upcoming_and_the_pod_triggers_a_new_scale_up(
    tmp_path: Path,
) -> None:
    """``GetUpcomingNodes``: once ``Unready`` (``STARTED``) h100-0 no longer stands for the pending pod; its
    scale-up (at 30 s) having timed out 15m10s later (``maxNodeProvisionTime``: the group backed off 5
    minutes), the pod triggers a new one at the first scan out of the backoff after ``STARTED``."""
    summary = run(tmp_path)
    ups = events(summary, "scale-up")
    assert ups[:2] == [(LAUNCHED, ("h100-0",)), (STARTED + 20.0, ("h100-1",))]
    assert events(summary, "provision-timeout")[0] == (LAUNCHED + 910.0, ("h100-0",))


def test_with_scale_down_unready_disabled_a_node_whose_gpus_never_register_stays(tmp_path: Path) -> None:
    """``scaleDownUnreadyEnabled: false`` (``ScaleDownUnreadyDisabled``): no node of the pool is scaled down,
    h100-0 stays to the end without GPUs."""
    summary = run(tmp_path, autoscaler="{scaleDownUnreadyEnabled: false}")
    assert events(summary, "scale-down") == []
    assert node(summary, "h100-0")["deleted_s"] is None


def test_a_node_whose_gpus_register_20_minutes_after_it_joined_is_kept_and_used(tmp_path: Path) -> None:
    """GPUs registered 20 min after the node joined: ``Unready`` and unneeded from ``STARTED``, it is
    Ready again before ``scaleDownUnreadyTime`` is up and takes the pod; it is not scaled down while the pod
    runs (the second node, launched for the pod while h100-0 was Unready, goes when unneeded)."""
    summary = run(tmp_path, device_plugin="20m")
    assert node(summary, "h100-0")["gpu_ready_s"] == JOINED + 1200.0
    pod = next(p for p in summary["pods"] if p["name"] == "default/train-0")
    assert pod["node"] == "h100-0"
    assert all(names != ("h100-0",) for _, names in events(summary, "scale-down"))


def test_four_nodes_whose_gpus_never_register_make_the_cluster_unhealthy_15_minutes_after_they_joined(
    tmp_path: Path,
) -> None:
    """``IsClusterHealthy``: four launches registered without GPUs 5 min after their launch (at 30 s) are
    ``NotStarted`` for 15 min, then four ``Unready`` of four nodes, more than ``--ok-total-unready-count`` (3)
    and 45%: the scan then (``STARTED``) logs ``cluster-unhealthy`` with the counts
    (``updateReadinessStats``)."""
    summary = run(tmp_path, pods=4)
    unhealthy = [e for e in summary["autoscaler_events"] if e["kind"] == "cluster-unhealthy"]
    assert unhealthy[0]["t_s"] == STARTED
    assert unhealthy[0]["nodes"] == ["h100-0", "h100-1", "h100-2", "h100-3"]
    assert unhealthy[0]["node_counts"] == {"registered": 4, "ready": 0, "not_started": 0, "unready": 4}
