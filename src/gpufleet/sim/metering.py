"""Metering: cost and GPU-hours derived from a recorded log of what was in force, and the GPUs
working now.

The simulator tells the meter what the cloud bills (the price per hour of the nodes launched and
not deleted, the GPUs they have) whenever a node is launched or deleted, and moves it on to each
event's time with the GPU-equivalents allocated then. The meter keeps a ``Reading`` each time one
of these figures (or the GPUs working) changed: a step function over the run. ``cost`` and the
``gpu_hours_*`` of ``summary.json`` are that log integrated (``totals``); nothing is added up as
the run goes.

GPUs working are kept per device: a device of a ResourceClaim shared by several working pods
counts once (DESIGN, DRA), and a GPU shared by fractional requests counts the larger of its working
shares' summed compute and summed memory, as its allocation does (``cluster.shares.unused_per_node``):
two working shares of 60 % compute and 20 % memory, and 20 % and 60 %, work 0.8 of the GPU, not 1.2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpufleet.model.gpu_share import MILLI
from gpufleet.sim.records import PodRecord


@dataclass(frozen=True)
class Reading:
    """What was in force from ``since_s`` until the next reading (or the meter's last time)."""

    since_s: float
    provisioned_gpus: float
    price_per_hour: float
    allocated_gpus: float
    working_gpus: float


@dataclass(frozen=True)
class Totals:
    cost: float
    gpu_seconds: dict[str, float]  # provisioned, allocated, working


class Meter:
    def __init__(self) -> None:
        self.readings: list[Reading] = []
        self.until_s = 0.0  # the readings cover [0, until_s)
        self.price_per_hour = 0.0
        self.provisioned_gpus = 0.0
        self.working_gpus = 0.0
        self._levels: tuple[float, float, float, float] | None = None  # the last reading's
        self._working_units: dict[tuple[str, str, str], int] = {}  # device -> pods working on it
        self._working_shares: dict[
            tuple[str, int], tuple[int, int]
        ] = {}  # shared GPU -> working (compute, memory)

    def advance(self, t: float, allocated: Callable[[], float]) -> None:
        """The clock moves on to ``t``: record what was in force since the last time."""
        if t <= self.until_s:
            return
        levels = (self.provisioned_gpus, self.price_per_hour, allocated(), self.working_gpus)
        if levels != self._levels:
            self.readings.append(Reading(self.until_s, *levels))
            self._levels = levels
        self.until_s = t

    def billing(self, t: float, allocated: Callable[[], float], price_per_hour: float, gpus: float) -> None:
        """A node was launched or deleted at ``t``: the price billed and the GPUs provisioned from now."""
        self.advance(t, allocated)
        self.price_per_hour, self.provisioned_gpus = price_per_hour, gpus

    def totals(self) -> Totals:
        """The log integrated over ``[0, until_s)``."""
        seconds = {"provisioned": 0.0, "allocated": 0.0, "working": 0.0}
        cost = 0.0
        ends = [r.since_s for r in self.readings[1:]] + [self.until_s]
        for reading, end in zip(self.readings, ends[: len(self.readings)], strict=True):
            dt = end - reading.since_s
            seconds["provisioned"] += dt * reading.provisioned_gpus
            seconds["allocated"] += dt * reading.allocated_gpus
            seconds["working"] += dt * reading.working_gpus
            cost += dt / 3600 * reading.price_per_hour
        return Totals(cost, seconds)

    def working(self, rec: PodRecord, sign: int) -> None:
        """The pod starts (``sign`` +1) or stops (-1) working: the GPU-equivalents that start or stop
        with it (a device of a ResourceClaim shared by several working pods counts once)."""
        if not rec.devices:
            self.working_gpus += sign * rec.gpu_share
            return
        change, units = 0.0, self._working_units
        node, holder = rec.node or "", "" if rec.pod.resource_claims else rec.pod.key
        for unit in rec.devices:
            if unit.milli is not None:
                change += self._share_working(node, unit.gpu, unit.milli, sign)
                continue
            key = (node, unit.id, holder)
            before = units.get(key, 0)
            if before + sign:
                units[key] = before + sign
            else:
                del units[key]
            if (before == 0) != (before + sign == 0):
                change += unit.share
        self.working_gpus += sign * change

    def _share_working(self, node: str, gpu: int, milli: tuple[int, int], sign: int) -> float:
        """A fractional share on ``gpu`` starts (``sign`` +1) or stops (-1) working: the change of its GPU's
        working part, times ``sign`` (as ``working`` adds it)."""
        compute, memory = self._working_shares.get((node, gpu), (0, 0))
        before = max(compute, memory)
        compute, memory = compute + sign * milli[0], memory + sign * milli[1]
        if compute or memory:
            self._working_shares[node, gpu] = (compute, memory)
        else:
            self._working_shares.pop((node, gpu), None)
        return sign * (max(compute, memory) - before) / MILLI
