"""``autoscaling.x-k8s.io/v1`` ProvisioningRequest and the ``v1`` PodTemplates its pod sets name ->
``gpufleet.model.provisioning_request.ProvisioningRequest``.

The CRD's validation (cluster-autoscaler 1.34.5,
``apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go``): ``spec.provisioningClassName`` is required,
a DNS subdomain of at most 253 characters; ``spec.podSets`` has 1 to 32 items, each with a
``podTemplateRef.name`` (a DNS subdomain) and a ``count`` of at least 1; ``spec.parameters`` has at most 100
entries, each value a string of at most 255 characters. A pod set's PodTemplate is looked up in the
request's namespace once every document is read (cluster-autoscaler fails a request whose template is
missing, ``FailedToCreatePods``; in a scenario it is an error). ``status`` is not read: a request starts
with no conditions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter, invalid, required, too_many
from gpufleet.model.pod import Pod
from gpufleet.model.provisioning_request import PodSet, ProvisioningRequest

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SUBDOMAIN_MESSAGE = "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"
MAX_POD_SETS, MAX_PARAMETERS, MAX_PARAMETER_LENGTH, MAX_NAME_LENGTH = 32, 100, 255, 253


@dataclass(frozen=True)
class RequestSpec:
    """A ProvisioningRequest as read, its pod sets by template name (resolved by ``resolve``)."""

    name: str
    namespace: str
    class_name: str
    pod_sets: tuple[tuple[str, int], ...]
    parameters: Mapping[str, str]


def _subdomain(value: object, path: str, report: Reporter) -> str | None:
    if value is None or value == "":
        report.error(path, required())
        return None
    if not isinstance(value, str):
        return None  # the schema check reported it
    if len(value) > MAX_NAME_LENGTH:
        report.error(path, f"Too long: may not be more than {MAX_NAME_LENGTH} bytes")
        return None
    if not _SUBDOMAIN.match(value):
        report.error(path, invalid(value, _SUBDOMAIN_MESSAGE))
        return None
    return value


def request(meta: Meta, body: Mapping[str, Any], report: Reporter) -> RequestSpec | None:
    """The request's spec, validated as its CRD's OpenAPI schema does; None when it is not usable."""
    errors = report.error_count
    spec = mapping(body.get("spec"))
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    at_spec = report.at("spec")
    class_name = _subdomain(spec.get("provisioningClassName"), "provisioningClassName", at_spec)
    raw_sets = spec.get("podSets")
    sets = list(items(raw_sets))
    if raw_sets is None:
        at_spec.error("podSets", required())
    elif not sets:
        at_spec.error("podSets", invalid(raw_sets, "should have at least 1 items"))
    elif len(sets) > MAX_POD_SETS:
        at_spec.error("podSets", too_many(len(sets), MAX_POD_SETS))
    pod_sets = []
    for i, raw in enumerate(sets):
        at_set = at_spec.at(f"podSets[{i}]")
        ref = mapping(mapping(raw).get("podTemplateRef"))
        name = _subdomain(ref.get("name"), "podTemplateRef.name", at_set)
        count = mapping(raw).get("count")
        if count is None:
            at_set.error("count", required())
        elif isinstance(count, int) and not isinstance(count, bool) and count < 1:
            at_set.error("count", invalid(count, "should be greater than or equal to 1"))
        elif isinstance(count, int) and name is not None:
            pod_sets.append((name, count))
    parameters = {str(k): v for k, v in mapping(spec.get("parameters")).items()}
    if len(parameters) > MAX_PARAMETERS:
        at_spec.error("parameters", f"Too many: {len(parameters)}: must have at most {MAX_PARAMETERS} items")
    for key, value in parameters.items():
        if not isinstance(value, str):
            at_spec.error(f"parameters.{key}", invalid(value, "must be a string"))
        elif len(value) > MAX_PARAMETER_LENGTH:
            at_spec.error(f"parameters.{key}", f"Too long: may not be more than {MAX_PARAMETER_LENGTH} bytes")
    if body.get("status"):
        report.not_modelled("status", note="a ProvisioningRequest starts with no conditions")
    if report.error_count > errors or class_name is None:
        return None
    return RequestSpec(
        meta.name, meta.namespace, class_name, tuple(pod_sets), {k: str(v) for k, v in parameters.items()}
    )


def resolve(
    spec: RequestSpec, templates: Mapping[tuple[str, str], Pod], report: Reporter
) -> ProvisioningRequest | None:
    """The request with each pod set's PodTemplate (``(namespace, name)``) as its pod; an error for each
    missing one."""
    pod_sets = []
    for i, (name, count) in enumerate(spec.pod_sets):
        pod = templates.get((spec.namespace, name))
        if pod is None:
            message = f'PodTemplate "{name}" not found in namespace "{spec.namespace}"'
            report.error(f"spec.podSets[{i}].podTemplateRef.name", f"Not found: {message}")
            continue
        pod_sets.append(PodSet(name, count, pod))
    if len(pod_sets) < len(spec.pod_sets):
        return None
    return ProvisioningRequest(spec.name, spec.namespace, spec.class_name, tuple(pod_sets), spec.parameters)
