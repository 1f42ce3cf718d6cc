"""gpufleet's own kinds (``gpufleet.io/v1alpha1``): ``Simulation`` and ``NodePool`` (DESIGN.md).

``Simulation``: ``duration``, ``seed`` and ``sampleInterval`` are modelled; ``storage``,
``registry`` and ``autoscaler`` (cluster-autoscaler's knobs, camelCased: ``scanInterval``,
``expander``, ``maxNodeProvisionTime``, ``maxNodesTotal``, ``scaleDownUnneededTime``,
``scaleDownDelayAfterAdd``, ``scaleDownUtilizationThreshold``) are validated and not
modelled yet. ``NodePool``: ``replicas`` and a Node-like ``template`` (validated against the
Kubernetes Node schema) are modelled; the loader does not stamp nodes, the simulator names
them ``<pool>-<n>``. ``min``, ``max``, ``warm``, ``pricePerHour``, ``provisioning`` (stages
``capacityWait``, ``boot``, ``driver``, ``join``, ``devicePlugin``, the last always last)
and ``stock`` are validated and not modelled yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from gpufleet.kube import nodes, objects, schema_check
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.spec_model import (
    Bandwidth,
    Distribution,
    Duration,
    Fraction01,
    NonNegativeInt,
    PositiveDuration,
    SpecModel,
    validate,
)
from gpufleet.model.simulation import NodePool, SimulationSettings

#: cluster-autoscaler's ``--expander`` values (several may be chained with commas).
EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority", "least-nodes", "grpc")
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

    @field_validator("expander")
    @classmethod
    def _known_expanders(cls, value: str | None) -> str | None:
        for name in (value or "").split(","):
            if name not in EXPANDERS:
                raise ValueError(unsupported(name, EXPANDERS))
        return value


class SimulationSpec(SpecModel):
    duration: PositiveDuration | None = None
    seed: NonNegativeInt = 0
    sample_interval: PositiveDuration = 10.0
    storage: Storage | None = None
    registry: ImageRegistry | None = None
    autoscaler: Autoscaler | None = None


class Provisioning(SpecModel):
    """The node start chain's stages, in the order they happen."""

    capacity_wait: Distribution | None = None
    boot: Distribution | None = None
    driver: Distribution | None = None
    join: Distribution | None = None
    device_plugin: Distribution | None = None

    @model_validator(mode="before")
    @classmethod
    def _device_plugin_last(cls, data: Any) -> Any:
        if isinstance(data, dict) and "devicePlugin" in data and list(data)[-1] != "devicePlugin":
            raise ValueError(invalid(list(data), "devicePlugin (GPUs allocatable) must be the last stage"))
        return data


class StockAvailability(SpecModel):
    at: Duration
    count: NonNegativeInt


class Stock(SpecModel):
    stockout_probability: Fraction01 | None = None
    available: list[StockAvailability] | None = None


class NodePoolSpec(SpecModel):
    replicas: NonNegativeInt = 0
    template: dict[str, Any]
    min: NonNegativeInt | None = None
    max: NonNegativeInt | None = None
    warm: NonNegativeInt | None = None
    price_per_hour: Annotated[float, Field(ge=0)] | None = None
    provisioning: Provisioning | None = None
    stock: Stock | None = None


_SIMULATION_NOT_MODELLED = ("storage", "registry", "autoscaler")
_POOL_NOT_MODELLED = ("min", "max", "warm", "pricePerHour", "provisioning", "stock")


def simulation(body: Mapping[str, Any], report: Reporter) -> SimulationSettings:
    spec = validate(SimulationSpec, body.get("spec") or {}, report, "spec") or SimulationSpec()
    report.unmodelled_fields(spec.given(), _SIMULATION_NOT_MODELLED, "spec", yet=True)
    return SimulationSettings(spec.duration, spec.seed, spec.sample_interval)


def node_pool(meta: Meta, body: Mapping[str, Any], report: Reporter) -> NodePool | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(NodePoolSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    report.unmodelled_fields(spec.given(), _POOL_NOT_MODELLED, "spec", yet=True)
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
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
    return NodePool(meta.name, template, spec.replicas)
