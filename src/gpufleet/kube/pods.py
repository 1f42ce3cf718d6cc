"""Pods and pod templates: the scheduling-relevant part of a ``PodSpec``.

Effective requests follow ``k8s.io/component-helpers/resource.PodRequests`` through
``gpufleet.model.resources`` (sidecars are init containers with ``restartPolicy: Always``;
``spec.overhead`` is added; ``pods`` is not a request, the scheduler counts pods itself);
resource rules follow the API server (``validateContainerResourceName``,
``ValidateResourceRequirements``: extended resources are whole, not negative, and a request
needs an equal limit). Defaults are the API server's (``pkg/apis/core/v1/defaults.go``):
``restartPolicy: Always``, ``schedulerName: default-scheduler``,
``terminationGracePeriodSeconds: 30``. Priority follows the ``Priority`` admission plugin
(see ``priorities``).

Fields that change where, whether or how long a pod runs but that gpufleet does not model
are warnings, and the pod keeps their paths (``Pod.not_modelled``: ``explain`` cannot judge its
placement); fields that never affect scheduling (image, command, env, probes, ...) pass
silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube import gpu_shares, node_affinity, pod_annotations, resource_lists, taints
from gpufleet.kube.dra import pod_resource_claims
from gpufleet.kube.host_ports import host_ports
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.pod_affinity import pod_affinity, spread_constraints
from gpufleet.kube.pod_level_resources import pod_level_requests
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.probes import liveness_probe
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.scheduling_gates import scheduling_gates
from gpufleet.model.images import normalized_image_name
from gpufleet.model.kubelet_events import PULL_POLICIES
from gpufleet.model.pod import DEFAULT_SCHEDULER, OwnerRef, Pod
from gpufleet.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    Resources,
    container_requests,
    is_extended,
    is_native,
    pod_requests,
)

RESTART_POLICIES = ("Always", "OnFailure", "Never")
#: ``schedutil.DefaultMilliCPURequest`` and ``DefaultMemoryRequest``: what scoring counts for a
#: container that requests no cpu or no memory
NON_MISSING_REQUESTS: Resources = {CPU: 100, MEMORY: 200 * 1024 * 1024}
SIDECAR_RESTART_POLICY = "Always"
DEFAULT_TERMINATION_GRACE_S = 30.0

#: PodSpec fields that matter to scheduling or to a pod's lifetime but are not modelled.
_UNMODELLED_SPEC = (
    "runtimeClassName",
    "hostNetwork",
    "activeDeadlineSeconds",
)
#: Volume sources that bind a PersistentVolumeClaim (VolumeBinding, VolumeZone, VolumeRestrictions).
_CLAIM_VOLUMES = ("persistentVolumeClaim", "ephemeral")
_STANDARD_CONTAINER_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
_REQUIRED_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED_AFFINITY = "preferredDuringSchedulingIgnoredDuringExecution"


def pod(
    meta: Meta,
    spec: Mapping[str, Any],
    report: Reporter,
    priorities: Priorities,
    owner: OwnerRef | None = None,
) -> Pod:
    """The pod (or template, when ``meta.name`` is empty) whose ``metadata`` and ``spec`` ``report`` is above.

    Problems go to ``report``; the pod is only meaningful when there were none.
    """
    at_spec = report.at("spec")
    warned = report.not_modelled_count
    first_container = next(iter(items(spec.get("containers"))), {})
    image = first_container.get("image")
    values = pod_annotations.read(meta.annotations, report.at("metadata"))
    container = first_container.get("name")
    pull = first_container.get("imagePullPolicy") or ""
    if pull not in ("", *PULL_POLICIES):
        at_spec.error("containers[0].imagePullPolicy", unsupported(pull, PULL_POLICIES))
    behavior = pod_annotations.behavior(
        values,
        image if isinstance(image, str) else "",
        container if isinstance(container, str) else "",
        pull if pull in PULL_POLICIES else "",
    )
    requests, scored = _requests(spec, at_spec)
    share, requests = gpu_shares.read(meta.annotations, requests, report)
    _warn_unmodelled(spec, at_spec)
    affinity = mapping(mapping(spec.get("affinity")).get("nodeAffinity"))
    affinity_path = "affinity.nodeAffinity"
    required_terms = node_affinity.required_terms(
        affinity.get(_REQUIRED_AFFINITY), at_spec, f"{affinity_path}.{_REQUIRED_AFFINITY}"
    )
    preferred_terms = node_affinity.preferred_terms(
        affinity.get(_PREFERRED_AFFINITY), at_spec, f"{affinity_path}.{_PREFERRED_AFFINITY}"
    )
    tolerations = taints.tolerations(spec.get("tolerations"), at_spec, "tolerations")
    restart_policy = spec.get("restartPolicy") or RESTART_POLICIES[0]
    if restart_policy not in RESTART_POLICIES:
        at_spec.error("restartPolicy", unsupported(restart_policy, RESTART_POLICIES))
    if meta.name and owner is None and restart_policy == "Always" and behavior.duration_s is not None:
        given = "Always" if spec.get("restartPolicy") else "Always (the default)"
        at_spec.warn(
            "restartPolicy",
            f"{given}: the kubelet restarts the container each time it exits after its "
            f"{pod_annotations.DURATION}, so the pod never completes; give a pod that runs to completion "
            "restartPolicy Never or OnFailure",
        )
    priority = priorities.resolve(spec, at_spec)
    grace = spec.get("terminationGracePeriodSeconds")
    images = (c.get("image") for c in [*items(spec.get("initContainers")), *items(spec.get("containers"))])
    return Pod(
        name=meta.name,
        namespace=meta.namespace,
        labels=dict(meta.labels),
        annotations=dict(meta.annotations),
        requests=requests,
        priority=priority.value,
        priority_class_name=priority.class_name,
        preemption_policy=priority.preemption_policy,
        scheduler_name=spec.get("schedulerName") or DEFAULT_SCHEDULER,
        node_name=spec.get("nodeName") or None,
        node_selector={k: v for k, v in mapping(spec.get("nodeSelector")).items() if isinstance(v, str)},
        required_terms=required_terms,
        preferred_terms=preferred_terms,
        tolerations=tolerations,
        restart_policy=restart_policy,
        termination_grace_s=float(grace) if grace is not None else DEFAULT_TERMINATION_GRACE_S,
        behavior=behavior,
        owner=owner,
        resource_claims=pod_resource_claims(spec, at_spec, ""),
        gpu_share=share,
        nonzero_requests={**requests, **scored},
        scheduling_gates=scheduling_gates(spec, behavior, report),
        host_ports=host_ports(spec),
        images=tuple(normalized_image_name(image) for image in images if isinstance(image, str) and image),
        pod_affinity=pod_affinity(mapping(spec.get("affinity")), at_spec, "affinity"),
        spread_constraints=spread_constraints(
            spec.get("topologySpreadConstraints"), at_spec, "topologySpreadConstraints"
        ),
        liveness_probe=liveness_probe(first_container, at_spec, "containers[0]"),
        not_modelled=report.not_modelled_below(warned),  # last: after every field above was read
    )


def _requests(spec: Mapping[str, Any], report: Reporter) -> tuple[Resources, Resources]:
    """The pod's effective requests, and the cpu and memory scoring counts (each container's missing
    request as 100m and 200Mi: ``NonMissingContainerRequests``)."""
    containers = items(spec.get("containers"))
    if not containers:
        report.error("containers", required())
    app, app_limits = [], []
    for i, c in enumerate(containers):
        effective, limits = _container(c, report, f"containers[{i}]")
        app.append(effective)
        app_limits.append(limits)
    init = []
    for i, c in enumerate(items(spec.get("initContainers"))):
        path = f"initContainers[{i}]"
        policy = c.get("restartPolicy")
        if policy is not None and policy != SIDECAR_RESTART_POLICY:
            report.error(f"{path}.restartPolicy", unsupported(policy, (SIDECAR_RESTART_POLICY,)))
        init.append((_container(c, report, path)[0], policy == SIDECAR_RESTART_POLICY))
    overhead = _resource_list(spec.get("overhead"), report, "overhead")
    own = pod_level_requests(
        spec.get("resources"), pod_requests(app, init, {}), app_limits, report.at("resources")
    )
    scored = pod_requests(app, init, overhead, NON_MISSING_REQUESTS, own)
    return pod_requests(app, init, overhead, pod_level=own), {
        r: scored.get(r, 0) for r in NON_MISSING_REQUESTS
    }


def _container(container: Mapping[str, Any], report: Reporter, path: str) -> tuple[Resources, Resources]:
    """One container's effective requests, and its limits."""
    resources = mapping(container.get("resources"))
    requests = _resource_list(resources.get("requests"), report, f"{path}.resources.requests", container=True)
    limits = _resource_list(resources.get("limits"), report, f"{path}.resources.limits", container=True)
    effective, problems = container_requests(requests, limits, f"{path}.resources")
    for problem in problems:
        report.error(problem.path, problem.message)
    return effective, limits


def _resource_list(raw: object, report: Reporter, path: str, container: bool = False) -> Resources:
    if container:
        for name in mapping(raw):
            message = _container_resource_name_problem(name)
            if message:
                report.error(f"{path}.{name}", invalid(name, message))
    return resource_lists.read(raw, report, path)


def _container_resource_name_problem(name: str) -> str:
    """``validateContainerResourceName``'s complaint about ``name``, or ''."""
    if "/" not in name:
        standard = name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-")
        return "" if standard else "must be a standard resource for containers"
    if is_native(name) or is_extended(name):
        return ""
    return "doesn't follow extended resource name standard"


def _warn_unmodelled(spec: Mapping[str, Any], report: Reporter) -> None:
    report.unmodelled_fields(spec, _UNMODELLED_SPEC)
    for i, volume in enumerate(items(spec.get("volumes"))):
        for source in _CLAIM_VOLUMES:
            if volume.get(source) is not None:
                report.not_modelled(f"volumes[{i}].{source}")
