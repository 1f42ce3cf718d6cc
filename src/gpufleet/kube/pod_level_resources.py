"""A pod's own ``spec.resources`` (``PodLevelResources``: beta and on by default in Kubernetes 1.34),
read as the API server defaults and validates it, giving the pod-level requests the scheduler counts.

- Only ``cpu``, ``memory`` and ``hugepages-*`` may be named (``validatePodResourceName``,
  ``resourcehelper.IsSupportedPodLevelResource``); ``claims`` is forbidden there.
- Defaulting (``defaultPodRequests``), where pod-level limits are given: a resource the containers
  request, cpu or memory, that has no pod-level request gets the containers' aggregate request; any
  other resource with a pod-level limit and no request gets the limit as its request.
- Validation (``validateResourceRequirements``, ``validatePodResourceConsistency``): a request at most
  its limit (hugepages: equal, and a hugepages request needs its limit); hugepages need cpu or memory
  beside them; a pod-level request at least the containers' aggregate request; no container's limit
  above the pod-level limit.
- What the scheduler counts (``resourcehelper.PodRequests``): the containers' aggregate requests, with
  each pod-level request in place of the aggregate of its resource, then the overhead
  (``model.resources.pod_requests``' ``pod_level``). Scoring's non-missing container requests are
  replaced the same way.

Pod-level hugepages limits defaulted from the containers' limits (``defaultHugePagePodLimits``) are not
kept: they change no request the scheduler counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.kube import resource_lists
from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Reporter, forbidden, invalid, unsupported
from gpufleet.model.resources import (
    CPU,
    HUGEPAGES_PREFIX,
    MEMORY,
    Resources,
    container_requests,
    format_units,
    is_overcommittable,
)

#: ``resourcehelper.SupportedPodLevelResources``, as the API server lists them
SUPPORTED = (CPU, HUGEPAGES_PREFIX, MEMORY)


def supported(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory or a hugepages size."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def pod_level_requests(
    raw: object,
    aggregate: Resources,
    container_limits: Sequence[Resources],
    report: Reporter,
) -> Resources:
    """The pod-level requests of ``spec.resources`` (``raw``; ``report`` is at it) once defaulted, for
    the containers whose aggregate requests are ``aggregate`` and whose limits are ``container_limits``
    (the app containers', in order); empty where none is set."""
    resources = mapping(raw)
    if not resources:
        return {}
    if resources.get("claims") is not None:
        report.error("claims", forbidden("claims may not be set for Resources at pod-level"))
    lists = {
        field: resource_lists.read(resources.get(field), report, field) for field in ("requests", "limits")
    }
    for field, values in lists.items():
        for name in values:
            if not supported(name):
                report.error(f"{field}.{name}", unsupported(name, SUPPORTED))
    requests, limits = lists["requests"], lists["limits"]
    if limits:  # defaultPodRequests
        for name, value in aggregate.items():
            if name not in requests and supported(name) and is_overcommittable(name):
                requests[name] = value
        requests = {**{n: v for n, v in limits.items() if supported(n)}, **requests}
    _, problems = container_requests(requests, limits, "")
    for problem in problems:
        report.error(problem.path.lstrip("."), problem.message)
    named = {*requests, *limits}
    if any(n.startswith(HUGEPAGES_PREFIX) for n in named) and not named & {CPU, MEMORY}:
        report.error("", forbidden("HugePages require cpu or memory"))
    for name, value in requests.items():
        if aggregate.get(name, 0) > value:
            least = format_units(name, aggregate[name])
            detail = f"must be greater than or equal to aggregate container requests of {least}"
            report.error(f"requests.{name}", invalid(format_units(name, value), detail))
    for i, own in enumerate(container_limits):
        for name, value in own.items():
            if name in limits and value > limits[name]:
                detail = f"must be less than or equal to pod limits of {format_units(name, limits[name])}"
                report.error(f"containers[{i}].{name}.limits", invalid(format_units(name, value), detail))
    return {name: value for name, value in requests.items() if supported(name)}
