"""Node pools at run time: launching nodes through the start chain, stock, backoff, deletion.

A launch request may fail at once (a stock-out: ``stock.stockoutProbability`` per node, or
no instance left in ``stock.available``); cluster-autoscaler then backs the pool off for
5 minutes, doubling up to 30, and from 5 minutes again 3 hours after the last failure
(``utils/backoff/exponential_backoff.go``). A launched node
goes through its pool's start chain (``gpufleet.lifecycle.node_start``): it joins the
cluster when ``join`` ends, with no GPU allocatable, and its GPUs become allocatable when
``devicePlugin`` ends. Until then it counts as upcoming capacity. A pool whose scale-up still has nodes
to come ``maxNodeProvisionTime`` after it is backed off, and a node that has not joined by then removed
(``control.cluster_autoscaler_scale_up_executor``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpufleet.lifecycle.node_start import NodeStartPlan, StartStage, parse_provisioning
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.dra_slices import slices_for_node
from gpufleet.model.mig_configs import is_device_plugin_resource
from gpufleet.model.node import Node
from gpufleet.model.simulation import AutoscalerSettings, NodePool


@dataclass
class Launch:
    """A node between its launch request and GPU readiness."""

    node: Node
    requested_s: float
    plan: NodeStartPlan
    joined: bool = False
    registered_s: float | None = None  # when it joined
    for_pods: tuple[str, ...] = ()
    warm: bool = False

    @property
    def gpu_ready_after_s(self) -> float:
        return self.plan.gpu_ready_s


@dataclass
class PoolRuntime:
    """A node pool at run time (``control.port.NodeGroup``): its nodes, its launches in flight, the
    warm nodes held, its backoff."""

    pool: NodePool
    stages: tuple[StartStage, ...]
    rng: np.random.Generator
    next_index: int = 0
    nodes: set[str] = field(default_factory=set)  # launched, not deleted
    launching: dict[str, Launch] = field(default_factory=dict)
    warm: set[str] = field(default_factory=set)  # empty nodes held ready, exempt from scale-down
    backoff_until: float = 0.0
    backoff_s: float = 0.0
    last_failure_s: float | None = None
    launched_by_step: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, pool: NodePool, rng: np.random.Generator) -> PoolRuntime:
        stages = parse_provisioning(pool.provisioning) if pool.provisioning else ()
        return cls(pool, stages, rng)

    @property
    def name(self) -> str:
        return self.pool.name

    def stamp(self) -> Node:
        t = self.pool.template
        name = f"{self.pool.name}-{self.next_index}"
        self.next_index += 1
        labels = {k: v for k, v in t.labels.items() if k != "kubernetes.io/hostname"}
        return Node(
            name,
            labels,
            t.taints,
            t.unschedulable,
            dict(t.capacity),
            dict(t.allocatable),
            self.pool.name,
            dict(t.images),  # the images the template says are baked in or pre-pulled
            scale_down_disabled=t.scale_down_disabled,
            delay_deletion=t.delay_deletion,
        )

    def slices_for(self, node: str) -> list[ResourceSlice]:
        """The ResourceSlices a node of the pool publishes (``publishResourceSlices``), else none."""
        if self.pool.dra_gpus is None:
            return []
        product, count, memory = self.pool.dra_gpus
        return [slices_for_node(node, count, product, memory)]

    def has_gpus(self) -> bool:
        """Whether its nodes get device-plugin resources (GPUs, replicas or MIG instances) once ready."""
        return any(is_device_plugin_resource(r) and n > 0 for r, n in self.pool.template.allocatable.items())

    def in_stock(self, now: float) -> bool:
        """Draw whether the cloud gives an instance now (consumes one from ``available``)."""
        stock = self.pool.stock
        if stock.available is not None:
            steps = [k for k, (at, _) in enumerate(stock.available) if at <= now]
            if not steps:
                return False
            step = steps[-1]
            if self.launched_by_step.get(step, 0) >= stock.available[step][1]:
                return False
            self.launched_by_step[step] = self.launched_by_step.get(step, 0) + 1
        return not (stock.stockout_probability > 0 and self.rng.random() < stock.stockout_probability)

    def back_off(self, now: float, settings: AutoscalerSettings) -> None:
        """``exponentialBackoff.Backoff``: the first failure 5 m; a failure after the previous backoff
        ended doubles it, up to 30 m (one during it, or at its very end, keeps it: ``backoffUntil.Before``);
        the first failure more than 3 h after the last one starts again from 5 m
        (``--node-group-backoff-reset-timeout``: ``lastFailedExecution.Add(reset).Before``)."""
        recent = self.last_failure_s is not None and self.last_failure_s + settings.backoff_reset_s >= now
        if not self.backoff_s or not recent:
            self.backoff_s = settings.initial_backoff_s
        elif now > self.backoff_until:
            self.backoff_s = min(self.backoff_s * 2, settings.max_backoff_s)
        self.backoff_until = max(self.backoff_until, now + self.backoff_s)
        self.last_failure_s = now

    def backed_off(self, now: float) -> bool:
        """``BackoffStatus``: backed off until the backoff has ended, its last instant included (not
        ``backoffUntil.Before(now)``); never before its first failure."""
        return self.last_failure_s is not None and now <= self.backoff_until

    def upcoming(self) -> int:
        return len(self.launching)
