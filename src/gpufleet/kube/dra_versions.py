"""``resource.k8s.io/v1beta1`` and ``v1beta2`` DRA manifests, converted to the ``v1`` form that
``kube.dra`` reads, as the API server converts them (k8s.io/kubernetes v1.34.10
pkg/apis/resource/v1beta1/conversion.go and the generated conversions of both versions).

``v1beta2`` has the shape of ``v1``: only ``apiVersion`` changes. ``v1beta1`` differs in two places:

- a claim's request holds the fields of an exact request at its top level
  (``Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest``): when any of them is set
  (``hasAnyMainRequestFieldsSet``: ``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
  ``adminAccess``, ``tolerations``, ``capacity``) they move under ``exactly``; ``firstAvailable``
  stays where it is;
- a slice's device keeps its attributes, capacity and the rest under ``basic``
  (``Convert_v1beta1_Device_To_resource_Device``): they move up into the device.

Problems found afterwards name the ``v1`` field path, as the API server's validation (which runs
on the converted object) does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import mapping

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
#: the versions read besides ``v1``
BETA_VERSIONS = ("v1beta1", "v1beta2")
#: ``hasAnyMainRequestFieldsSet``: the fields of a v1beta1 request that form its exact request
EXACT_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


def to_v1(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as ``resource.k8s.io/v1`` (a ``v1`` document is returned as it is)."""
    version = body.get("apiVersion")
    if version not in (V1BETA1, V1BETA2):
        return dict(body)
    converted = {**body, "apiVersion": V1}
    if version == V1BETA2:
        return converted
    kind, spec = body.get("kind"), mapping(body.get("spec"))
    if kind == "ResourceClaim":
        converted["spec"] = _claim_spec(spec)
    elif kind == "ResourceClaimTemplate":
        converted["spec"] = {**spec, "spec": _claim_spec(mapping(spec.get("spec")))}
    elif kind == "ResourceSlice" and isinstance(spec.get("devices"), list):
        converted["spec"] = {**spec, "devices": [_device(d) for d in spec["devices"]]}
    return converted


def _claim_spec(spec: dict[str, Any]) -> dict[str, Any]:
    devices = mapping(spec.get("devices"))
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return spec
    return {**spec, "devices": {**devices, "requests": [_request(r) for r in requests]}}


def _request(request: object) -> object:
    if not isinstance(request, dict):
        return request
    exact = {k: request[k] for k in EXACT_REQUEST_FIELDS if _set(request.get(k))}
    out = {k: v for k, v in request.items() if k not in EXACT_REQUEST_FIELDS}
    if exact:
        out["exactly"] = exact
    return out


def _set(value: object) -> bool:
    """Set as Go sees it: a string not empty, a count not 0, a pointer or slice not nil."""
    return value is not None and value != "" and (isinstance(value, bool) or value != 0)


def _device(device: object) -> object:
    if not isinstance(device, dict):
        return device
    return {**{k: v for k, v in device.items() if k != "basic"}, **mapping(device.get("basic"))}
