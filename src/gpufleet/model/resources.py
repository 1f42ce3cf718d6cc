"""Resource lists in canonical integer units, and a pod's effective requests.

Units: ``cpu`` in millicores, ``memory`` / ``ephemeral-storage`` / ``hugepages-*`` in bytes,
``pods`` and extended resources (``nvidia.com/gpu``) as counts. Quantities are rounded up
as ``resource.Quantity.MilliValue()`` / ``Value()`` do.

The effective request of a pod is computed as Kubernetes does
(``k8s.io/component-helpers/resource.PodRequests``): the sum over app containers and
restartable (sidecar) init containers, then the max with each ordinary init container
(plus the sidecars started before it), plus ``spec.overhead``. Extended resources follow
the API server's validation (``pkg/apis/core/validation``): whole numbers, not negative,
and when both are given the request equals the limit; a limit alone sets the request.

A value is at most ``MAX_UNITS`` (2^53, 8 PiB of memory) in its canonical unit: the API server takes
larger quantities, but no node or pod has that much, and the node columns (int64) must hold sums of
them without overflowing (a gpufleet bound).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from gpufleet.model.label_syntax import qualified_name_problems
from gpufleet.model.quantity import QuantityError, parse_quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
GPU = "nvidia.com/gpu"
#: The largest value of a resource, in its canonical unit (sums of many stay within int64).
MAX_UNITS = 2**53
#: ``v1.DefaultResourceRequestsPrefix``, ``v1.ResourceHugePagesPrefix``,
#: ``v1.ResourceAttachableVolumesPrefix``
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

#: A resource list in canonical integer units.
Resources = dict[str, int]


def is_native(name: str) -> bool:
    """``v1helper.IsNativeResource``: unprefixed (``cpu``), or in a ``kubernetes.io/`` domain
    (``IsPrefixedNativeResource``: the name contains ``kubernetes.io/``, so ``kubernetes.io/x`` and
    ``example.kubernetes.io/x`` alike)."""
    return "/" not in name or "kubernetes.io/" in name


@cache
def is_extended(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: not native, not a quota name (``requests.``), and a
    qualified name once ``requests.`` is put before it (e.g. ``nvidia.com/gpu``)."""
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not qualified_name_problems(REQUESTS_PREFIX + name)


def is_scalar(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages, prefixed native or attachable volumes
    (what resource scoring leaves out when the pod does not request it)."""
    return (
        is_extended(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or "kubernetes.io/" in name
        or name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    )


def is_overcommittable(name: str) -> bool:
    """``helper.IsOvercommitAllowed``: only native resources other than hugepages may have a request
    below the limit."""
    return is_native(name) and not name.startswith(HUGEPAGES_PREFIX)


def to_units(name: str, quantity: Fraction) -> int:
    """Convert a parsed quantity to the canonical integer unit of ``name`` (rounding up)."""
    if name == CPU:
        return math.ceil(quantity * 1000)
    return math.ceil(quantity)


def format_units(name: str, value: int | float) -> str:
    """Render a canonical value the way a user writes it (``1500m``, ``64Gi``, ``8``)."""
    if name == CPU:
        return f"{value / 1000:g}" if value % 1000 == 0 else f"{value:g}m"
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith(HUGEPAGES_PREFIX):
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value >= factor and value % factor == 0:
                return f"{int(value // factor)}{suffix}"
        return f"{value:g}"
    return f"{value:g}"


@dataclass(frozen=True)
class ResourceProblem:
    """A field of a resource list that the API server would reject."""

    path: str
    message: str


def parse_resource_list(
    raw: Mapping[str, object] | None, path: str
) -> tuple[Resources, list[ResourceProblem]]:
    """Parse ``{"cpu": "500m", "nvidia.com/gpu": 1}`` into canonical units, collecting problems."""
    out: Resources = {}
    problems: list[ResourceProblem] = []
    for name, value in (raw or {}).items():
        field = f"{path}.{name}"
        try:
            quantity = parse_quantity(value)
        except QuantityError as exc:
            problems.append(ResourceProblem(field, str(exc)))
            continue
        if quantity < 0:
            problems.append(
                ResourceProblem(field, f"Invalid value: {value!r}: must be greater than or equal to 0")
            )
            continue
        if is_extended(name) and quantity.denominator != 1:
            problems.append(ResourceProblem(field, f"Invalid value: {value!r}: must be an integer"))
            continue
        units = to_units(name, quantity)
        if units > MAX_UNITS:
            unit = (
                "millicores" if name == CPU else "bytes" if name in (MEMORY, EPHEMERAL_STORAGE) else "units"
            )
            problems.append(
                ResourceProblem(field, f"Invalid value: {value!r}: must be at most 2^53 (in {unit})")
            )
            continue
        out[name] = units
    return out, problems


@dataclass(frozen=True)
class ContainerResources:
    """One container's requests and limits, already in canonical units."""

    requests: Resources
    limits: Resources
    sidecar: bool = False


def container_requests(
    requests: Resources, limits: Resources, path: str
) -> tuple[Resources, list[ResourceProblem]]:
    """Effective requests of one container: a limit alone sets the request (API defaulting)."""
    problems: list[ResourceProblem] = []
    effective = dict(requests)
    for name, limit in limits.items():
        if name not in effective:
            effective[name] = limit
        elif not is_overcommittable(name) and effective[name] != limit:
            problems.append(
                ResourceProblem(
                    f"{path}.requests.{name}",
                    f"Invalid value: {effective[name]}: must be equal to {name} limit of {limit}",
                )
            )
        elif effective[name] > limit:
            problems.append(
                ResourceProblem(
                    f"{path}.requests.{name}",
                    f"Invalid value: {format_units(name, effective[name])}: must be less than or equal to "
                    f"{name} limit of {format_units(name, limit)}",
                )
            )
    for name in requests:
        if not is_overcommittable(name) and name not in limits:
            problems.append(
                ResourceProblem(
                    f"{path}.limits", "Forbidden: Limit must be set for non overcommitable resources"
                )
            )
    return effective, problems


def add(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    out = dict(a)
    for name, value in b.items():
        out[name] = out.get(name, 0) + value
    return out


def maximum(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    out = dict(a)
    for name, value in b.items():
        out[name] = max(out.get(name, 0), value)
    return out


def pod_requests(
    containers: Iterable[Resources],
    init_containers: Iterable[tuple[Resources, bool]],
    overhead: Resources,
    non_missing: Resources | None = None,
    pod_level: Resources | None = None,
) -> Resources:
    """Effective pod requests as ``PodRequests`` computes them (sidecar-aware); ``non_missing``
    (``NonMissingContainerRequests``) stands in for each container's requests it lacks (a request
    written as 0 stays 0), as scoring asks for 100m cpu and 200Mi memory; ``pod_level`` (the pod's
    own ``spec.resources`` requests) replaces the containers' aggregate of each resource it names,
    before the overhead is added."""
    if non_missing:
        containers = [{**non_missing, **c} for c in containers]
        init_containers = [({**non_missing, **c}, sidecar) for c, sidecar in init_containers]
    total: Resources = {}
    for req in containers:
        total = add(total, req)
    sidecars: Resources = {}
    init_peak: Resources = {}
    for req, is_sidecar in init_containers:
        if is_sidecar:
            sidecars = add(sidecars, req)
            init_peak = maximum(init_peak, sidecars)
        else:
            init_peak = maximum(init_peak, add(req, sidecars))
    total = maximum(add(total, sidecars), init_peak)
    total = add({**total, **(pod_level or {})}, overhead)
    return {name: value for name, value in total.items() if value}


def native_first(names: Iterable[str]) -> list[str]:
    """Order resource names as NodeResourcesFit checks them: pods, cpu, memory, storage, then scalars."""
    order = {name: i for i, name in enumerate((PODS, CPU, MEMORY, EPHEMERAL_STORAGE))}
    return sorted(set(names), key=lambda n: (order.get(n, len(order)), n))
