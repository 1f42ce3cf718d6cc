"""The scheduler's ``/metrics``, ``/healthz`` and ``/readyz`` on one HTTP port.

Metric names and labels are kube-scheduler's (``pkg/scheduler/metrics/metrics.go``), so its
dashboards and alerts read gpufleet too:

- ``scheduler_pending_pods{queue}``: pods of this scheduler not bound, by queue (``active``: to be
  tried; ``unschedulable``: tried and found no node; ``gated``: held by a PreEnqueue plugin);
- ``scheduler_schedule_attempts_total{result,profile}``: attempts by ``scheduled``,
  ``unschedulable`` or ``error``;
- ``scheduler_scheduling_attempt_duration_seconds{result,profile}``: one attempt, from the pod
  leaving the queue to its decision;
- ``scheduler_pod_scheduling_sli_duration_seconds{attempts}``: from the pod first seen pending to
  its binding, by the number of attempts it took;

and gpufleet's own: ``gpufleet_scheduler_gangs_waiting`` (PodGroups with members pending),
``gpufleet_scheduler_gangs_partly_bound``, ``gpufleet_scheduler_fragmented_gpus`` (free GPUs on nodes
where no pending whole-GPU request fits), ``gpufleet_scheduler_bindings_total{result}`` and
``gpufleet_scheduler_is_leader``.

``/healthz`` answers 200 while the process runs; ``/readyz`` once every informer has listed its
kind (kube-scheduler's readiness waits for its caches to sync the same way).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# kube-scheduler's buckets: ExponentialBuckets(0.001, 2, 15) for attempts, (0.01, 2, 20) for the SLI
ATTEMPT_BUCKETS = tuple(0.001 * 2**i for i in range(15))
SLI_BUCKETS = tuple(0.01 * 2**i for i in range(20))


class SchedulerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.pending = Gauge("scheduler_pending_pods", "Pending pods, by queue.", ["queue"], registry=r)
        self.attempts = Counter(
            "scheduler_schedule_attempts",
            "Scheduling attempts, by result and profile.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (the scheduling algorithm and binding's decision).",
            ["result", "profile"],
            buckets=ATTEMPT_BUCKETS,
            registry=r,
        )
        self.sli = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.",
            ["attempts"],
            buckets=SLI_BUCKETS,
            registry=r,
        )
        self.gangs_waiting = Gauge(
            "gpufleet_scheduler_gangs_waiting", "PodGroups with members pending.", registry=r
        )
        self.gangs_partial = Gauge(
            "gpufleet_scheduler_gangs_partly_bound",
            "PodGroups bound in part, fewer than minMember.",
            registry=r,
        )
        self.fragmented = Gauge(
            "gpufleet_scheduler_fragmented_gpus",
            "Free GPUs on nodes where no pending whole-GPU request fits.",
            registry=r,
        )
        self.bindings = Counter("gpufleet_scheduler_bindings", "Bindings, by result.", ["result"], registry=r)
        self.leader = Gauge(
            "gpufleet_scheduler_is_leader", "1 while this replica holds the Lease.", registry=r
        )
        for queue in ("active", "unschedulable", "gated"):
            self.pending.labels(queue=queue).set(0)


def serve(address: str, metrics: SchedulerMetrics, ready: Callable[[], bool]) -> ThreadingHTTPServer:
    """Serve on ``host:port`` (port 0: any free port; ``server.server_port`` says which) in a thread."""
    host, _, port = address.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/metrics":
                self._answer(200, generate_latest(metrics.registry), CONTENT_TYPE_LATEST)
            elif path in ("/healthz", "/livez"):
                self._answer(200, b"ok")
            elif path == "/readyz":
                ok = ready()
                self._answer(200 if ok else 503, b"ok" if ok else b"informers not synced")
            else:
                self._answer(404, b"not found")

        def _answer(self, code: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
