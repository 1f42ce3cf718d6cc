"""Dynamic Resource Allocation (DRA) objects of ``resource.k8s.io/v1``, as the scheduler reads them.

Mirrors ``k8s.io/api/resource/v1`` (internal types in kubernetes ``pkg/apis/resource``), stable
since Kubernetes 1.34 (https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/):

* a DRA driver publishes **ResourceSlices**: the devices of one *pool* (on one node, ``nodeName``;
  reachable from every node, ``allNodes``; or from the nodes a ``nodeSelector`` selects: network-attached
  devices), each device with typed *attributes* (bool, int, string, semantic version) and *capacities*
  (quantities);
* an admin defines **DeviceClasses**: CEL selectors every device of the class satisfies;
* a workload writes **ResourceClaims** (shared by every pod that names them) or
  **ResourceClaimTemplates** (one claim per pod), whose requests name a class, add CEL
  selectors and ask for ``ExactCount`` devices (``count``, default 1) or ``All`` matching devices.

Attribute and capacity names are *qualified names*: ``domain/id`` (``gpu.nvidia.com/productName``)
or a bare ``id`` that belongs to the driver's own domain, exactly as upstream's
``QualifiedName`` and the CEL ``device`` variable resolve them. A request is ``exactly`` one kind of
device or a prioritized list (``firstAvailable``) of such alternatives; ``matchAttribute``
constraints and ``adminAccess`` (DRAAdminAccess, beta and on in 1.34) are modelled. Consumable
capacity and ``distinctAttribute`` are refused when converting manifests, device taints ignored
(``gpufleet.kube.dra``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from gpufleet.model.node import Node

if TYPE_CHECKING:  # gpufleet.model.pod imports this module
    from gpufleet.model.pod import SelectorTerm

#: ``exactly.allocationMode`` values (``DeviceAllocationMode``).
EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = (EXACT_COUNT, ALL)

#: The limit on devices one claim may get (``resource.AllocationResultsMaxSize``).
ALLOCATION_RESULTS_MAX_SIZE = 32
#: The limit on subrequests of a prioritized list (``FirstAvailableDeviceRequestMaxSize``).
FIRST_AVAILABLE_MAX_SIZE = 8


@dataclass(frozen=True)
class VersionValue:
    """A ``version`` attribute: a semantic version string (``"550.54.15"``), compared as semver in CEL."""

    text: str


#: A device attribute (``DeviceAttribute``: exactly one of bool, int, string, version).
AttributeValue = bool | int | str | VersionValue


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """``(domain, id)`` of a qualified name; a bare ``id`` belongs to the driver's domain."""
    domain, sep, ident = name.partition("/")
    if not sep:
        return driver, name
    return domain, ident


@dataclass(frozen=True)
class Device:
    """One device of a ResourceSlice (``Device``): a DNS-label name, attributes and capacities.

    Capacities are exact quantities (bytes for memory): ``{"memory": 80 * 2**30}``.
    """

    name: str
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[str, Fraction | int] = field(default_factory=dict)

    def attribute(self, name: str, driver: str) -> AttributeValue | None:
        """The attribute called ``name`` (qualified or bare) for a device of ``driver``."""
        wanted = split_qualified_name(name, driver)
        for key, value in self.attributes.items():
            if split_qualified_name(key, driver) == wanted:
                return value
        return None


@dataclass(frozen=True)
class ResourceSlice:
    """A ResourceSlice: some or all devices of one pool of one driver.

    ``node_name`` is set for node-local devices; ``all_nodes`` for devices every node reaches;
    ``node_selector`` (one term, as validation demands) for network-attached devices the nodes it
    selects reach. ``pool_generation`` and ``resource_slice_count`` are ``spec.pool.generation`` and
    ``spec.pool.resourceSliceCount``: only slices of a pool's newest generation count, and a pool
    with fewer slices than announced is incomplete.
    """

    name: str
    driver: str
    pool: str
    devices: tuple[Device, ...] = ()
    node_name: str | None = None
    all_nodes: bool = False
    pool_generation: int = 0
    resource_slice_count: int = 1
    node_selector: tuple[SelectorTerm, ...] = ()

    def available_on(self, node: Node) -> bool:
        """Whether a pod on ``node`` can use this slice's devices (``nodeMatches`` in pools_stable.go)."""
        if self.node_name is not None:
            return self.node_name == node.name
        return self.all_nodes or any(term.matches(node) for term in self.node_selector)


@dataclass(frozen=True)
class DeviceClass:
    """A DeviceClass (cluster-scoped): CEL selectors every device of the class must satisfy."""

    name: str
    selectors: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a claim, ``spec.devices.requests[]``: with its ``exactly`` (``ExactDeviceRequest``),
    or a prioritized list (``firstAvailable``, feature DRAPrioritizedList, beta and on in 1.34).

    A prioritized list holds 1 to 8 ``DeviceSubRequest``s, each with the fields of an exact request
    and a name of its own (modelled as requests without a list); the request's own exact fields are
    then unused (``device_class_name`` empty). The allocator takes the first subrequest that can be
    satisfied together with the other requests (:attr:`alternatives`) and names its results
    ``<request>/<subrequest>``.

    ``admin_access`` (``exactly.adminAccess``, DRAAdminAccess, beta and on in 1.34; subrequests have
    no such field): the devices are allocated for administrative access even when other claims
    hold them, and holding them blocks nobody (``allocator_stable.go``, ``foreachAllocatedDevice``).
    """

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    first_available: tuple[DeviceRequest, ...] = ()
    admin_access: bool = False

    @classmethod
    def prioritized(cls, name: str, *subrequests: DeviceRequest) -> DeviceRequest:
        """A request with ``firstAvailable``: its subrequests, in order of preference."""
        return cls(name, "", (), EXACT_COUNT, 0, subrequests)

    @property
    def alternatives(self) -> tuple[DeviceRequest, ...]:
        """What the allocator tries, in order: the subrequests of a prioritized list, else this request."""
        return self.first_available or (self,)


def request_ref(request: str, subrequest: str | None) -> str:
    """How results, constraints and configs name a request or one subrequest of it: ``request`` or
    ``request/subrequest`` (``requestData.requestName`` in the stable allocator)."""
    return f"{request}/{subrequest}" if subrequest else request


@dataclass(frozen=True)
class DeviceConstraint:
    """``spec.devices.constraints[]`` with ``matchAttribute``: every device allocated for ``requests``
    (for every request of the claim when empty) has the same value of the attribute, a fully
    qualified name (``gpu.nvidia.com/parentUUID``; a device's bare ``parentUUID`` of driver
    ``gpu.nvidia.com`` is the same attribute). A device without it cannot serve those requests."""

    requests: tuple[str, ...]
    match_attribute: str

    def applies_to(self, request: str, subrequest: str | None = None) -> bool:
        """``matchAttributeConstraint.matches``: a subrequest is named by its request's name or by
        ``request/subrequest``; a constraint that names no request applies to all."""
        if not self.requests or request in self.requests:
            return True
        return subrequest is not None and request_ref(request, subrequest) in self.requests


@dataclass(frozen=True)
class DeviceRequestAllocationResult:
    """One allocated device (``status.allocation.devices.results[]``). ``request`` is the request's name,
    or ``request/subrequest`` for the subrequest of a prioritized list that was allocated;
    ``admin_access``: allocated for an admin-access request, which leaves the device free for others."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False

    @property
    def device_id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)


@dataclass(frozen=True, order=True)
class DeviceID:
    """A device's identity across the cluster: driver, pool, device name."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True)
class AllocationResult:
    """A claim's allocation (``status.allocation``): its devices and the nodes its consumers may run on.

    ``node_name`` is the node whose node-local devices were allocated (upstream writes it as the
    allocation's ``nodeSelector`` on ``metadata.name``); otherwise ``node_selector`` holds the
    allocation's other ``nodeSelector`` terms (network-attached devices: ``createNodeSelector``);
    neither when every device is reachable from all nodes.
    """

    results: tuple[DeviceRequestAllocationResult, ...]
    node_name: str | None = None
    node_selector: tuple[SelectorTerm, ...] = ()

    @property
    def devices(self) -> tuple[DeviceID, ...]:
        return tuple(result.device_id for result in self.results)

    @property
    def in_use(self) -> tuple[DeviceID, ...]:
        """The devices no other claim may get: all but admin-access results (``foreachAllocatedDevice``
        in the scheduler's ``allocateddevices.go``: such a result "is not considered as allocated")."""
        return tuple(result.device_id for result in self.results if not result.admin_access)

    def admits(self, node: Node) -> bool:
        """Whether a consumer may run on ``node`` (the DynamicResources Filter's check of an allocated
        claim's ``nodeSelector``)."""
        if self.node_name is not None:
            return self.node_name == node.name
        return not self.node_selector or any(term.matches(node) for term in self.node_selector)


@dataclass(frozen=True)
class ResourceClaim:
    """A ResourceClaim: device requests, and the allocation once the scheduler made one."""

    namespace: str
    name: str
    requests: tuple[DeviceRequest, ...]
    allocation: AllocationResult | None = None
    constraints: tuple[DeviceConstraint, ...] = ()

    @property
    def key(self) -> str:
        """``namespace/name``, the key allocations are kept under."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class ResourceClaimTemplate:
    """A ResourceClaimTemplate: the claim each pod referencing it gets for itself."""

    namespace: str
    name: str
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...] = ()

    def claim_for(self, pod_name: str, pod_claim_name: str) -> ResourceClaim:
        """The pod's own claim. Upstream names it ``<pod>-<podClaimName>-<random>``; gpufleet drops
        the random suffix so runs are reproducible."""
        name = f"{pod_name}-{pod_claim_name}"
        return ResourceClaim(self.namespace, name, self.requests, constraints=self.constraints)


@dataclass(frozen=True)
class PodResourceClaim:
    """``pod.spec.resourceClaims[]``: a claim by name, or a template to stamp one from."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass
class DraObjects:
    """The ``resource.k8s.io/v1`` objects of a scenario."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)  # ns/name
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)  # ns/name
