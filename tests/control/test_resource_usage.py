"""CPU and memory usage, and the Resource metrics that read it: an ``autoscaling/v1`` HPA (CPU utilization
only) and a KEDA ``cpu``/``memory`` trigger scale on what the metrics server would report.

A pod's usage comes from its Traffic (``cpuPerRequest``, ``idleCpu``, ``idleMemory``,
``memoryPerQueuedRequest``: ``gpufleet.sim.traffic``) or from its ``gpufleet.io/cpu-usage`` /
``gpufleet.io/memory-usage`` annotation. The replica calculation is upstream's
(``pkg/controller/podautoscaler/replica_calculator.go`` ``GetResourceReplicas``, Kubernetes 1.34): the
utilization is ``sum(usage) * 100 / sum(requests)`` over the pods with a sample, the proposal
``ceil(utilization / target * ready pods)`` outside the 10 % tolerance; a pod without a sample counts
as 0 on a scale-up and as 100 % of its request on a scale-down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import simulated, simulated_text
from gpufleet.cli import app
from gpufleet.control.workload_autoscalers import WorkloadAutoscalers
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerSpec,
    MetricTarget,
    ResourceMetricSource,
)
from gpufleet.model.load import Traffic, TrafficUsage
from gpufleet.model.pod import Pod
from gpufleet.sim.event_loop import EventLoop
from gpufleet.sim.traffic import TrafficState

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serving" / "cpu-hpa.yaml"
TARGET = "Deployment/web/api"

HPA_V1 = """apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: api
  namespace: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 10
  targetCPUUtilizationPercentage: 50
"""

SCALED_OBJECT = """apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: api
  namespace: web
spec:
  scaleTargetRef: {name: api}
  minReplicaCount: 2
  maxReplicaCount: 10
  triggers:
  - {type: cpu, metricType: Utilization, metadata: {value: "50"}}
"""


def _changes(summary: dict[str, Any], target: str = TARGET) -> list[tuple[float, float]]:
    """(time, replicas) at each sample where the target's replicas changed."""
    timeline = summary["timeline"]
    out: list[tuple[float, float]] = []
    for t, replicas in zip(timeline["t_s"], timeline["replicas"][target], strict=True):
        if not out or out[-1][1] != replicas:
            out.append((t, replicas))
    return out


def _example(hpa: str = HPA_V1) -> str:
    text = EXAMPLE.read_text()
    assert HPA_V1 in text
    return text.replace(HPA_V1, hpa)


def test_an_autoscaling_v1_hpa_at_50_percent_cpu_scales_from_2_to_4_when_the_traffic_doubles() -> None:
    """``examples/serving/cpu-hpa.yaml``: each request costs 10m CPU-seconds, each replica requests 1 CPU.
    From 1m, 100 requests/s over 2 replicas: 50/s each, 0.5 CPU, utilization 500 * 100 / 1000 = 50 %,
    ratio 50 / 50 = 1.0, within tolerance: 2. At 10m, 200 requests/s: 100/s each (under perReplicaRps
    150, no backlog), 1.0 CPU, 100 %, ratio 2.0, ``ceil(2.0 * 2) = 4``; the default scale-up policy (max
    of 100 % and 4 pods per 15 s) allows it at once. Four replicas then serve 50/s each: 50 %, ratio 1.0,
    held."""
    summary = simulated([EXAMPLE])
    assert _changes(summary) == [(0.0, 2.0), (600.0, 4.0)]
    assert summary["pods"] and len(summary["pods"]) == 4


def test_a_keda_cpu_trigger_scales_from_2_to_4_when_the_traffic_doubles(tmp_path: Path) -> None:
    """The same Deployment and Traffic, scaled by a ScaledObject with a ``cpu`` trigger (Utilization 50):
    KEDA writes an HPA with that Resource metric (``cpu_memory_scaler.go``), which proposes as the
    autoscaling/v1 HPA does: ``ceil(100 / 50 * 2) = 4`` at 10m."""
    summary = simulated_text(tmp_path, _example(SCALED_OBJECT))
    assert _changes(summary) == [(0.0, 2.0), (600.0, 4.0)]


HPA_V2_AVERAGE_VALUE = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
  namespace: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: AverageValue, averageValue: 250m}}
"""


def test_a_cpu_average_value_target_compares_the_mean_usage_with_the_target(tmp_path: Path) -> None:
    """``GetRawResourceReplicas``: an AverageValue target of 250m. At 1m (first sample 60 s) 2 replicas
    serve 50 requests/s each, 500m, ratio 2.0: ``ceil(2.0 * 2) = 4``; 4 replicas use 250m each, held. At
    10m the traffic doubles: 500m each again, ``ceil(2.0 * 4) = 8``."""
    summary = simulated_text(tmp_path, _example(HPA_V2_AVERAGE_VALUE))
    assert _changes(summary) == [(0.0, 2.0), (60.0, 4.0), (600.0, 8.0)]


def test_a_constant_cpu_usage_annotation_scales_down_after_the_stabilization_window(tmp_path: Path) -> None:
    """No Traffic models CPU; the pods carry ``gpufleet.io/cpu-usage: 200m`` against a 1 CPU request:
    20 % of a 50 % target, ratio 0.4, ``ceil(0.4 * 2) = 1`` (minReplicas 1). At 0 s the pods have just
    started: within ``cpuInitializationPeriod`` a sample that does not cover a whole window (15 s) after
    readiness is unready, so the first proposal comes at 15 s; the default scale-down stabilization
    (300 s) keeps the replicas at 2 until the recommendations of the last 5 minutes are all 1, which the
    timeline (sampled every 60 s) shows at 360 s."""
    text = (
        _example(HPA_V1.replace("minReplicas: 2", "minReplicas: 1"))
        .replace("  cpuPerRequest: 10m\n", "")
        .replace(
            "      labels: {app: api}\n    spec:",
            "      labels: {app: api}\n      annotations: {gpufleet.io/cpu-usage: 200m}\n    spec:",
        )
    )
    assert _changes(simulated_text(tmp_path, text)) == [(0.0, 2.0), (360.0, 1.0)]


def test_a_memory_trigger_reads_the_traffics_idle_memory(tmp_path: Path) -> None:
    """A ``memory`` trigger, Utilization 10: the Traffic's ``idleMemory`` 200Mi against a 1Gi request is
    ``200 * 100 / 1024 = 19`` % (integer percent), ratio 1.9, ``ceil(1.9 * 2) = 4`` at the first sync
    with running pods (15 s; memory has no initialization period); 4 replicas still use 19 %, so the HPA
    doubles each sync (the default policy's limit) up to maxReplicaCount 10, reached by the 60 s sample."""
    memory = SCALED_OBJECT.replace("type: cpu", "type: memory").replace('value: "50"', 'value: "10"')
    assert _changes(simulated_text(tmp_path, _example(memory))) == [(0.0, 2.0), (60.0, 10.0)]


# -- the sync reads each pod's usage; a pod without one is a missing pod ------------------------


@dataclass
class Status:
    pod: Pod
    phase: str = "Running"
    ready: bool = True
    running_s: float | None = -3600.0  # long past the CPU initialization period
    working_s: float | None = -3600.0
    terminating: bool = False


@dataclass
class Scaled:
    replicas: int
    active: set[str] = field(default_factory=set)


class Port:
    """A Deployment of 3 pods requesting 1 CPU each; ``usage`` maps a pod name to its CPU cores (a pod
    not in it reports no sample)."""

    def __init__(self, usage: dict[str, float]) -> None:
        self.usage = usage
        self.deployment = Scaled(3, {f"web/api-{i}" for i in range(3)})
        self.pods = {
            key: Status(Pod(key.split("/")[1], namespace="web", requests={"cpu": 1000}))
            for key in self.deployment.active
        }
        self.scaled: list[tuple[float, int]] = []

    def scale_target(self, target: str) -> Scaled | None:
        return self.deployment if target == TARGET else None

    def pod_resource_usage(self, pod: Status, resource: str) -> float | None:
        return self.usage.get(pod.pod.name) if resource == "cpu" else None

    def target_pods_version(self, target: str) -> None:
        return None

    def scale(self, target: str, replicas: int) -> None:
        self.scaled.append((0.0, replicas))
        self.deployment.replicas = replicas


def _first_scale(usage: dict[str, float]) -> list[tuple[float, int]]:
    port, loop = Port(usage), EventLoop()
    ref = CrossVersionObjectReference("Deployment", "api", "apps/v1")
    cpu = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=50))
    spec = HorizontalPodAutoscalerSpec(ref, max_replicas=20, min_replicas=1, metrics=(cpu,))
    hpas = WorkloadAutoscalers(port, loop, [("web/api", spec)], [], [])  # type: ignore[arg-type]
    hpas.start()
    loop.step()  # the first sync, at 0 s
    return port.scaled


def test_a_pod_without_a_usage_counts_as_0_on_a_scale_up() -> None:
    """api-0 and api-1 at 1 CPU (200 % of a 50 % target), api-2 without a sample: on a scale-up the missing
    pod counts 0, ``2000 * 100 / 3000 = 66`` %, ratio 1.33, ``ceil(1.33 * 3) = 4``."""
    assert _first_scale({"api-0": 1.0, "api-1": 1.0}) == [(0.0, 4)]


def test_a_pod_without_a_usage_counts_as_its_request_on_a_scale_down() -> None:
    """api-0 and api-1 at 100m (20 %), api-2 without a sample: on a scale-down the missing pod counts
    ``max(100, target)`` % of its request, ``(200 + 1000) * 100 / 3000 = 40`` %, ratio 0.8, ``ceil(0.8 *
    3) = 3``: no change (the stabilization window would hold it anyway)."""
    assert _first_scale({"api-0": 0.1, "api-1": 0.1}) == []


def test_no_pod_with_a_usage_is_no_metric_and_the_hpa_holds() -> None:
    """No pod reports a sample: ``no metrics returned from resource metrics API``, the HPA holds."""
    assert _first_scale({}) == []


# -- a Traffic's usage ---------------------------------------------------------------------------


def _traffic(usage: TrafficUsage, rps: float = 100.0) -> TrafficState:
    return TrafficState(Traffic("t", "web", "api", ((0.0, rps),), per_replica_rps=150.0, usage=usage))


def test_a_traffics_cpu_is_its_idle_cpu_plus_the_cost_of_the_requests_each_replica_serves() -> None:
    """``idleCpu + cpuPerRequest * served``: 2 replicas share 100 requests/s, 0.1 + 0.01 * 50 = 0.6 cores;
    a pod that does not serve (not ready yet) uses the idle 0.1; memory is not modelled (None)."""
    state = _traffic(TrafficUsage(cpu_per_request=0.01, idle_cpu=0.1))
    state.advance(0.0, 2, 0.0)
    assert state.usage("cpu", serving=True) == pytest.approx(0.6)
    assert state.usage("cpu", serving=False) == pytest.approx(0.1)
    assert state.usage("memory", serving=True) is None


def test_a_backlog_keeps_the_replicas_at_full_speed_and_holds_memory() -> None:
    """400 requests/s against 2 replicas of 150: a backlog grows by 100/s; each replica serves its 150/s
    (1.5 cores at 10m each) and holds half the backlog (500 after 10 s) at 1Mi per waiting request on top
    of its 100Mi idle memory."""
    state = _traffic(
        TrafficUsage(cpu_per_request=0.01, idle_memory=100 * 2**20, memory_per_queued_request=2**20),
        rps=400.0,
    )
    state.advance(0.0, 2, 0.0)
    state.advance(10.0, 2, 0.0)
    assert state.usage("cpu", serving=True) == pytest.approx(1.5)
    assert state.usage("memory", serving=True) == pytest.approx((100 + 500) * 2**20)
    assert state.usage("memory", serving=False) == pytest.approx(100 * 2**20)


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        (
            "cpuPerRequest: 10m",
            "cpuPerRequest: -10m",
            'spec.cpuPerRequest: Invalid value: "-10m": must be greater than or equal to 0',
        ),
        (
            "idleMemory: 200Mi",
            "idleMemory: lots",
            "spec.idleMemory: quantities must match the regular expression",
        ),
        (
            "      labels: {app: api}\n    spec:",
            "      labels: {app: api}\n      annotations: {gpufleet.io/memory-usage: -1Gi}\n    spec:",
            "spec.template.metadata.annotations.gpufleet.io/memory-usage: "
            'Invalid value: "-1Gi": must be greater than or equal to 0',
        ),
    ],
)
def test_a_bad_usage_is_an_error_naming_the_field_and_exit_status_2(
    tmp_path: Path, old: str, new: str, line: str
) -> None:
    text = EXAMPLE.read_text()
    assert old in text
    path = tmp_path / "scenario.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(ScenarioError, match=re.escape(line)):
        load_scenario([path])
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert line in result.output
