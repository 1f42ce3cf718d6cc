"""Inference traffic aimed at a Deployment, as a fluid queue (``Traffic``, ``gpufleet.io/v1alpha1``).

Requests arrive at ``rps`` (a step function of time); the Deployment's working replicas serve
``perReplicaRps`` each; what they cannot serve waits in a backlog that drains when capacity
exceeds the arrivals. A request arriving when the backlog is ``B`` and the capacity ``C`` waits
about ``B / C`` (with no capacity at all, ``B / rps``, Little's law).

As a serving system behaves, two optional bounds: ``timeoutSeconds`` ``T`` (a client or gateway
timeout): a request whose wait would exceed ``T`` gives up after ``T``, so the backlog holds at
most ``C * T`` (``rps * T`` while no replica works) and what arrives beyond that times out, as
does the part of the backlog above the bound when capacity falls; ``maxQueue`` ``Q`` (vLLM's or
Triton's bounded queue answering 503/429): a request arriving while ``Q`` wait is dropped at once.
Every request is counted once: ``requests = served + timed_out + dropped + backlog``. The wait
percentiles are over the requests that were served or timed out (a timed-out request counts the
timeout as its wait); dropped requests never waited.

Per-pod metrics, as an HPA or a ``prometheus`` trigger reads them: ``requests_per_second``
(arrivals / replicas), ``queue_length`` (backlog / replicas) and ``DCGM_FI_DEV_GPU_UTIL`` (percent
busy: served / capacity, 100 while a backlog waits), and the counter ``http_requests_total`` read
as a rate over a window (``gpufleet.model.promql``). Over the run: the simulated
DCGM_FI_DEV_GPU_UTIL averaged over the GPU-seconds of the working replicas (the pods the metrics
are attributed to), and a timeline row per sample.

Per-pod usage, as the metrics server reports it to an HPA's ``Resource`` metric, where the Traffic's
``usage`` models it (``gpufleet.model.load.TrafficUsage``): CPU cores ``idleCpu + cpuPerRequest *
served``, ``served`` being the requests per second one serving replica serves (``perReplicaRps`` while
a backlog waits, else arrivals / replicas, at most ``perReplicaRps``); memory bytes ``idleMemory +
memoryPerQueuedRequest * backlog / replicas``. A running pod that does not serve (not yet ready) uses
only the idle figures. The same usage is cAdvisor's series of the pod's container: the gauge
``container_memory_working_set_bytes`` and the counter ``container_cpu_usage_seconds_total``, read as a
rate over a window from the steps of the requests served, split evenly over the serving pods as
``http_requests_total`` is (``cpu_rate``).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

from gpufleet.model.load import Traffic

DIGITS = 6
#: One timeline row: t_s, rps, backlog, wait_s (of a request arriving then; null while no replica
#: works), replicas_working, gpu_util_pct (null while no replica works).
TIMELINE_COLUMNS = ("t_s", "rps", "backlog", "wait_s", "replicas_working", "gpu_util_pct")


def _rounded(value: float | None) -> float | None:
    if value is None or (type(value) is float and value.is_integer()):  # (a whole number rounds to itself)
        return value
    return round(value, DIGITS)


@dataclass
class TrafficState:
    spec: Traffic
    backlog: float = 0.0
    last_s: float = 0.0
    serving: int = 0
    gpus: float = 0.0  # GPUs of the working replicas
    #: requests by the seconds they waited: one entry per distinct wait (the requests that met no backlog
    #: all waited 0), not one per interval integrated, so that a long run keeps no entry per event
    waits: dict[float, float] = field(default_factory=dict)
    waited: float = 0.0  # requests in ``waits`` (summed as they came)
    requests: float = 0.0
    served: float = 0.0
    timed_out: float = 0.0
    dropped: float = 0.0
    busy_gpu_s: float = 0.0  # GPU-seconds busy serving
    gpu_s: float = 0.0  # GPU-seconds of working replicas
    timeline: list[list[float | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._times = [at for at, _ in self.spec.rps]
        self._metrics: dict[str, float | None] = {}  # per-pod metrics read since the last advance
        #: (t, requests served by t) at each advance: the steps of the CPU counter (``cpu_rate``), kept only
        #: where the Traffic's ``usage`` models cpu (nothing else reads them)
        self._served_steps: list[tuple[float, float]] = [(0.0, 0.0)]
        self._steps_read = self.spec.usage.models("cpu")

    def rps(self, t: float) -> float:
        k = bisect.bisect_right(self._times, t) - 1
        return self.spec.rps[k][1] if k >= 0 else 0.0

    @property
    def capacity(self) -> float:
        return self.serving * self.spec.per_replica_rps

    def advance(self, t: float, serving: int, gpus: float) -> None:
        """Integrate arrivals and service from the last call to ``t`` (constant in between); from
        ``t`` on, ``serving`` replicas with ``gpus`` GPUs work."""
        dt = t - self.last_s
        if dt > 0:
            self._flow(self.rps(self.last_s), dt)
            self.last_s = t
            if self._steps_read:
                self._served_steps.append((t, self.served))
        self.serving, self.gpus = serving, gpus
        if self._metrics:
            self._metrics = {}

    def until(self, t: float) -> None:
        """Integrate up to ``t`` with the replicas in force (what the last ``advance`` gave it); nothing at
        the time it was last advanced to (the per-pod metrics read since stand: nothing they read moved)."""
        if t > self.last_s:
            self.advance(t, self.serving, self.gpus)

    def _timeout_bound(self, rate: float) -> float:
        """The most that can wait without timing out: ``C * T`` (``rps * T`` with no capacity)."""
        timeout = self.spec.timeout_s
        if timeout is None:
            return math.inf
        return (self.capacity if self.capacity > 0 else rate) * timeout

    def _flow(self, rate: float, dt: float) -> None:
        """One interval of constant arrivals and capacity: the backlog moves linearly to its bound
        (or to empty) and stays there; what arrives beyond the bound is dropped or times out."""
        capacity = self.capacity
        arrived = rate * dt
        self.requests += arrived
        if not self.backlog and rate <= capacity:  # no backlog, and none builds: all served at once
            self.backlog = 0.0
            if arrived > 0:
                self._wait(0.0, arrived)
            served = arrived
        else:
            served = self._queue(rate, dt, arrived)
        self.served += served
        if capacity > 0 and self.gpus > 0:
            self.busy_gpu_s += min(1.0, served / (capacity * dt)) * self.gpus * dt
            self.gpu_s += self.gpus * dt

    def _queue(self, rate: float, dt: float, arrived: float) -> float:
        """``_flow``'s interval where a backlog waits or builds: the requests served."""
        timeout_bound = self._timeout_bound(rate)
        if self.backlog > timeout_bound:  # capacity fell: the tail of the backlog will not make it
            self.timed_out += self.backlog - timeout_bound
            self.backlog = timeout_bound
        queue_bound = math.inf if self.spec.max_queue is None else float(self.spec.max_queue)
        bound = min(timeout_bound, queue_bound)
        before, growth = self.backlog, rate - self.capacity
        if growth > 0:
            moving = min(dt, (bound - before) / growth)
        elif growth < 0:
            moving = min(dt, before / -growth)
        else:
            moving = dt
        after = min(bound, max(0.0, before + growth * moving))
        steady = dt - moving  # at the bound (arrivals beyond capacity overflow) or empty
        overflow = max(0.0, growth) * steady
        self._waited((before + after) / 2, rate * moving, rate)
        self._waited(after, rate * steady - overflow, rate)
        if overflow > 0 and queue_bound <= timeout_bound:
            self.dropped += overflow
        elif overflow > 0:
            self.timed_out += overflow
            self._wait(float(self.spec.timeout_s or 0.0), overflow)
        self.backlog = after
        return before + arrived - overflow - after

    def _waited(self, backlog: float, requests: float, rate: float) -> None:
        """``requests`` arrived at a mean ``backlog``: each waits ``backlog / C`` (``/ rps`` with no
        capacity)."""
        if requests > 0:
            self._wait(backlog / self.capacity if self.capacity > 0 else backlog / rate, requests)

    def _wait(self, wait_s: float, requests: float) -> None:
        self.waits[wait_s] = self.waits.get(wait_s, 0.0) + requests
        self.waited += requests

    def metric(self, name: str) -> float | None:
        """A per-pod metric now (each pod of the target reads the same; worked out once per advance)."""
        if name in self._metrics:
            return self._metrics[name]
        value = self._metrics[name] = self._metric(name)
        return value

    def _metric(self, name: str) -> float | None:
        n = max(self.serving, 1)
        rate = self.rps(self.last_s)
        if name == "requests_per_second":
            return rate / n
        if name == "queue_length":
            return self.backlog / n
        if name == "DCGM_FI_DEV_GPU_UTIL":
            if self.serving == 0:
                return 0.0
            busy = 1.0 if self.backlog > 0 else min(1.0, rate / self.capacity)
            return 100.0 * busy
        return None

    def served_per_replica(self) -> float:
        """Requests per second one serving replica serves now: all it can while a backlog waits, else
        its share of the arrivals (at most ``perReplicaRps``)."""
        if self.serving == 0:
            return 0.0
        if self.backlog > 0:
            return self.spec.per_replica_rps
        return min(self.rps(self.last_s), self.capacity) / self.serving

    def usage(self, resource: str, serving: bool) -> float | None:
        """A pod's usage of ``resource`` now: cores of ``cpu``, bytes of ``memory``; ``serving``: the pod
        is one of the replicas that serve. None where the Traffic's ``usage`` does not model it."""
        spec = self.spec.usage
        if not spec.models(resource):
            return None
        key = f"usage/{resource}/{serving}"
        if key in self._metrics:
            return self._metrics[key]
        if resource == "cpu":
            value = spec.idle_cpu or 0.0
            if serving:
                value += (spec.cpu_per_request or 0.0) * self.served_per_replica()
        else:
            value = spec.idle_memory or 0.0
            if serving and self.serving > 0:
                value += (spec.memory_per_queued_request or 0.0) * self.backlog / self.serving
        self._metrics[key] = value
        return value

    def _served_by(self, t: float) -> float:
        """Requests the target's replicas had served by ``t`` (linear between advances)."""
        steps = self._served_steps
        k = bisect.bisect_right(steps, (t, math.inf)) - 1
        if k < 0:
            return 0.0
        at, served = steps[k]
        if k + 1 == len(steps) or t <= at:
            return served
        end, later = steps[k + 1]
        return served + (later - served) * (t - at) / (end - at)

    def cpu_rate(self, window_s: float, running_s: float, serving: bool) -> float | None:
        """Per-second rate of the ``container_cpu_usage_seconds_total`` (cores) of a pod that has run
        since ``running_s``; ``serving``: it is one of the replicas that serve. Over the last ``window_s``
        seconds: its ``idleCpu`` for the part of the window it ran, plus, on a serving pod,
        ``cpuPerRequest`` for each request the target served in the window, split evenly over its serving
        pods (the served requests' steps, as ``counter_rate`` splits the arrivals'); the current usage when
        ``window_s`` is 0 (``irate``). None where the Traffic's ``usage`` does not model cpu."""
        spec = self.spec.usage
        if not spec.models("cpu"):
            return None
        if window_s <= 0:
            return self.usage("cpu", serving)
        start = self.last_s - window_s
        rate = (spec.idle_cpu or 0.0) * max(0.0, self.last_s - max(start, running_s)) / window_s
        if serving:
            served = self._served_by(self.last_s) - self._served_by(start)
            rate += (spec.cpu_per_request or 0.0) * served / window_s / max(self.serving, 1)
        return rate

    def sample(self, t: float) -> None:
        """A timeline row at ``t`` (after integrating up to it, ``until``)."""
        self.until(t)
        working = self.serving > 0
        wait = self.backlog / self.capacity if working else None
        util = self.metric("DCGM_FI_DEV_GPU_UTIL") if working else None
        row = [t, self.rps(t), self.backlog, wait, float(self.serving), util]
        self.timeline.append([_rounded(v) for v in row])

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
        total = self.waited
        if total <= 0:
            return None
        seen = 0.0
        ordered = sorted(self.waits.items())
        for wait, weight in ordered:
            seen += weight
            if seen >= total * p / 100:
                return wait
        return ordered[-1][0]

    def figures(self) -> dict[str, Any]:
        """The summary's ``traffic`` entry: wait percentiles, request counts, the mean simulated
        DCGM_FI_DEV_GPU_UTIL of the working replicas (null if none worked) and the timeline."""
        return {
            **{f"p{p}_wait_s": _rounded(self.percentile_wait(p)) for p in (50, 95, 99)},
            "requests": _rounded(self.requests),
            "served": _rounded(self.served),
            "timed_out": _rounded(self.timed_out),
            "dropped": _rounded(self.dropped),
            "dcgm_gpu_util_pct": _rounded(100 * self.busy_gpu_s / self.gpu_s) if self.gpu_s > 0 else None,
            "timeline": self.timeline,
        }


def mean_gpu_util_pct(states: list[TrafficState]) -> float | None:
    """The simulated DCGM_FI_DEV_GPU_UTIL averaged over the GPU-seconds of every Traffic's working
    replicas; None without Traffic or when no replica worked."""
    gpu_s = sum(s.gpu_s for s in states)
    return _rounded(100 * sum(s.busy_gpu_s for s in states) / gpu_s) if gpu_s > 0 else None
