"""The record of ``gpufleet describe node``'s own part, built from what the source holds: the node's GPUs
as gpufleet models them and, for each pending pod, what keeps it off this node (``report.describe_node_gpus``
prints it).

The devices follow ``gpus.devices.NodeDevices`` (what GPU Feature Discovery and the NVIDIA device plugin
put on the node): one row a unit the device plugin hands out -- a whole GPU, a time-slicing or MPS
replica, a MIG instance -- with the pod holding it, and one a fractional share (KAI, HAMi) on the GPU
that carries it. A kubectl dump does not say which device a pod holds (the kubelet's device manager
keeps that), a summary.json only the devices of the pods it lists: there the counts are given, and the
device rows where known. Why a pending pod is not here: what ``explain`` works out for this node
(``kube.explain.this_node``), beside kube-scheduler's message for the whole cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.gpus.devices import NodeDevices
from gpufleet.report._format import human_bytes

#: the labels GPU Feature Discovery puts on a node naming its GPU model
PRODUCT_LABEL = "nvidia.com/gpu.product"


def ledger_gpus(devices: NodeDevices, labels: Mapping[str, str]) -> dict[str, Any]:
    """The node's devices as the simulation's device ledger holds them at the end of the run."""
    shared_gpus = set(devices.slot_gpu.values())
    rows = []
    for resource, units in sorted(devices.units.items()):
        for u in units:
            holder = devices.taken.get(u.id)
            state = (
                "unhealthy"
                if u.id in devices.unhealthy
                else "held"
                if holder
                else "shares"
                if u.gpu in shared_gpus
                else "free"
            )
            holders = (
                sorted(devices.holders_of_gpu(u.gpu)) if state == "shares" else [holder] if holder else []
            )
            rows.append(_device(u.id, resource, u.gpu, u.share, holders, state))
    for pod, units in sorted(devices.shared.items()):
        rows += [_device(u.id, "share", u.gpu, u.share, [pod], "held") for u in units]
    whole = [r for r in rows if r["resource"] != "share"]
    return {
        "model": labels.get(PRODUCT_LABEL),
        "memory_per_gpu": None if devices.memory_bytes is None else human_bytes(devices.memory_bytes),
        "sharing": devices.sharing,
        "gpus": devices.gpus,
        "units": len(whole),
        "units_free": sum(r["state"] == "free" for r in whole),
        "devices": rows,
        "note": None,
    }


def _device(
    unit: str, resource: str, gpu: int, share: float, held_by: list[str], state: str
) -> dict[str, Any]:
    return {
        "device": unit,
        "resource": resource,
        "gpu": None if gpu < 0 else gpu,  # a MIG instance: gpufleet ties it to no GPU index
        "share": round(share, 6),
        "held_by": held_by,
        "state": state,
    }


def counted_gpus(
    devices: NodeDevices | None,
    labels: Mapping[str, str] | None,
    units: float | None,
    held: Sequence[tuple[str, float, Sequence[str]]],
    note: str,
) -> dict[str, Any]:
    """A source without the device ledger: the node's devices as its labels and allocatable describe them
    (None where the source holds neither), the units it advertises, the pods holding some
    (``(pod, units, devices)``), and ``note``: what the source does not say."""
    taken = sum(count for _, count, _ in held)
    return {
        "model": None if labels is None else labels.get(PRODUCT_LABEL),
        "memory_per_gpu": None
        if devices is None or devices.memory_bytes is None
        else human_bytes(devices.memory_bytes),
        "sharing": None if devices is None else devices.sharing,
        "gpus": units if devices is None else devices.gpus,
        "units": units,
        "units_free": None if units is None else round(units - taken, 6),
        "devices": [
            {"device": ", ".join(names) or None, "held_by": [pod], "gpus": count}
            for pod, count, names in held
        ],
        "note": note,
    }


def pending_row(
    pod: str,
    gpus: float,
    here: Mapping[str, Any] | None,
    message: str | None,
    hints: Sequence[str],
    placed_here: bool = False,
) -> dict[str, Any]:
    """A pending pod: the GPUs it asks for, what would make it fit here (``explain.this_node``: a
    filter's reason where it rules the node out, else ``needs`` and ``evict``; None where gpufleet cannot
    say), whether gpufleet would place it here now, the scheduler's message for the whole cluster and
    gpufleet's hints."""
    return {
        "pod": pod,
        "gpus": gpus,
        "needs_here": None if here is None else list(here["needs"]),
        "ruled_out_here": bool(here and here["ruled_out"]),
        "would_free_it": [] if here is None else list(here["evict"]),
        "placed_here_now": placed_here,
        "message": message,
        "hints": list(hints),
    }
