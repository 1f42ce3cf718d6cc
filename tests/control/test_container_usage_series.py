"""cAdvisor's usage series in the PromQL a ``prometheus`` trigger reads: the counter
``container_cpu_usage_seconds_total`` and the gauge ``container_memory_working_set_bytes``, one series per
running pod's container, labelled ``namespace``, ``pod`` and ``container`` as the kubelet's cAdvisor
labels them (no owner label), from the same usage the metrics server reports to a Resource metric
(``gpufleet.sim.traffic``, ``gpufleet.io/cpu-usage`` / ``memory-usage``). The CPU counter's rate over a
window is read from the steps of the requests one serving replica served, as ``http_requests_total``'s
is from the arrivals' rate steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import simulated_text
from gpufleet.autoscaling.promql_eval import instant_vector
from gpufleet.control.pod_series import PodSeries
from gpufleet.model.load import Traffic, TrafficUsage
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.promql import parse_query
from gpufleet.sim.traffic import TrafficState

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serving" / "cpu-hpa.yaml"
HPA_V1 = EXAMPLE.read_text().split("---\n")[2]


def _traffic() -> TrafficState:
    usage = TrafficUsage(cpu_per_request=0.01, idle_cpu=0.1)
    return TrafficState(Traffic("t", "web", "api", ((0.0, 100.0),), per_replica_rps=150.0, usage=usage))


def test_the_cpu_counters_rate_is_the_idle_cpu_plus_the_cost_of_the_requests_served_in_the_window() -> None:
    """2 replicas serve 100 requests/s for 60 s: over the last minute each used ``0.1 + 0.01 * 6000 / 60 /
    2 = 0.6`` cores. Then 4 replicas for 30 s: at 90 s the target served 3000 + 3000 requests in the last
    minute, split over its 4 serving pods as ``http_requests_total`` is, 25/s each: ``0.1 + 0.01 * 25 =
    0.35`` cores for a pod running all along; ``irate`` (window 0) reads the current usage, the same
    0.35; a pod that does not serve uses only its idle 0.1."""
    state = _traffic()
    state.advance(0.0, 2, 0.0)
    state.advance(60.0, 2, 0.0)
    assert state.cpu_rate(60.0, 0.0, serving=True) == pytest.approx(0.6)
    state.advance(60.0, 4, 0.0)
    state.advance(90.0, 4, 0.0)
    assert state.cpu_rate(60.0, 0.0, serving=True) == pytest.approx(0.35)
    assert state.cpu_rate(0.0, 0.0, serving=True) == pytest.approx(0.35)
    assert state.cpu_rate(60.0, 0.0, serving=False) == pytest.approx(0.1)


def test_the_pods_cpu_rates_add_up_to_the_cpu_used_in_the_window() -> None:
    """The 2 replicas added at 60 s ran 30 s of the last minute: idle ``0.1 * 30 / 60 = 0.05`` plus their
    25/s share, 0.3 cores; the four pods' rates add up to the CPU-seconds used in the window over 60 s:
    ``(2 * 0.1 * 60 + 2 * 0.1 * 30 + 0.01 * 6000) / 60 = 1.3`` (Prometheus' rate without its
    extrapolation)."""
    state = _traffic()
    state.advance(0.0, 2, 0.0)
    state.advance(60.0, 2, 0.0)
    state.advance(60.0, 4, 0.0)
    state.advance(90.0, 4, 0.0)
    new = state.cpu_rate(60.0, 60.0, serving=True)
    assert new == pytest.approx(0.3)
    assert 2 * 0.35 + 2 * new == pytest.approx((2 * 0.1 * 60 + 2 * 0.1 * 30 + 0.01 * 6000) / 60)


def test_a_traffic_without_cpu_usage_has_no_cpu_counter() -> None:
    state = TrafficState(Traffic("t", "web", "api", ((0.0, 100.0),), per_replica_rps=150.0))
    state.advance(10.0, 2, 0.0)
    assert state.cpu_rate(60.0, 0.0, serving=True) is None


@dataclass
class Status:
    pod: Pod
    phase: str = "Running"
    ready: bool = True
    terminating: bool = False


class Port:
    """api-0 and api-1 of Deployment api run (0.5 and 0.25 cores, 1Gi each; api-1 not ready yet), api-2
    is Pending; a bare pod ``tool`` runs with no usage."""

    def __init__(self) -> None:
        owner = OwnerRef("ReplicaSet", "api-5d9f")
        behavior = Behavior(container="server")
        self.pods = {
            "web/api-0": Status(Pod("api-0", namespace="web", owner=owner, behavior=behavior)),
            "web/api-1": Status(Pod("api-1", namespace="web", owner=owner, behavior=behavior), ready=False),
            "web/api-2": Status(Pod("api-2", namespace="web", owner=owner, behavior=behavior), "Pending"),
            "web/tool": Status(Pod("tool", namespace="web", behavior=Behavior(container="sh"))),
        }
        self.cpu = {"api-0": 0.5, "api-1": 0.25}

    def pod_resource_usage(self, pod: Status, resource: str) -> float | None:
        if pod.phase != "Running" or pod.pod.name not in self.cpu:
            return None
        return self.cpu[pod.pod.name] if resource == "cpu" else float(2**30)

    def pod_counter_rate(self, pod: Status, name: str, window_s: float) -> float | None:
        assert name == "container_cpu_usage_seconds_total"
        return self.pod_resource_usage(pod, "cpu")

    def pod_metric(self, pod: Status, name: str) -> float | None:
        return None


def _query(query: str) -> list[tuple[dict[str, str], float]]:
    source = PodSeries(Port())  # type: ignore[arg-type]
    return sorted(instant_vector(parse_query(query), source), key=lambda s: sorted(s[0].items()))


def test_every_running_pods_container_has_a_cpu_series_labelled_namespace_pod_container() -> None:
    """A not-ready pod's container still runs and is scraped by cAdvisor; a Pending pod's is not; a pod
    whose usage nothing models has no series."""
    assert _query('rate(container_cpu_usage_seconds_total{namespace="web"}[1m])') == [
        ({"namespace": "web", "pod": "api-0", "container": "server"}, 0.5),
        ({"namespace": "web", "pod": "api-1", "container": "server"}, 0.25),
    ]
    assert _query('sum(rate(container_cpu_usage_seconds_total{pod=~"api-.*", container="server"}[1m]))') == [
        ({}, 0.75)
    ]


def test_the_memory_working_set_is_a_gauge_per_container() -> None:
    assert _query("container_memory_working_set_bytes") == [
        (
            {
                "__name__": "container_memory_working_set_bytes",
                "namespace": "web",
                "pod": "api-0",
                "container": "server",
            },
            float(2**30),
        ),
        (
            {
                "__name__": "container_memory_working_set_bytes",
                "namespace": "web",
                "pod": "api-1",
                "container": "server",
            },
            float(2**30),
        ),
    ]


def _changes(summary: dict[str, Any]) -> list[tuple[float, float]]:
    timeline = summary["timeline"]
    out: list[tuple[float, float]] = []
    for t, replicas in zip(timeline["t_s"], timeline["replicas"]["Deployment/web/api"], strict=True):
        if not out or out[-1][1] != replicas:
            out.append((t, replicas))
    return out


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
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      threshold: "0.5"
      query: sum(rate(container_cpu_usage_seconds_total{namespace="web", container="api"}[1m]))
"""


def test_a_prometheus_trigger_on_the_cpu_counter_scales_with_the_traffic(tmp_path: Path) -> None:
    """``examples/serving/cpu-hpa.yaml`` scaled by a prometheus trigger on the Deployment's summed CPU rate
    (AverageValue 0.5 cores a replica): 100 requests/s at 10m CPU-seconds each is 1.0 core, 2 replicas.
    From 10m, 200 requests/s: the one-minute rate catches up, 1.25 cores at 615 s (``ceil(1.25 / 0.5) =
    3``), 1.75 at 645 s (4), and holds at 2.0 cores, 4 replicas (the 660 s sample)."""
    summary = simulated_text(tmp_path, EXAMPLE.read_text().replace(HPA_V1, SCALED_OBJECT))
    assert _changes(summary) == [(0.0, 2.0), (660.0, 4.0)]
    assert summary["warnings"] == []
