"""``resource.k8s.io/v1`` manifests (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)
into ``gpufleet.model.dra``, and ResourceSlices generated from GPU facts.

The manifests are assumed schema-checked already (``kubernetes_validate`` ships the 1.34 schemas of
``resource.k8s.io/v1``; see ``gpufleet.kube.schema_check``). What the schema cannot say is checked here as
kubernetes ``pkg/apis/resource/validation`` does: a request has exactly one of ``exactly`` and
``firstAvailable``; ``allocationMode`` is ``ExactCount`` (default, ``count`` default 1, > 0) or ``All`` (no
``count``; a ``count`` of 0 is one not given, as in the API's ``omitempty`` int64); a slice has exactly one
of ``nodeName``, ``nodeSelector``, ``allNodes``, ``perDeviceNodeSelection``; attribute values have exactly
one of bool, int, string, version; device names are unique in a slice; CEL selectors compile
(``gpufleet.gpus.dra.cel``, with the Kubernetes ``quantity``/``semver`` libraries of
``k8s.io/apiserver/pkg/cel/library``).

Prioritized lists (``firstAvailable``, DRAPrioritizedList, beta and on by default in 1.34) are read as
``validateDeviceRequest`` checks them: 1 to 8 subrequests with unique names, each checked as an
exact request is. ``constraints`` with ``matchAttribute`` are read (``validateDeviceConstraint``:
their ``requests`` name a request, or one subrequest as ``request/subrequest``) and honoured by the
allocator. ``exactly.adminAccess`` (DRAAdminAccess, beta and on in 1.34) is read; a subrequest has no
such field (``DeviceSubRequest``), so one there is an error; the namespace's
``resource.kubernetes.io/admin-access: "true"`` label (``AuthorizedForAdmin``) is checked where Namespace
documents are read (``gpufleet.kube.load``). A slice's ``nodeSelector`` (network-attached devices) is
read as ``validateResourceSliceSpec`` checks it: a valid ``NodeSelector`` (``ValidateNodeSelector``,
``gpufleet.kube.node_affinity``) with exactly one term. An allocation's ``nodeSelector`` and its
results' ``adminAccess`` are read from a claim's status. Not modelled, refused as errors because
ignoring them would change which devices a pod gets: ``distinctAttribute`` constraints, request
``capacity`` (consumable capacity), ``perDeviceNodeSelection`` slices and a device's ``nodeName``,
``nodeSelector``, ``allNodes`` (behind DRAPartitionableDevices, alpha and off in 1.34),
``sharedCounters``/``consumesCounters`` (partitionable devices). Ignored with a warning:
``config`` (opaque driver parameters), ``tolerations`` and device ``taints``.

``gpufleet.model.dra_slices.slices_for_node`` publishes a node's GPUs as the NVIDIA DRA driver
(``gpu.nvidia.com``, github.com/NVIDIA/k8s-dra-driver-gpu) does: one pool named after the node,
devices ``gpu-0``, ``gpu-1``..., attributes ``type``, ``uuid``, ``index``, ``minor``,
``productName``, ``brand``, ``architecture``, ``cudaComputeCapability``, ``driverVersion``,
``cudaDriverVersion`` (the last three are versions) and capacity ``memory``. See the DRA docs
page, https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from gpufleet.kube.node_affinity import required_terms
from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import (
    Reporter,
    duplicate,
    forbidden,
    invalid,
    required,
    too_many,
    unsupported,
)
from gpufleet.model.dra import (
    ALLOCATION_MODES,
    EXACT_COUNT,
    FIRST_AVAILABLE_MAX_SIZE,
    AllocationResult,
    AttributeValue,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    VersionValue,
)
from gpufleet.model.node_selector import node_selector_terms
from gpufleet.model.pod import SelectorTerm
from gpufleet.model.quantity import QuantityError, parse_quantity

GROUP_VERSION = "resource.k8s.io/v1"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
_DEFAULT_NAMESPACE = "default"
_NOT_A_REQUEST = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)


def _selectors(raw: object, report: Reporter, path: str) -> tuple[str, ...]:
    from gpufleet.gpus.dra.cel import validate_selector

    out = []
    for i, selector in enumerate(items(raw)):
        where = f"{path}[{i}].cel.expression"
        expression = mapping(selector.get("cel")).get("expression")
        if not isinstance(expression, str) or not expression:
            report.error(where, required())
            continue
        problem = validate_selector(expression)
        if problem is not None:
            report.error(where, invalid(expression, f"compilation failed: {problem}"))
            continue
        out.append(expression)
    return tuple(out)


def _name(body: Mapping[str, Any], report: Reporter) -> str:
    name = mapping(body.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        report.error("metadata.name", required("name or generateName is required"))
        return ""
    return name


def _namespace(body: Mapping[str, Any]) -> str:
    namespace = mapping(body.get("metadata")).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else _DEFAULT_NAMESPACE


def device_class(body: Mapping[str, Any], report: Reporter) -> DeviceClass | None:
    """A ``DeviceClass`` manifest; ``None`` when it has errors (reported)."""
    errors = report.error_count
    spec = mapping(body.get("spec"))
    selectors = _selectors(spec.get("selectors"), report, "spec.selectors")
    if spec.get("config"):
        report.not_modelled("spec.config", note="opaque driver configuration does not affect allocation")
    if spec.get("extendedResourceName"):
        report.not_modelled("spec.extendedResourceName", yet=True)
    name = _name(body, report)
    return None if report.error_count > errors else DeviceClass(name, selectors)


def _requests(spec: Mapping[str, Any], report: Reporter, path: str) -> tuple[DeviceRequest, ...]:
    devices = mapping(spec.get("devices"))
    if devices.get("config"):
        report.not_modelled(f"{path}.devices.config", note="opaque driver configuration")
    out = []
    for name, raw, where in _named(items(devices.get("requests")), report, f"{path}.devices.requests"):
        request = _request(name, raw, report, where)
        if request is not None:
            out.append(request)
    return tuple(out)


def _named(raws: list[dict[str, Any]], report: Reporter, path: str) -> list[tuple[str, dict[str, Any], str]]:
    """Requests or subrequests with their names (``validateSet`` keyed by ``name``): a missing or
    repeated name is an error and the item is left out."""
    out = []
    seen: set[str] = set()
    for i, raw in enumerate(raws):
        where = f"{path}[{i}]"
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            report.error(f"{where}.name", required())
        elif name in seen:
            report.error(f"{where}.name", duplicate(name))
        else:
            seen.add(name)
            out.append((name, raw, where))
    return out


def _request(name: str, raw: Mapping[str, Any], report: Reporter, where: str) -> DeviceRequest | None:
    """``validateDeviceRequest``: exactly one of ``exactly`` and ``firstAvailable``."""
    has_exactly, has_first = bool(raw.get("exactly")), bool(raw.get("firstAvailable"))
    if has_exactly and has_first:
        detail = "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
        report.error(where, invalid(None, detail))
        return None
    if has_first:
        return _prioritized(name, items(raw.get("firstAvailable")), report, f"{where}.firstAvailable")
    if not has_exactly:
        report.error(where, required("exactly one of `exactly` or `firstAvailable` is required"))
        return None
    return _exact(name, mapping(raw.get("exactly")), report, f"{where}.exactly")


def _prioritized(name: str, raws: list[dict[str, Any]], report: Reporter, where: str) -> DeviceRequest | None:
    """``firstAvailable``: at most 8 subrequests (``FirstAvailableDeviceRequestMaxSize``) with unique
    names, each with the fields of an exact request (``validateDeviceSubRequest``)."""
    errors = report.error_count
    if len(raws) > FIRST_AVAILABLE_MAX_SIZE:
        report.error(where, too_many(len(raws), FIRST_AVAILABLE_MAX_SIZE))
    subrequests = [_exact(sub, raw, report, at, False) for sub, raw, at in _named(raws, report, where)]
    if report.error_count > errors:
        return None
    return DeviceRequest.prioritized(name, *(s for s in subrequests if s is not None))


def _request_names(requests: list[dict[str, Any]]) -> dict[str, set[str]]:
    """``gatherRequestNames``: each request's name with the names of its subrequests."""
    return {
        str(r.get("name")): {str(s.get("name")) for s in items(r.get("firstAvailable"))} for r in requests
    }


def _names_a_request(ref: str, names: Mapping[str, set[str]]) -> bool:
    """``requestNames.Has``: ``request``, or ``request/subrequest`` of a prioritized list."""
    request, sep, subrequest = ref.partition("/")
    if request not in names:
        return False
    return not sep or subrequest in names[request]


def _constraints(spec: Mapping[str, Any], report: Reporter, path: str) -> tuple[DeviceConstraint, ...]:
    """``devices.constraints`` as ``validateDeviceConstraint`` checks them (pkg/apis/resource/validation):
    ``requests`` name requests of the claim or ``request/subrequest`` (``validateRequestNameRef``),
    once each; ``matchAttribute`` is a fully qualified name. ``distinctAttribute`` needs the alpha
    DRAConsumableCapacity gate, off by default in 1.34."""
    devices = mapping(spec.get("devices"))
    names = _request_names(items(devices.get("requests")))
    out = []
    for i, raw in enumerate(items(devices.get("constraints"))):
        where = f"{path}.devices.constraints[{i}]"
        errors = report.error_count
        requests = [str(r) for r in raw.get("requests") or ()]
        for j, request in enumerate(requests):
            if request in requests[:j]:
                report.error(f"{where}.requests[{j}]", duplicate(request))
            elif not _names_a_request(request, names):
                report.error(f"{where}.requests[{j}]", invalid(request, _NOT_A_REQUEST))
        attribute = raw.get("matchAttribute")
        if raw.get("distinctAttribute"):
            report.error(
                f"{where}.distinctAttribute",
                forbidden("needs the DRAConsumableCapacity feature gate (alpha, off in 1.34); not modelled"),
            )
        elif not isinstance(attribute, str) or not attribute:
            report.error(f"{where}.matchAttribute", required())
        elif "/" not in attribute:
            report.error(f"{where}.matchAttribute", invalid(attribute, "must include a domain"))
        if report.error_count == errors and isinstance(attribute, str):
            out.append(DeviceConstraint(tuple(requests), attribute))
    return tuple(out)


def _admin_access(exact: Mapping[str, Any], report: Reporter, where: str, exact_request: bool) -> bool:
    """``exactly.adminAccess``; ``DeviceSubRequest`` has no such field (the API server's strict decoding
    refuses it, ``deviceSubRequestAccessor.adminAccess`` is always false)."""
    value = exact.get("adminAccess")
    if value is None:
        return False
    if not exact_request:
        report.error(
            f"{where}.adminAccess", forbidden("a subrequest has no adminAccess field (DeviceSubRequest)")
        )
    elif not isinstance(value, bool):
        report.error(f"{where}.adminAccess", invalid(value, "must be a boolean"))
    return value is True


def _exact(
    name: str, exact: Mapping[str, Any], report: Reporter, where: str, exact_request: bool = True
) -> DeviceRequest | None:
    """An ``exactly`` (``ExactDeviceRequest``), or with ``exact_request`` false a ``DeviceSubRequest``."""
    errors = report.error_count
    class_name = exact.get("deviceClassName")
    if not isinstance(class_name, str) or not class_name:
        report.error(f"{where}.deviceClassName", required())
    admin_access = _admin_access(exact, report, where, exact_request)
    if exact.get("capacity"):
        report.error(f"{where}.capacity", forbidden("consumable capacity requests is not modelled"))
    if exact.get("tolerations"):
        report.not_modelled(f"{where}.tolerations", note="device taints are not modelled")
    mode = exact.get("allocationMode") or EXACT_COUNT
    # ``count`` is an int64 with omitempty: 0 is not given (``SetDefaults_ExactDeviceRequest`` makes it 1
    # for ExactCount, ``validateDeviceAllocationMode`` accepts it for All)
    count = exact.get("count")
    if count == 0 and count is not False:
        count = None
    if mode not in ALLOCATION_MODES:
        report.error(f"{where}.allocationMode", unsupported(mode, ALLOCATION_MODES))
    elif mode == EXACT_COUNT:
        if count is None:
            count = 1
        elif not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            report.error(f"{where}.count", invalid(count, "must be greater than zero"))
    elif count is not None:
        report.error(f"{where}.count", invalid(count, "must not be specified when allocationMode is All"))
    selectors = _selectors(exact.get("selectors"), report, f"{where}.selectors")
    if report.error_count > errors or not isinstance(class_name, str):
        return None
    count = count if isinstance(count, int) else 0
    return DeviceRequest(name, class_name, selectors, str(mode), count, admin_access=admin_access)


def _allocation(status: Mapping[str, Any]) -> AllocationResult | None:
    allocation = mapping(status.get("allocation"))
    if not allocation:
        return None
    results = tuple(
        DeviceRequestAllocationResult(
            str(r.get("request") or ""),
            str(r.get("driver") or ""),
            str(r.get("pool") or ""),
            str(r.get("device") or ""),
            r.get("adminAccess") is True,
        )
        for r in items(mapping(allocation.get("devices")).get("results"))
    )
    terms = node_selector_terms(mapping(allocation.get("nodeSelector")))
    node_name = _local_node(terms)
    return AllocationResult(results, node_name, () if node_name is not None else terms)


def _local_node(terms: tuple[SelectorTerm, ...]) -> str | None:
    """The node of an allocation tied to one (``createNodeSelector``'s one term with one ``matchFields``
    requirement: ``metadata.name In [<node>]``)."""
    if len(terms) != 1 or terms[0].expressions or len(terms[0].fields) != 1:
        return None
    field = terms[0].fields[0]
    if (field.key, field.operator, len(field.values)) != ("metadata.name", "In", 1):
        return None
    return field.values[0]


def resource_claim(body: Mapping[str, Any], report: Reporter) -> ResourceClaim | None:
    """A ``ResourceClaim`` manifest (with ``status.allocation`` if written); ``None`` on errors."""
    errors = report.error_count
    name = _name(body, report)
    spec = mapping(body.get("spec"))
    requests = _requests(spec, report, "spec")
    constraints = _constraints(spec, report, "spec")
    if report.error_count > errors:
        return None
    allocation = _allocation(mapping(body.get("status")))
    return ResourceClaim(_namespace(body), name, requests, allocation, constraints)


#: ``DRAAdminNamespaceLabelKey``: only claims in a namespace with this label set to ``"true"`` may ask
#: for admin access (``AuthorizedForAdmin``, kubernetes ``pkg/registry/resource/utils.go``)
ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"


def _admin_access_path(claim: ResourceClaim | ResourceClaimTemplate) -> str | None:
    """The first request asking for admin access, as ``AuthorizedForAdmin`` finds it; None for none."""
    prefix = "spec.spec" if isinstance(claim, ResourceClaimTemplate) else "spec"
    for i, request in enumerate(claim.requests):
        if request.admin_access:
            return f"{prefix}.devices.requests[{i}].exactly.adminAccess"
    return None


def check_admin_namespace(
    claim: ResourceClaim | ResourceClaimTemplate,
    namespaces: Mapping[str, Mapping[str, str]],
    report: Reporter,
) -> None:
    """The API server's refusal of a claim or template asking for admin access in a namespace without
    the ``resource.kubernetes.io/admin-access: "true"`` label (``AuthorizedForAdmin``). ``namespaces``
    holds the labels of the scenario's Namespace documents; without any (a cluster dump lists no
    Namespaces) the label cannot be judged: said so, and the claim is taken as written. A namespace not
    listed has no labels."""
    path = _admin_access_path(claim)
    if path is None:
        return
    label = f"`{ADMIN_NAMESPACE_LABEL}: true`"
    if not namespaces:
        unknown = "no v1 Namespace document gives the namespaces' labels"
        report.warn(path, f"{unknown}: the {label} label admin access requires is taken as set")
    elif namespaces.get(claim.namespace, {}).get(ADMIN_NAMESPACE_LABEL) != "true":
        detail = f"admin access to devices requires the {label} label on the containing namespace"
        report.error(path, forbidden(detail))


def resource_claim_template(body: Mapping[str, Any], report: Reporter) -> ResourceClaimTemplate | None:
    """A ``ResourceClaimTemplate`` manifest; ``None`` on errors."""
    errors = report.error_count
    name = _name(body, report)
    spec = mapping(mapping(body.get("spec")).get("spec"))
    requests = _requests(spec, report, "spec.spec")
    constraints = _constraints(spec, report, "spec.spec")
    if report.error_count > errors:
        return None
    return ResourceClaimTemplate(_namespace(body), name, requests, constraints)


def _attribute(raw: Mapping[str, Any], report: Reporter, where: str) -> AttributeValue | None:
    set_fields = [k for k in ("bool", "int", "string", "version") if raw.get(k) is not None]
    if len(set_fields) != 1:
        report.error(where, invalid(raw, "exactly one value must be specified"))
        return None
    kind = set_fields[0]
    value = raw[kind]
    if kind == "version":
        from gpufleet.gpus.dra.cel import parse_semver

        try:
            parse_semver(str(value))
        except ValueError:
            report.error(
                f"{where}.version", invalid(value, "must be a string compatible with semver.org spec 2.0.0")
            )
            return None
        return VersionValue(str(value))
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    return str(value)


def _device(raw: Mapping[str, Any], report: Reporter, where: str) -> Device | None:
    errors = report.error_count
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        report.error(f"{where}.name", required())
    for field_name in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
        if raw.get(field_name):
            report.error(
                f"{where}.{field_name}",
                forbidden(f"{field_name} needs DRAPartitionableDevices (alpha, off in 1.34); not modelled"),
            )
    if raw.get("taints"):
        report.not_modelled(f"{where}.taints", note="device taints")
    attributes: dict[str, AttributeValue] = {}
    for key, value in mapping(raw.get("attributes")).items():
        parsed = _attribute(mapping(value), report, f"{where}.attributes[{key}]")
        if parsed is not None:
            attributes[str(key)] = parsed
    capacity: dict[str, Fraction | int] = {}
    for key, value in mapping(raw.get("capacity")).items():
        try:
            capacity[str(key)] = parse_quantity(mapping(value).get("value"))
        except QuantityError as err:
            report.error(f"{where}.capacity[{key}].value", invalid(mapping(value).get("value"), str(err)))
    if report.error_count > errors or not isinstance(name, str):
        return None
    return Device(name, attributes, capacity)


def resource_slice(body: Mapping[str, Any], report: Reporter) -> ResourceSlice | None:
    """A ``ResourceSlice`` manifest; ``None`` on errors."""
    errors = report.error_count
    name = _name(body, report)
    spec = mapping(body.get("spec"))
    driver = spec.get("driver")
    if not isinstance(driver, str) or not driver:
        report.error("spec.driver", required())
    pool = mapping(spec.get("pool"))
    pool_name = pool.get("name")
    if not isinstance(pool_name, str) or not pool_name:
        report.error("spec.pool.name", required())
    access = [k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection") if spec.get(k)]
    if len(access) != 1:
        report.error(
            "spec",
            invalid(
                access,
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
            ),
        )
    elif access[0] == "perDeviceNodeSelection":
        detail = "perDeviceNodeSelection needs DRAPartitionableDevices (alpha, off in 1.34); not modelled"
        report.error("spec.perDeviceNodeSelection", forbidden(detail))
    selector = _slice_node_selector(spec.get("nodeSelector"), report)
    if spec.get("sharedCounters"):
        report.error(
            "spec.sharedCounters", forbidden("partitionable devices (sharedCounters) are not modelled")
        )
    devices = []
    seen: set[str] = set()
    for i, raw in enumerate(items(spec.get("devices"))):
        device = _device(raw, report, f"spec.devices[{i}]")
        if device is None:
            continue
        if device.name in seen:
            report.error(f"spec.devices[{i}].name", duplicate(device.name))
            continue
        seen.add(device.name)
        devices.append(device)
    if report.error_count > errors or not isinstance(driver, str) or not isinstance(pool_name, str):
        return None
    node_name = spec.get("nodeName")
    generation, count = pool.get("generation"), pool.get("resourceSliceCount")
    return ResourceSlice(
        name,
        driver,
        pool_name,
        tuple(devices),
        node_name if isinstance(node_name, str) else None,
        bool(spec.get("allNodes")),
        generation if isinstance(generation, int) else 0,
        count if isinstance(count, int) and count > 0 else 1,
        selector,
    )


def _slice_node_selector(raw: object, report: Reporter) -> tuple[SelectorTerm, ...]:
    """``spec.nodeSelector`` as ``validateResourceSliceSpec`` checks it: ``ValidateNodeSelector`` and
    exactly one term (the allocator merges it into the allocation's one term)."""
    if not raw:
        return ()
    path = "spec.nodeSelector"
    raw_terms = items(mapping(raw).get("nodeSelectorTerms"))
    terms = required_terms(raw, report, path) or ()
    if len(raw_terms) != 1:
        report.error(
            f"{path}.nodeSelectorTerms", invalid(raw_terms, "must have exactly one node selector term")
        )
    return terms


DraObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate


def dra_object(body: Mapping[str, Any], report: Reporter) -> DraObject | None:
    """Any of the four ``resource.k8s.io/v1`` kinds, by ``kind``; ``None`` when not one or on errors."""
    if body.get("apiVersion") != GROUP_VERSION:
        report.error("apiVersion", unsupported(body.get("apiVersion"), (GROUP_VERSION,)))
        return None
    kind = body.get("kind")
    if kind == "DeviceClass":
        return device_class(body, report)
    if kind == "ResourceSlice":
        return resource_slice(body, report)
    if kind == "ResourceClaim":
        return resource_claim(body, report)
    if kind == "ResourceClaimTemplate":
        return resource_claim_template(body, report)
    report.error("kind", unsupported(kind, DRA_KINDS))
    return None


def pod_resource_claims(
    pod_spec: Mapping[str, Any], report: Reporter, path: str = "spec"
) -> tuple[PodResourceClaim, ...]:
    """``spec.resourceClaims`` of a pod: each names a claim or a template (exactly one)."""
    out = []
    for i, raw in enumerate(items(pod_spec.get("resourceClaims"))):
        where = f"{path}.resourceClaims[{i}]" if path else f"resourceClaims[{i}]"
        name = raw.get("name")
        claim, template = raw.get("resourceClaimName"), raw.get("resourceClaimTemplateName")
        if not isinstance(name, str) or not name:
            report.error(f"{where}.name", required())
            continue
        if bool(claim) == bool(template):
            report.error(
                where, invalid(raw, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
            )
            continue
        out.append(PodResourceClaim(name, claim or None, template or None))
    return tuple(out)


# --- ResourceSlices from GPU facts --------------------------------------------------------------


def _quantity_text(value: Fraction | int) -> str:
    value = Fraction(value)
    if value.denominator != 1:
        return f"{int(value * 1000)}m" if (value * 1000).denominator == 1 else str(float(value))
    number = int(value)
    for suffix, factor in (
        ("Ei", 2**60),
        ("Pi", 2**50),
        ("Ti", 2**40),
        ("Gi", 2**30),
        ("Mi", 2**20),
        ("Ki", 2**10),
    ):
        if number and number % factor == 0:
            return f"{number // factor}{suffix}"
    return str(number)


def _attribute_manifest(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, VersionValue):
        return {"version": value.text}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def _term_manifest(term: SelectorTerm) -> dict[str, Any]:
    """A ``NodeSelectorTerm`` as written."""
    out: dict[str, Any] = {}
    for key, requirements in (("matchExpressions", term.expressions), ("matchFields", term.fields)):
        if requirements:
            out[key] = [
                {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                for r in requirements
            ]
    return out


def resource_slice_manifest(resource_slice: ResourceSlice) -> dict[str, Any]:
    """The ``resource.k8s.io/v1`` manifest of a slice (valid against the 1.34 schema)."""
    spec: dict[str, Any] = {
        "driver": resource_slice.driver,
        "pool": {
            "name": resource_slice.pool,
            "generation": resource_slice.pool_generation,
            "resourceSliceCount": resource_slice.resource_slice_count,
        },
        "devices": [
            {
                "name": device.name,
                "attributes": {k: _attribute_manifest(v) for k, v in device.attributes.items()},
                "capacity": {k: {"value": _quantity_text(v)} for k, v in device.capacity.items()},
            }
            for device in resource_slice.devices
        ],
    }
    if resource_slice.all_nodes:
        spec["allNodes"] = True
    elif resource_slice.node_selector:
        spec["nodeSelector"] = {
            "nodeSelectorTerms": [_term_manifest(t) for t in resource_slice.node_selector]
        }
    else:
        spec["nodeName"] = resource_slice.node_name
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": resource_slice.name},
        "spec": spec,
    }
