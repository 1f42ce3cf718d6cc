"""gpufleet's own kinds (``gpufleet.io/v1alpha1``): ``Simulation`` and ``NodePool`` (DESIGN.md).

``Simulation``: ``duration``, ``seed``, ``sampleInterval``, ``storage.bandwidth``,
``registry.bandwidth`` and ``autoscaler``, cluster-autoscaler's flags camelCased
(``scanInterval``, ``expander``, ``maxNodeProvisionTime``, ``maxNodesTotal``,
``scaleDownUnneededTime``, ``scaleDownDelayAfterAdd``, ``scaleDownUtilizationThreshold``,
``initialNodeGroupBackoffDuration``, ``maxNodeGroupBackoffDuration``), with upstream's
defaults. ``NodePool``: ``replicas``, a Node-like ``template`` (validated against the
Kubernetes Node schema), ``min``, ``max``, ``warm``, ``pricePerHour``, ``provisioning``
(the start chain's stages in order, read by ``gpufleet.lifecycle.node_start``) and
``stock``. The loader does not stamp nodes: the simulator names them ``<pool>-<n>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import Field, field_validator

from gpufleet.autoscaling.expanders import EXPANDERS
from gpufleet.kube import nodes, objects, schema_check
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.spec_model import (
    Bandwidth,
    Duration,
    Fraction01,
    NonNegativeInt,
    PositiveDuration,
    SpecModel,
    validate,
)
from gpufleet.lifecycle.node_start import parse_provisioning
from gpufleet.model.simulation import AutoscalerSettings, NodePool, SimulationSettings, Stock

NODE_DEFINITION = "io.k8s.api.core.v1.Node"
_HOSTNAME_LABEL = "kubernetes.io/hostname"


class Storage(SpecModel):
    bandwidth: Bandwidth


class ImageRegistry(SpecModel):
    bandwidth: Bandwidth


class Autoscaler(SpecModel):
    scan_interval: PositiveDuration | None = None
    expander: str | None = None
    max_node_provision_time: PositiveDuration | None = None
    max_nodes_total: NonNegativeInt | None = None
    scale_down_unneeded_time: Duration | None = None
    scale_down_delay_after_add: Duration | None = None
    scale_down_utilization_threshold: Fraction01 | None = None
    initial_node_group_backoff_duration: Duration | None = None
    max_node_group_backoff_duration: Duration | None = None

    @field_validator("expander")
    @classmethod
    def _known_expanders(cls, value: str | None) -> str | None:
        for name in (value or "").split(","):
            if name.strip() not in EXPANDERS:
                raise ValueError(unsupported(name, EXPANDERS))
        return value

    def settings(self) -> AutoscalerSettings:
        """These knobs over cluster-autoscaler's defaults."""
        given: dict[str, Any] = {
            "scan_interval_s": self.scan_interval,
            "expander": self.expander,
            "max_node_provision_time_s": self.max_node_provision_time,
            "max_nodes_total": self.max_nodes_total,
            "scale_down_unneeded_time_s": self.scale_down_unneeded_time,
            "scale_down_delay_after_add_s": self.scale_down_delay_after_add,
            "scale_down_utilization_threshold": self.scale_down_utilization_threshold,
            "initial_backoff_s": self.initial_node_group_backoff_duration,
            "max_backoff_s": self.max_node_group_backoff_duration,
        }
        return replace(AutoscalerSettings(), **{k: v for k, v in given.items() if v is not None})


class SimulationSpec(SpecModel):
    duration: PositiveDuration | None = None
    seed: NonNegativeInt = 0
    sample_interval: PositiveDuration = 10.0
    storage: Storage | None = None
    registry: ImageRegistry | None = None
    autoscaler: Autoscaler | None = None


class StockAvailability(SpecModel):
    at: Duration
    count: NonNegativeInt


class StockSpec(SpecModel):
    stockout_probability: Fraction01 = 0.0
    available: list[StockAvailability] | None = None


class NodePoolSpec(SpecModel):
    replicas: NonNegativeInt = 0
    template: dict[str, Any]
    min: NonNegativeInt = 0
    max: NonNegativeInt | None = None
    warm: NonNegativeInt = 0
    price_per_hour: Annotated[float, Field(ge=0)] = 0.0
    provisioning: dict[str, Any] | None = None
    stock: StockSpec | None = None

    @field_validator("provisioning")
    @classmethod
    def _stages(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            parse_provisioning(value)  # the simulator's own reading: stage names, order, durations
        return value


def simulation(body: Mapping[str, Any], report: Reporter) -> SimulationSettings:
    spec = validate(SimulationSpec, body.get("spec") or {}, report, "spec") or SimulationSpec()
    defaults = SimulationSettings()
    return SimulationSettings(
        duration_s=spec.duration,
        seed=spec.seed,
        sample_interval_s=spec.sample_interval,
        autoscaler=spec.autoscaler.settings() if spec.autoscaler else defaults.autoscaler,
        storage_bandwidth=spec.storage.bandwidth if spec.storage else defaults.storage_bandwidth,
        registry_bandwidth=spec.registry.bandwidth if spec.registry else defaults.registry_bandwidth,
    )


def node_pool(meta: Meta, body: Mapping[str, Any], report: Reporter) -> NodePool | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(NodePoolSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    if spec.max is not None and spec.min > spec.max:
        report.error("spec.min", invalid(spec.min, f"must be less than or equal to max ({spec.max})"))
    if spec.max is not None and spec.replicas > spec.max:
        report.error(
            "spec.replicas", invalid(spec.replicas, f"must be less than or equal to max ({spec.max})")
        )
    at_template = report.at("spec.template")
    schema_check.check(spec.template, NODE_DEFINITION, at_template)
    template_meta = objects.meta(spec.template, namespaced=False)
    template = nodes.node(template_meta, spec.template, at_template, name=meta.name)
    if _HOSTNAME_LABEL not in template_meta.labels:
        del template.labels[_HOSTNAME_LABEL]  # each stamped node gets its own name
    return NodePool(
        meta.name,
        template,
        spec.replicas,
        min=spec.min,
        max=spec.max,
        warm=spec.warm,
        price_per_hour=spec.price_per_hour,
        provisioning=tuple((spec.provisioning or {}).items()),
        stock=_stock(spec.stock),
    )


def _stock(spec: StockSpec | None) -> Stock:
    if spec is None:
        return Stock()
    available = (
        tuple((step.at, step.count) for step in spec.available) if spec.available is not None else None
    )
    return Stock(spec.stockout_probability, available)
