"""The series a ``prometheus`` trigger's query reads: one per ready pod of a Deployment, ReplicaSet or
StatefulSet (a LeaderWorkerSet's), as a Prometheus that scrapes every pod would hold them (labels
``namespace``, ``pod``, and ``deployment``, ``replicaset`` or ``statefulset``; ``gpufleet.model.promql``
lists the metrics), read through the ``WorkloadPort``; and cAdvisor's usage series of every running pod's
container, ``container_cpu_usage_seconds_total`` and ``container_memory_working_set_bytes`` (labels
``namespace``, ``pod``, ``container``: the kubelet's, with no owner label), where its usage is modelled
(``WorkloadPort.pod_resource_usage``, ``pod_counter_rate``)."""

from __future__ import annotations

from collections.abc import Iterator

from gpufleet.autoscaling.promql_eval import Sample
from gpufleet.control.port import PodStatus, WorkloadPort
from gpufleet.model.promql import CONTAINER_METRICS, MEMORY_USAGE_GAUGE

#: The owner kinds whose pods are scraped, and the label that names the owner.
#: (A LeaderWorkerSet's pods are a StatefulSet's; only its leaders have metrics: ``pod_metric``.)
_SCRAPED = {"Deployment": "deployment", "ReplicaSet": "replicaset", "StatefulSet": "statefulset"}


class PodSeries:
    """A ``promql_eval.SeriesSource`` over the cluster's pods, read when a query asks."""

    def __init__(self, port: WorkloadPort) -> None:
        self.port = port

    def _scraped(self) -> Iterator[tuple[PodStatus, dict[str, str]]]:
        for status in self.port.pods.values():
            owner = status.pod.owner
            if owner is None or owner.kind not in _SCRAPED or not status.ready or status.terminating:
                continue
            pod = status.pod
            yield status, {"namespace": pod.namespace, "pod": pod.name, _SCRAPED[owner.kind]: owner.name}

    def _containers(self) -> Iterator[tuple[PodStatus, dict[str, str]]]:
        """Every running pod, with its container's cAdvisor labels (its first container's name)."""
        for status in self.port.pods.values():
            if status.phase != "Running":
                continue
            pod = status.pod
            yield status, {"namespace": pod.namespace, "pod": pod.name, "container": pod.behavior.container}

    def _series(self, metric: str) -> Iterator[tuple[PodStatus, dict[str, str]]]:
        return self._containers() if metric in CONTAINER_METRICS else self._scraped()

    def gauge(self, metric: str) -> list[Sample]:
        out: list[Sample] = []
        for status, labels in self._series(metric):
            if metric == MEMORY_USAGE_GAUGE:
                value = self.port.pod_resource_usage(status, "memory")
            else:
                value = self.port.pod_metric(status, metric)
            if value is not None:
                out.append(({"__name__": metric, **labels}, value))
        return out

    def counter_rate(self, metric: str, window_s: float) -> list[Sample]:
        out: list[Sample] = []
        for status, labels in self._series(metric):
            value = self.port.pod_counter_rate(status, metric, window_s)
            if value is not None:
                out.append(({"__name__": metric, **labels}, value))
        return out
