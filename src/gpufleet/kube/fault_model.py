"""The ``FaultModel`` kind (``gpufleet.io/v1alpha1``), read into ``gpufleet.model.faults.FaultModel``.

``spec.rates``: per GPU model (``product``, the node's ``nvidia.com/gpu.product`` label; ``*`` for any),
faults per GPU-hour of each class (at most 1), camelCased (``xidGpuReset``, ``xidNodeReboot``,
``xidNodeReplace``, ``eccDoubleBit``, ``rowRemapFailure``, ``driverCrash``, ``nodeLoss``, ``nic``,
``nvlink``, ``processHang``); a class left out takes its documented default (``model.faults.DEFAULT_RATES``;
``processHang`` has none: left out, no random hangs).
``spec.faults``: faults at given times, ``{at, node, gpu, kind, outOfService}``, ``kind`` a class
(``ecc-double-bit``, ...) or ``xid-<n>`` for an XID the NVIDIA device plugin treats as fatal;
``outOfService``, only on a fault that takes the node down (``reboot``, ``lost``): how long after it a user
taints the node ``node.kubernetes.io/out-of-service`` (``model.out_of_service``).
``spec.response``: ``detection``, ``gpuReset``, ``reboot``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from gpufleet.kube.gpufleet_kinds import NonNegativeDuration
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.spec_model import NonNegativeInt, PositiveDuration, SpecModel, validate
from gpufleet.model.faults import (
    APPLICATION_XIDS,
    CLASSES,
    DEFAULT_RATES,
    NODE_DOWN,
    XIDS,
    FaultModel,
    FaultRates,
    FaultResponse,
    ScheduledFault,
)

#: at most one fault per GPU-hour: a what-if may exaggerate, but a run must end
Rate = Annotated[float, Field(ge=0, le=1)]


class RatesSpec(SpecModel):
    """``{product, <class rate>...}``: a rate per GPU-hour of each class (``model.faults.CLASSES``)."""

    product: str = "*"
    xid_gpu_reset: Rate | None = None
    xid_node_reboot: Rate | None = None
    xid_node_replace: Rate | None = None
    ecc_double_bit: Rate | None = None
    row_remap_failure: Rate | None = None
    driver_crash: Rate | None = None
    node_loss: Rate | None = None
    nic: Rate | None = None
    nvlink: Rate | None = None
    process_hang: Rate | None = None


class FaultSpec(SpecModel):
    at: NonNegativeDuration
    node: str
    kind: str
    gpu: NonNegativeInt | None = None
    out_of_service: NonNegativeDuration | None = None


class ResponseSpec(SpecModel):
    detection: NonNegativeDuration = 0.0
    gpu_reset: PositiveDuration = FaultResponse.gpu_reset_s
    reboot: PositiveDuration = FaultResponse.reboot_s


class FaultModelSpec(SpecModel):
    rates: list[RatesSpec] | None = None
    faults: list[FaultSpec] | None = None
    response: ResponseSpec | None = None


def fault_class(kind: str) -> tuple[str, int | None]:
    """The class a scheduled fault's ``kind`` names, and its XID; ValueError: not a fault."""
    if kind in CLASSES:
        return kind, None
    number = kind.removeprefix("xid-")
    if kind.startswith("xid-") and number.isdigit():
        xid = int(number)
        if xid in XIDS:
            return XIDS[xid], xid
        if xid in APPLICATION_XIDS:
            raise ValueError(invalid(kind, "an application error the NVIDIA device plugin ignores"))
    raise ValueError(unsupported(kind, [*CLASSES, *(f"xid-{x}" for x in XIDS)]))


def fault_model(meta: Meta, body: Mapping[str, Any], report: Reporter) -> FaultModel | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(FaultModelSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    rates = []
    for entry in spec.rates or ():
        given = entry.model_dump(by_alias=True)
        rates.append(
            FaultRates(
                given["product"],
                {
                    name: DEFAULT_RATES[name][0] if given[field] is None else given[field]
                    for name, (_, field) in CLASSES.items()
                    if name in DEFAULT_RATES or given[field] is not None
                },
            )
        )
    faults = []
    for i, fault in enumerate(spec.faults or ()):
        try:
            kind, xid = fault_class(fault.kind)
        except ValueError as err:
            report.error(f"spec.faults[{i}].kind", str(err))
            continue
        if fault.out_of_service is not None and CLASSES[kind][0] not in NODE_DOWN:
            report.error(
                f"spec.faults[{i}].outOfService",
                invalid(
                    body["spec"]["faults"][i]["outOfService"],
                    "outOfService needs a fault that takes the node down (response "
                    f"{' or '.join(NODE_DOWN)}); {fault.kind} has response {CLASSES[kind][0]}",
                ),
            )
            continue
        faults.append(ScheduledFault(fault.at, fault.node, kind, fault.gpu, xid, fault.out_of_service))
    r = spec.response or ResponseSpec()
    return FaultModel(
        meta.name,
        tuple(rates),
        tuple(sorted(faults, key=lambda f: f.at_s)),
        FaultResponse(r.detection, r.gpu_reset, r.reboot),
    )
