"""Inference traffic aimed at a Deployment, as a fluid queue (``Traffic``, ``gpufleet.io/v1alpha1``).

Requests arrive at ``rps`` (a step function of time); the Deployment's working replicas serve
``perReplicaRps`` each; what they cannot serve waits in a backlog that drains when capacity
exceeds the arrivals. A request arriving when the backlog is ``B`` and the capacity ``C`` waits
about ``B / C`` (with no capacity at all, ``B / rps``, Little's law). Per-pod metrics, as an
HPA or a ``prometheus`` trigger reads them: ``requests_per_second`` (arrivals / replicas),
``queue_length`` (backlog / replicas) and ``DCGM_FI_DEV_GPU_UTIL`` (percent busy: served / capacity,
100 while a backlog waits), and the counter ``http_requests_total`` read as a rate over a window
(``gpufleet.model.promql``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from gpufleet.model.load import Traffic


@dataclass
class TrafficState:
    spec: Traffic
    backlog: float = 0.0
    last_s: float = 0.0
    serving: int = 0
    latencies: list[tuple[float, float]] = field(default_factory=list)  # (wait seconds, requests)

    def __post_init__(self) -> None:
        self._times = [at for at, _ in self.spec.rps]

    def rps(self, t: float) -> float:
        k = bisect.bisect_right(self._times, t) - 1
        return self.spec.rps[k][1] if k >= 0 else 0.0

    def advance(self, t: float, serving: int) -> None:
        """Integrate arrivals and service from the last call to ``t`` (constant in between)."""
        dt = t - self.last_s
        if dt > 0:
            rate = self.rps(self.last_s)
            capacity = self.serving * self.spec.per_replica_rps
            before = self.backlog
            self.backlog = max(0.0, before + (rate - capacity) * dt)
            if rate > 0:
                mean_backlog = (before + self.backlog) / 2
                wait = mean_backlog / capacity if capacity > 0 else mean_backlog / rate
                self.latencies.append((wait, rate * dt))
            self.last_s = t
        self.serving = serving

    def metric(self, name: str) -> float | None:
        n = max(self.serving, 1)
        rate = self.rps(self.last_s)
        if name == "requests_per_second":
            return rate / n
        if name == "queue_length":
            return self.backlog / n
        if name == "DCGM_FI_DEV_GPU_UTIL":
            if self.serving == 0:
                return 0.0
            busy = 1.0 if self.backlog > 0 else min(1.0, rate / (self.serving * self.spec.per_replica_rps))
            return 100.0 * busy
        return None

    def arrivals(self, start_s: float, end_s: float) -> float:
        """Requests that arrived between ``start_s`` and ``end_s`` (the integral of the rps steps)."""
        total, t = 0.0, start_s
        k = bisect.bisect_right(self._times, t)
        while t < end_s:
            step_end = self._times[k] if k < len(self._times) else end_s
            until = min(step_end, end_s)
            total += self.rps(t) * (until - t)
            t, k = until, k + 1
        return total

    def counter_rate(self, name: str, window_s: float) -> float | None:
        """Per-pod per-second rate of the counter ``http_requests_total`` (the requests that reached
        the Deployment, split evenly over its serving pods): over the last ``window_s`` seconds, or
        the current one when ``window_s`` is 0 (``irate``, the last two scrapes)."""
        if name != "http_requests_total":
            return None
        n = max(self.serving, 1)
        if window_s <= 0:
            return self.rps(self.last_s) / n
        return self.arrivals(self.last_s - window_s, self.last_s) / window_s / n

    def percentile_wait(self, p: float) -> float | None:
        """The wait that ``p`` percent of requests did not exceed (request-weighted)."""
        total = sum(w for _, w in self.latencies)
        if total <= 0:
            return None
        seen = 0.0
        for wait, weight in sorted(self.latencies):
            seen += weight
            if seen >= total * p / 100:
                return wait
        return sorted(self.latencies)[-1][0]
