"""A dump's pending pods are as old as their ``metadata.creationTimestamp`` says, on the run's clock (time 0:
the Simulation's ``spec.startTime``, else the latest time the dump's Nodes show: ``model.node_readiness``),
for cluster-autoscaler's waits counted from ``pod.CreationTimestamp`` (cluster-autoscaler 1.34.5
``core/static_autoscaler.go``: ``allPodsAreNew``, its ``unschedulablePodTimeBuffer`` 2 s and
``unschedulablePodWithGpuTimeBuffer`` 30 s from ``core/utils/utils.go``'s ``GetOldestCreateTime`` /
``GetOldestCreateTimeWithGpu``; ``filterOutYoungPods``, the pod's age from ``pod.CreationTimestamp``
against ``--new-pod-scale-up-delay`` or the ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay``
annotation; ``simulator/drainability/rules/system/rule.go``, a ``kube-system`` pod's blocking timeout), and
for the ReplicaSet controller's choice of the pods to delete (``ActivePodsWithRanks``). A
``creationTimestamp`` that is no RFC 3339 time is an error, as a Node's times are.

A dump's pending pod whose ``PodScheduled`` condition is False with reason ``Unschedulable`` is unschedulable
to cluster-autoscaler from the loop at 0 s (``utils/kubernetes/listers.go`` ``unschedulablePods``,
``isUnschedulable``), before the run's scheduler first tries it; one without that condition only once the
run's scheduler has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import run_simulation, write
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError

#: the dump's time: the latest time its Node shows
T0 = "2026-12-06T05:00:00Z"

NODE = f"""
apiVersion: v1
kind: Node
metadata:
  name: dump-1
  creationTimestamp: "2026-12-01T00:00:00Z"
status:
  capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
  conditions:
  - {{type: Ready, status: "True", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-01T00:01:00Z"}}
"""


def pool(name: str, gpus: int) -> str:
    gpu = f"\n  gpu: {{model: H100-80GB, count: {gpus}}}" if gpus else ""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  max: 2{gpu}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
"""


def simulation(autoscaler: str = "", start: str = "") -> str:
    start_time = f", startTime: '{start}'" if start else ""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 5m{start_time}, autoscaler: {{{autoscaler}}}}}
"""


def pod_scheduled(reason: str | None, message: str) -> str:
    """The pod's ``PodScheduled=False`` condition of ``reason`` (None: none, no scheduler tried the pod)."""
    if reason is None:
        return ""
    return f"""
  conditions:
  - type: PodScheduled
    status: "False"
    reason: {reason}
    message: "{message}"
    lastTransitionTime: "{T0}\""""


def pending_pod(
    name: str,
    created: str | None,
    gpus: int = 8,
    annotations: str = "",
    reason: str | None = "Unschedulable",
    message: str = "",
) -> str:
    """A Pending pod of the dump that no node of it fits: 8 GPUs, or 8 cpus without ``gpus``, that
    kube-scheduler found unschedulable (its ``PodScheduled=False`` condition of ``reason``, with ``message``:
    by default what kube-scheduler says of it on the dump's node)."""
    short = "nvidia.com/gpu" if gpus else "cpu"
    condition = pod_scheduled(reason, message or f"0/1 nodes are available: 1 Insufficient {short}.")
    stamp = f'\n  creationTimestamp: "{created}"' if created is not None else ""
    limits = f"nvidia.com/gpu: {gpus}" if gpus else 'cpu: "8", memory: 1Gi'
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default{stamp}
  annotations: {{gpufleet.io/duration: 1m{annotations}}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: main:1
    resources: {{limits: {{{limits}}}}}
status:
  phase: Pending{condition}
"""


def scale_ups(tmp_path: Path, *documents: str) -> list[tuple[float, tuple[str, ...]]]:
    sim = run_simulation(write(tmp_path, *documents))
    return [(e.t_s, e.pods) for e in sim.autoscaler.events if e.kind == "scale-up"]


def test_a_gpu_pod_created_5_minutes_before_the_dump_scales_its_pool_up_at_the_loop_at_0_s(
    tmp_path: Path,
) -> None:
    """``allPodsAreNew``: the GPU pod is 300 s old at time 0, past the 30 s buffer; its dump's
    ``PodScheduled=False`` condition of reason ``Unschedulable`` makes it unschedulable to cluster-autoscaler
    (``utils/kubernetes/listers.go`` ``isUnschedulable``) from the loop at 0 s, which runs before the run's
    scheduler first tries it: that loop scales up. A pod without a ``creationTimestamp`` is created at time
    0 and waits to 30 s."""
    old = pending_pod("train", "2026-12-06T04:55:00Z")
    assert scale_ups(tmp_path, simulation(), NODE, pool("h100", 8), old) == [(0.0, ("default/train",))]
    unstamped = pending_pod("train", None)
    assert scale_ups(tmp_path, simulation(), NODE, pool("h100", 8), unstamped) == [(30.0, ("default/train",))]


def test_a_whatif_of_a_dump_with_an_old_pending_gpu_pod_scales_up_at_the_loop_at_0_s(tmp_path: Path) -> None:
    """``gpufleet whatif`` runs the dump as ``simulate`` does: on both sides, cluster-autoscaler's loop at
    0 s lists the dump's ``Unschedulable`` GPU pod (``isUnschedulable``), 300 s old, and scales its pool up
    (the change, a larger ``max``, changes nothing for one pod)."""
    snap = tmp_path / "snap"
    snap.mkdir()
    old = pending_pod("train", "2026-12-06T04:55:00Z")
    (snap / "dump.yaml").write_text("---".join((simulation(), NODE, pool("h100", 8), old)))
    change = tmp_path / "change.yaml"
    change.write_text(pool("h100", 8).replace("max: 2", "max: 3"))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["whatif", str(snap), str(change), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for side in ("baseline", "changed"):
        events = json.loads((out / side / "summary.json").read_text())["autoscaler_events"]
        assert [(e["t_s"], e["pods"]) for e in events if e["kind"] == "scale-up"] == [
            (0.0, ["default/train"])
        ]


@pytest.mark.parametrize("reason", [None, "SchedulingGated", "SchedulerError"])
def test_a_pending_pod_not_marked_unschedulable_waits_for_the_run_s_scheduler(
    tmp_path: Path, reason: str | None
) -> None:
    """``unschedulablePods`` lists only pods whose ``PodScheduled`` condition is False with reason
    ``Unschedulable`` (``isUnschedulable``): a dump's pod without the condition (no scheduler tried it), or
    with another reason, is unschedulable to cluster-autoscaler only once the run's scheduler finds it so
    (its first cycle at 0 s, after the loop at 0 s): the loop at 10 s scales up."""
    old = pending_pod("train", "2026-12-06T04:55:00Z", reason=reason, message="waiting")
    assert scale_ups(tmp_path, simulation(), NODE, pool("h100", 8), old) == [(10.0, ("default/train",))]


def test_a_pod_no_group_fits_is_told_at_the_loop_at_0_s_then_carries_the_run_s_own_verdict(
    tmp_path: Path,
) -> None:
    """The dump's ``Unschedulable`` pod is among the loop at 0 s's unschedulable pods (``isUnschedulable``):
    no group fits it (a cpu pool for an 8-GPU pod), so that loop tells it ``NotTriggerScaleUp``. The run's
    scheduler then tries it (its first cycle at 0 s, ``Priority.SCHEDULING`` after ``CONTROLLER``) and its
    own message replaces the dump's (``handleSchedulingFailure`` rewrites the condition)."""
    stale = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    old = pending_pod("train", "2026-12-06T04:55:00Z", message=stale)
    sim = run_simulation(write(tmp_path, simulation(), NODE, pool("cpu", 0), old))
    told = [(e.t_s, e.pods) for e in sim.autoscaler.events if e.kind == "no-scale-up"]
    assert told[0] == (0.0, ("default/train",))
    assert sim.records["default/train"].message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: "
        "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_a_dump_pod_marked_unschedulable_that_fits_now_is_bound_at_0_s_without_a_scale_up(
    tmp_path: Path,
) -> None:
    """Listed at the loop at 0 s by its stale ``Unschedulable`` condition, a pod that fits the dump's node
    now is put there by ``filterOutSchedulable`` (no scale-up), and the run's scheduler binds it at 0 s."""
    small = pending_pod("web", "2026-12-06T04:55:00Z", gpus=0).replace('cpu: "8"', 'cpu: "1"')
    sim = run_simulation(write(tmp_path, simulation(), NODE, pool("cpu", 0), small))
    assert [e for e in sim.autoscaler.events if e.kind == "scale-up"] == []
    rec = sim.records["default/web"]
    assert (rec.node, rec.bound_s, rec.message) == ("dump-1", 0.0, None)


def test_a_gpu_pod_created_10_s_before_the_dump_waits_until_it_is_30_s_old(tmp_path: Path) -> None:
    """``allPodsAreNew``: created at -10 s, the GPU pod is very new until 20 s of the run (the loops at 0 s
    and 10 s wait); the loop at 20 s scales up."""
    young = pending_pod("train", "2026-12-06T04:59:50Z")
    assert scale_ups(tmp_path, simulation(), NODE, pool("h100", 8), young) == [(20.0, ("default/train",))]


def test_a_cpu_pod_1_s_old_at_the_dump_waits_1_s(tmp_path: Path) -> None:
    """``allPodsAreNew`` (``unschedulablePodTimeBuffer``, 2 s): with a loop every second, a pod without a GPU
    created 1 s before the dump is very new until 1 s: the loop at 0 s waits, the loop at 1 s scales its
    pool up (created at time 0, it would wait to 2 s)."""
    cpu = pending_pod("web", "2026-12-06T04:59:59Z", gpus=0)
    documents = (simulation("scanInterval: 1s"), NODE, pool("cpu", 0), cpu)
    assert scale_ups(tmp_path, *documents) == [(1.0, ("default/web",))]


def test_the_simulation_start_time_is_time_0_for_the_pods_creation(tmp_path: Path) -> None:
    """``spec.startTime`` (a snapshot's time) is time 0 where the Simulation sets one: a GPU pod created 20 s
    before it is very new until 10 s (the latest time the Node shows is an hour earlier)."""
    young = pending_pod("train", "2026-12-06T05:59:40Z")
    documents = (simulation(start="2026-12-06T06:00:00Z"), NODE, pool("h100", 8), young)
    assert scale_ups(tmp_path, *documents) == [(10.0, ("default/train",))]


def test_new_pod_scale_up_delay_counts_from_the_creation_timestamp(tmp_path: Path) -> None:
    """``filterOutYoungPods``: with ``newPodScaleUpDelay: 1m`` a pod created 5 minutes before the dump is
    old enough at once (the loop at 0 s, which finds it unschedulable by its dump's condition, scales up);
    one created 30 s before is old enough after 30 s, at the loop at 40 s (``podAge > podScaleUpDelay``,
    strictly)."""
    knob = "newPodScaleUpDelay: 1m"
    old = pending_pod("train", "2026-12-06T04:55:00Z")
    assert scale_ups(tmp_path, simulation(knob), NODE, pool("h100", 8), old) == [(0.0, ("default/train",))]
    young = pending_pod("train", "2026-12-06T04:59:30Z")
    assert scale_ups(tmp_path, simulation(knob), NODE, pool("h100", 8), young) == [(40.0, ("default/train",))]


def test_the_pod_scale_up_delay_annotation_counts_from_the_creation_timestamp(tmp_path: Path) -> None:
    """``filterOutYoungPods``: a pod annotated ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay: 2m``,
    created 90 s before the dump, is old enough after 30 s of the run: the loop at 40 s scales up."""
    delay = ", cluster-autoscaler.kubernetes.io/pod-scale-up-delay: 2m"
    pod = pending_pod("train", "2026-12-06T04:58:30Z", annotations=delay)
    assert scale_ups(tmp_path, simulation(), NODE, pool("h100", 8), pod) == [(40.0, ("default/train",))]


@pytest.mark.parametrize("stamp", ["yesterday", "2026-13-01T00:00:00Z"])
def test_an_invalid_creation_timestamp_is_an_error_naming_the_pod_and_field(
    tmp_path: Path, stamp: str
) -> None:
    """As for a Node's times (``kube.nodes.unix_time``): a ``creationTimestamp`` that is not an RFC 3339
    time is an error of the document, at ``metadata.creationTimestamp``."""
    paths = write(tmp_path, NODE, pending_pod("train", stamp))
    with pytest.raises(ScenarioError) as raised:
        load_scenario(paths)
    text = str(raised.value)
    assert "Pod/default/train" in text and "metadata.creationTimestamp" in text and stamp in text
    assert "must be an RFC 3339 time" in text


def web_pod(name: str, created: str) -> str:
    """A running pod of the dump's ReplicaSet ``web``, created at ``created``."""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  uid: uid-{name}
  creationTimestamp: "{created}"
  labels: {{app: web}}
  annotations: {{gpufleet.io/duration: 1h}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-web, controller: true}}]
spec:
  nodeName: dump-1
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]
status: {{phase: Running}}
"""


REPLICA_SET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default, uid: uid-web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {gpufleet.io/duration: 1h}}
    spec:
      containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  minReplicas: 1
  maxReplicas: 2
"""


def test_a_replica_set_scaled_down_deletes_the_pods_its_dump_created_last(tmp_path: Path) -> None:
    """``ActivePodsWithRanks.Less`` (``pkg/controller/controller_utils.go``, rule 8: newer pods before
    older, by ``CreationTimestamp`` in log2 buckets of their age, ``LogarithmicScaleDown``): the HPA scales
    the dump's ReplicaSet from 4 to 2 (``maxReplicas``); of its 4 running pods, equal otherwise, the two
    created 10 minutes before the dump go, not the two created a day before."""
    pods = {
        "web-aaaaa": "2026-12-05T05:00:00Z",
        "web-bbbbb": "2026-12-05T05:00:00Z",
        "web-ccccc": "2026-12-06T04:50:00Z",
        "web-ddddd": "2026-12-06T04:50:00Z",
    }
    documents = [NODE, REPLICA_SET, *(web_pod(name, at) for name, at in pods.items())]
    sim = run_simulation(write(tmp_path, *documents), duration_s=120.0)
    scaled_down = sorted(rec.pod.name for rec in sim.records.values() if rec.reason == "ScaledDown")
    assert scaled_down == ["web-ccccc", "web-ddddd"]


CPU_POOL_OF_TWO = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  replicas: 2
  min: 0
  max: 2
  template:
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}
"""


def running_pod(name: str, namespace: str, node: str, created: str, owner: str = "") -> str:
    reference = f"{{apiVersion: apps/v1, kind: ReplicaSet, name: {owner}, uid: u, controller: true}}"
    owned = f"\n  ownerReferences: [{reference}]" if owner else ""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  creationTimestamp: "{created}"{owned}
spec:
  nodeName: {node}
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]
status: {{phase: Running}}
"""


def test_a_kube_system_pod_older_than_the_blocking_timeout_does_not_block_its_node(tmp_path: Path) -> None:
    """``system.Rule.Drainable`` (``simulator/drainability/rules/system/rule.go``,
    ``isBspPassedDisruptionTimeout``: ``drainTime.After(CreationTimestamp.Add(BspDisruptionTimeout))``,
    ``--blocking-system-pod-distruption-timeout`` 1 h): a ``kube-system`` ReplicaSet pod created 2 hours
    before the run is movable at once, so its node cpu-0, unneeded from the loop at 0 s, is drained at the
    loop at 610 s, past 10 minutes unneeded (its pod fits on cpu-1, which a pod without a controller
    keeps)."""
    documents = (
        simulation(start=T0).replace("duration: 5m", "duration: 30m"),
        CPU_POOL_OF_TWO,
        running_pod("dns", "kube-system", "cpu-0", "2026-12-06T03:00:00Z", owner="dns"),
        running_pod("naked", "default", "cpu-1", "2026-12-06T03:00:00Z"),
    )
    sim = run_simulation(write(tmp_path, *documents))
    assert [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == "scale-down"] == [
        (610.0, ("cpu-0",))
    ]
