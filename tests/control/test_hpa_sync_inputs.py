"""The HPA controller's syncs through a port: a sync whose target has the same pods, replica counts
and metric values as the last one proposes what the last one did (the simulator keeps it rather than
working it out again), and the first sync that reads another value follows it. A proposal that reads
the time (a Resource metric's readiness rules) is never kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.control.workload_autoscalers import WorkloadAutoscalers
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricTarget,
    PodsMetricSource,
    ResourceMetricSource,
)
from gpufleet.model.pod import Pod
from gpufleet.sim.event_loop import EventLoop

TARGET = "Deployment/serving/chat"


@dataclass
class Status:
    pod: Pod
    phase: str = "Running"
    ready: bool = True
    running_s: float | None = 0.0
    working_s: float | None = 0.0
    terminating: bool = False


@dataclass
class Scaled:
    replicas: int
    active: set[str] = field(default_factory=set)


class Port:
    """What an HPA reads and changes: a Deployment's scale, its pods and one per-pod metric (a queue's
    length shared by the replicas)."""

    def __init__(self, replicas: int) -> None:
        self.deployment = Scaled(0)
        self.pods: dict[str, Status] = {}
        self.queued = 0.0
        self.scale(TARGET, replicas)

    def scale_target(self, target: str) -> Scaled | None:
        return self.deployment if target == TARGET else None

    def pod_metric(self, pod: Status, name: str) -> float | None:
        return self.queued / len(self.deployment.active) if name == "queue_length" else None

    def pod_metric_source(self, pod: Status) -> str:
        return TARGET  # the replicas share the queue

    def target_pods_version(self, target: str) -> None:
        return None  # every sync reads every pod

    def scale(self, target: str, replicas: int) -> None:
        self.deployment.replicas = replicas
        self.deployment.active = {f"serving/chat-{i}" for i in range(replicas)}
        for key in self.deployment.active:
            self.pods.setdefault(key, Status(Pod(key.split("/")[1], namespace="serving")))


def spec(metric: PodsMetricSource | ResourceMetricSource) -> HorizontalPodAutoscalerSpec:
    ref = CrossVersionObjectReference("Deployment", "chat", "apps/v1")
    return HorizontalPodAutoscalerSpec(ref, max_replicas=20, min_replicas=1, metrics=(metric,))


QUEUE = PodsMetricSource(MetricIdentifier("queue_length"), MetricTarget("AverageValue", average_value=10_000))


def test_syncs_with_the_same_inputs_hold_and_new_values_are_followed_at_the_next_sync() -> None:
    port, loop = Port(replicas=2), EventLoop()
    hpas = WorkloadAutoscalers(port, loop, [("serving/chat", spec(QUEUE))], [], [])  # type: ignore[arg-type]
    port.queued = 20.0  # 10 per replica, on target: 2 replicas stay
    hpas.start()
    scaled: list[tuple[float, int]] = []
    loop.at(100.0, 1, lambda: setattr(port, "queued", 80.0))  # 8 replicas, at most doubling per sync
    original = port.scale
    port.scale = lambda target, n: (scaled.append((loop.now, n)), original(target, n))  # type: ignore[method-assign]
    while (t := loop.peek_time()) is not None and t <= 300.0:
        loop.step()
    assert scaled == [(105.0, 4), (120.0, 8)]


def test_a_proposal_that_reads_the_time_is_never_kept() -> None:
    cpu = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=50))
    port = Port(replicas=2)
    hpas = WorkloadAutoscalers(port, EventLoop(), [("serving/chat", spec(cpu))], [], [])  # type: ignore[arg-type]
    hpas_with_queue = WorkloadAutoscalers(port, EventLoop(), [("serving/chat", spec(QUEUE))], [], [])  # type: ignore[arg-type]
    assert hpas.hpas[0].hpa.proposal_reads_time and not hpas_with_queue.hpas[0].hpa.proposal_reads_time


def test_the_pods_read_follow_a_status_changed_in_place_between_two_syncs() -> None:
    """The last sync's pods stand only while every pod reads as it did: a record changed in place (it
    turns unready, then starts terminating) shows at the next sync."""
    port = Port(replicas=2)
    hpas = WorkloadAutoscalers(port, EventLoop(), [("serving/chat", spec(QUEUE))], [], [])  # type: ignore[arg-type]
    rt, statuses = hpas.hpas[0], [port.pods[k] for k in sorted(port.deployment.active)]
    seen = [[(p.name, p.ready, p.deleting) for p in hpas._hpa_pods(rt, statuses)]]  # type: ignore[arg-type]
    seen.append([(p.name, p.ready, p.deleting) for p in hpas._hpa_pods(rt, statuses)])  # type: ignore[arg-type]
    statuses[1].ready = False
    seen.append([(p.name, p.ready, p.deleting) for p in hpas._hpa_pods(rt, statuses)])  # type: ignore[arg-type]
    statuses[1].terminating = True
    seen.append([(p.name, p.ready, p.deleting) for p in hpas._hpa_pods(rt, statuses)])  # type: ignore[arg-type]
    assert seen == [
        [("chat-0", "True", False), ("chat-1", "True", False)],
        [("chat-0", "True", False), ("chat-1", "True", False)],
        [("chat-0", "True", False), ("chat-1", "False", False)],
        [("chat-0", "True", False), ("chat-1", "False", True)],
    ]
