"""Structured-parameters allocation of a pod's ResourceClaims on one node.

After the structured allocator of ``staging/src/k8s.io/dynamic-resource-allocation/structured``
(``Allocator.Allocate``), as kube-scheduler's ``DynamicResources`` plugin calls it in Filter for each
candidate node (types from kubernetes ``pkg/apis/resource``; behaviour described on
https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/):

* the pools the node reaches are the ResourceSlices with its ``nodeName``, ``allNodes``, or a
  ``nodeSelector`` that selects the node (network-attached devices, ``nodeMatches``); of each pool
  only the slices of the newest ``pool.generation`` count. A pool with fewer slices than its
  ``resourceSliceCount`` is *incomplete*; one that lists a device name twice is *invalid*
  (``GatherPools``, ``poolIsInvalid`` in ``pools_stable.go``). A search for ``ExactCount`` devices
  that reaches an invalid pool fails with ``pool <name> is invalid: duplicate device name <device>``
  (``allocateOne``): here pools after the first invalid one are never searched, and a search that
  finds no devices before it reports it (upstream's pool order is a map's, so which pools come
  first is arbitrary there);
* each request is checked first, in ``validateDeviceRequest``'s order and words: a missing class
  name, a class that does not exist, an unknown allocation mode, and for ``All`` every pool the
  node reaches must be complete and valid; then no claim may ask for more than 32 devices
  (``number of requested devices N exceeds the claim limit of 32``, ``All`` counting its matching
  devices), before any free device is looked for;
* a device fits a request when every selector of the request's DeviceClass and then every selector
  of the request evaluates to true (``gpufleet.gpus.dra.cel``);
* ``ExactCount`` takes ``count`` free fitting devices; ``All`` takes every fitting device of the
  node's pools and fails when there is none or when one is already allocated; a device of them a
  ``matchAttribute`` constraint turns away is an error (``allocateDevice`` with ``must``: ``cannot
  add device <id> because a claim constraint would not be satisfied``);
* requests of all the pod's claims are searched together with backtracking (a device serves one
  request), in a deterministic order: pools by driver and name, slices by name, devices by name.
  A prioritized list (``firstAvailable``) takes its first subrequest that can be satisfied together
  with every other request: subrequests are tried in order and a later request's failure backtracks
  into the next one (``allocateOne`` with ``subRequestIndex``); the results name it
  ``request/subrequest``. Every subrequest is checked up front (``validateDeviceRequest``, its
  errors naming ``request/subrequest`` where upstream names the subrequest alone); the claim limit
  counts each list's smallest subrequest, and during the search a subrequest that would take the
  claim past 32 devices is passed over, not an error (``numDevicesAfterAlloc`` in ``allocateOne``).
  Interchangeable devices (same fit for every request, and the same values of the attributes
  constraints name) are tried once per choice, so identical GPUs do not blow up the search;
* a claim's ``matchAttribute`` constraint (``matchAttributeConstraint.add`` in the stable
  allocator): every device allocated for the requests it names (all the claim's when it names none)
  has the attribute (``lookupAttribute``: the fully qualified name, or the bare id when the domain is
  the device's driver), all with the same value and type; a device without it cannot serve them;
* a new allocation is tied to the node when one of its devices is node-local; else its
  ``nodeSelector`` is one term with each requirement of the network-attached devices' slices once
  (``createNodeSelector``); else none (every device reachable from all nodes);
* a claim that is already allocated (shared with other pods, or allocated earlier) is reused as it
  is: never allocated twice. It only fits a node its allocation's ``nodeSelector`` admits (the
  DynamicResources Filter);
* an ``adminAccess`` request (DRAAdminAccess, beta and on in 1.34) may take devices other claims hold
  or are getting, but not one its own claim is getting (``allocatingDeviceForClaim``); the devices it
  takes stay free for the claims allocated later (admin-access results are not counted as allocated,
  ``foreachAllocatedDevice``), yet within one search a request without admin access of another
  claim cannot take them (``allocatingDeviceForAnyClaim``), and its results carry ``adminAccess``.
  Devices ``tainted`` (see ``gpus.dra.state``) are taken by no request, admin access or not;
* a CEL *runtime* error (an unknown attribute, a wrong type) is an error, not a failure to fit, as
  upstream's allocator returns it (``class <class>: selector #<i>: CEL runtime error: <error>`` or
  ``claim <namespace>/<name>: selector #<i>: ...``, ``selectorsMatch``), and so is a device an
  ``All`` request must take that a constraint turns away: :func:`allocate_on_node` answers an
  :class:`AllocationError`, which the DynamicResources Filter returns as an Error status (the
  scheduling attempt is aborted). gpufleet evaluates the selectors on every device of the node's pools
  up front; upstream evaluates lazily and may find enough devices before reaching the device that
  fails, so here an erroring selector errs slightly more often.

No preemption for DRA. kube-scheduler never preempts to free devices: the ``DynamicResources`` plugin
reports an allocation failure as ``UnschedulableAndUnresolvable`` (``statusUnschedulable``), which
``DefaultPreemption`` skips, and it does not implement ``PreFilterExtensions`` (AddPod/RemovePod), so
removing victims in a preemption dry run would not release their devices anyway. The caller must
therefore not offer a node as a preemption candidate when :func:`allocate_on_node` failed on it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocationResult,
    AttributeValue,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceID,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceSlice,
    request_ref,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Requirement, SelectorTerm

#: The reason kube-scheduler's DynamicResources Filter gives when claims cannot be allocated.
CANNOT_ALLOCATE = "cannot allocate all claims"
#: ... and when an allocated claim's devices are not reachable from the node.
NOT_AVAILABLE = "resourceclaim not available on the node"
#: Backtracking steps before giving up on a node (upstream bounds its search by a timeout).
DEFAULT_MAX_STEPS = 200_000


def filter_reason(outcome: str) -> str:
    """kube-scheduler's words for a failed allocation (``cannot allocate all claims``): the
    allocator's detail after the first colon is gpufleet's own. An :class:`AllocationError` is upstream's
    error, whole."""
    if isinstance(outcome, AllocationError):
        return str(outcome)
    return outcome.split(": ", 1)[0]


@dataclass(frozen=True)
class Allocation:
    """The outcome for a pod on a node: every claim of the pod with its allocation.

    ``new`` holds the keys (``namespace/name``) of the claims allocated by this call; the others
    already had an allocation that was reused. The caller records the new ones, so that pods
    sharing a claim later reuse them.
    """

    node_name: str
    claims: tuple[tuple[ResourceClaim, AllocationResult], ...]
    new: tuple[str, ...]

    @property
    def devices(self) -> tuple[DeviceID, ...]:
        """Every device the pod gets, in claim order."""
        return tuple(device for _, result in self.claims for device in result.devices)

    def result_for(self, claim_key: str) -> AllocationResult:
        for claim, result in self.claims:
            if claim.key == claim_key:
                return result
        raise KeyError(claim_key)


@dataclass(frozen=True)
class _Candidate:
    id: DeviceID
    device: Device
    driver: str
    node_local: bool
    selector: tuple[SelectorTerm, ...]  # its slice's nodeSelector


@dataclass(frozen=True)
class _Pool:
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    incomplete: bool
    invalid_reason: str  # "" for a valid pool

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)

    @property
    def pool_id(self) -> str:
        """``PoolID.String()``: ``driver/pool``."""
        return f"{self.driver}/{self.name}"


def _names(parent: str, name: str) -> tuple[str, str | None]:
    """``(request, subrequest)`` of a request, or of a subrequest of the prioritized list ``parent``."""
    return (parent, name) if parent else (name, None)


@dataclass(frozen=True)
class _Request:
    """An exact request, or one subrequest of a prioritized list (``parent``: the list's name)."""

    claim: ResourceClaim
    request: DeviceRequest
    device_class: DeviceClass
    parent: str = ""

    @property
    def ref(self) -> str:
        """The name its results carry: ``request`` or ``request/subrequest``."""
        return request_ref(*_names(self.parent, self.request.name))

    @property
    def constraints(self) -> tuple[DeviceConstraint, ...]:
        names = _names(self.parent, self.request.name)
        return tuple(c for c in self.claim.constraints if c.applies_to(*names))


class MatchCache:
    """Selector outcomes by (expression, device): CEL in pure Python costs about a millisecond per
    evaluation, so a simulation keeps one cache for its lifetime and calls :meth:`clear` whenever
    ResourceSlices change (a device ID then may name a different device)."""

    def __init__(self) -> None:
        self._outcomes: dict[tuple[str, DeviceID], bool | str] = {}

    def clear(self) -> None:
        self._outcomes.clear()

    def __len__(self) -> int:
        return len(self._outcomes)


class _Abort(Exception):
    """Allocation on this node is an error (upstream's ``Allocate`` returns ``err``); the message is it."""


class AllocationError(str):
    """:func:`allocate_on_node`'s answer where upstream's allocator returns an error rather than no
    allocation (a CEL runtime error, a constraint an ``All`` request cannot meet): the error's text. It is
    a ``str``, so a caller that only asks whether the pod fits reads it as a failure; the DynamicResources
    Filter makes it an Error status (``statusError``), which aborts the scheduling attempt."""

    __slots__ = ()


def node_pools(node: Node, slices: Iterable[ResourceSlice]) -> list[_Pool]:
    """The pools ``node`` reaches, newest generation only, sorted by driver and pool name."""
    grouped: dict[tuple[str, str], list[ResourceSlice]] = {}
    for resource_slice in slices:
        if resource_slice.available_on(node):
            grouped.setdefault((resource_slice.driver, resource_slice.pool), []).append(resource_slice)
    pools = []
    for (driver, pool), members in sorted(grouped.items()):
        newest = max(s.pool_generation for s in members)
        current = sorted((s for s in members if s.pool_generation == newest), key=lambda s: s.name)
        expected = max(s.resource_slice_count for s in current)
        pools.append(_Pool(driver, pool, tuple(current), len(current) < expected, _invalid_reason(current)))
    return pools


def _invalid_reason(slices: Sequence[ResourceSlice]) -> str:
    """``poolIsInvalid`` (pools_stable.go): the first device name listed twice in the pool."""
    seen: set[str] = set()
    for resource_slice in slices:
        for device in resource_slice.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _candidates(pools: Sequence[_Pool]) -> list[_Candidate]:
    """The devices of the pools before the first invalid one, which no search gets past."""
    out = []
    for pool in pools:
        if pool.invalid:
            break
        for resource_slice in pool.slices:
            for device in sorted(resource_slice.devices, key=lambda d: d.name):
                out.append(
                    _Candidate(
                        DeviceID(pool.driver, pool.name, device.name),
                        device,
                        pool.driver,
                        resource_slice.node_name is not None,
                        resource_slice.node_selector,
                    )
                )
    return out


def _fits(request: _Request, candidate: _Candidate, cache: MatchCache | None) -> bool:
    """Class selectors, then request selectors; raises ``_Abort`` on a CEL error."""
    for origin, expressions in (
        (f"class {request.device_class.name}", request.device_class.selectors),
        (f"claim {request.claim.key}", request.request.selectors),
    ):
        for index, expression in enumerate(expressions):
            outcome = _outcome(expression, candidate, cache)
            if isinstance(outcome, str):
                raise _Abort(f"{origin}: selector #{index}: {outcome}")
            if not outcome:
                return False
    return True


def _outcome(expression: str, candidate: _Candidate, cache: MatchCache | None) -> bool | str:
    from gpufleet.gpus.dra.cel import SelectorCompileError, SelectorRuntimeError, compile_selector

    key = (expression, candidate.id)
    if cache is not None and key in cache._outcomes:
        return cache._outcomes[key]
    outcome: bool | str
    try:
        outcome = compile_selector(expression).matches(candidate.device, candidate.driver)
    except SelectorRuntimeError as err:
        outcome = f"CEL runtime error: {err.detail}"
    except SelectorCompileError as err:
        outcome = f"CEL compile error: {err}"
    if cache is not None:
        cache._outcomes[key] = outcome
    return outcome


def _checked_alternatives(
    claim: ResourceClaim, request: DeviceRequest, classes: Mapping[str, DeviceClass]
) -> tuple[_Request, ...] | str:
    """The request, or each subrequest of its prioritized list in order, checked (``Allocate``
    validates every subrequest before the search); the first error."""
    parent = request.name if request.first_available else ""
    out = []
    for alternative in request.alternatives:
        checked = _checked_request(claim, alternative, classes, parent)
        if isinstance(checked, str):
            return checked
        out.append(checked)
    return tuple(out)


def _checked_request(
    claim: ResourceClaim, request: DeviceRequest, classes: Mapping[str, DeviceClass], parent: str
) -> _Request | str:
    """The request with its class, or upstream's error (``validateDeviceRequest``, allocator_stable.go),
    its checks in its order. The class lister's error is the informer's ``NotFound``."""
    where = f"claim {claim.key}, request {request_ref(*_names(parent, request.name))}"
    name = request.device_class_name
    if not name:
        return f"{where}: missing device class name (unsupported request type?)"
    device_class = classes.get(name)
    if device_class is None:
        not_found = f'deviceclass.resource.k8s.io "{name}" not found'
        return f"{where}: could not retrieve device class {name}: {not_found}"
    if request.allocation_mode not in (EXACT_COUNT, ALL):
        return f"{where}: unsupported count mode {request.allocation_mode}"
    return _Request(claim, request, device_class, parent)


def _existing(claim: ResourceClaim, allocated: Mapping[str, AllocationResult]) -> AllocationResult | None:
    return allocated.get(claim.key, claim.allocation)


def _not_admitted(claim: ResourceClaim, existing: AllocationResult) -> str:
    """Why an allocated claim does not fit the node: its devices are another node's, or its
    ``nodeSelector`` (network-attached devices) does not select the node."""
    if existing.node_name is not None:
        return f"{NOT_AVAILABLE}: claim {claim.key} is allocated on node {existing.node_name}"
    return f"{NOT_AVAILABLE}: claim {claim.key} is allocated for the nodes its nodeSelector selects"


def allocate_on_node(
    node: Node | str,
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    slices: Iterable[ResourceSlice],
    allocated: Mapping[str, AllocationResult] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    cache: MatchCache | None = None,
    tainted: Collection[DeviceID] = (),
) -> Allocation | str:
    """Allocate the pod's ``claims`` on ``node``, or say why that is impossible (an
    :class:`AllocationError` where upstream's allocator errs).

    ``node`` given by name is a node with no labels but its hostname: enough for every slice but one
    with a ``nodeSelector``. ``slices`` may be every ResourceSlice of the cluster (those the node does
    not reach are left out). ``allocated`` holds the allocations of claims already allocated in the
    cluster, by claim key; their devices are in use (but those allocated for admin access), and the
    pod's claims found there are reused. A claim's own ``allocation`` (from its status) counts the same
    way. ``cache`` keeps selector outcomes across calls (see :class:`MatchCache`); ``tainted`` devices
    are taken by no request.
    """
    node = Node(node) if isinstance(node, str) else node
    allocated = allocated or {}
    unique: dict[str, ResourceClaim] = {}
    for claim in claims:
        unique.setdefault(claim.key, claim)
    in_use: set[DeviceID] = {device for result in allocated.values() for device in result.in_use}
    for claim in unique.values():
        existing = _existing(claim, allocated)
        if existing is not None:
            in_use.update(existing.in_use)
            if not existing.admits(node):
                return _not_admitted(claim, existing)

    slots: list[tuple[_Request, ...]] = []  # per request of the claims to allocate, its alternatives
    for claim in unique.values():
        if _existing(claim, allocated) is not None:
            continue
        for request in claim.requests:
            checked = _checked_alternatives(claim, request, classes)
            if isinstance(checked, str):
                return f"{CANNOT_ALLOCATE}: {checked}"
            slots.append(checked)

    pending = [r for slot in slots for r in slot]
    chosen: list[list[_Candidate]] = []
    if pending:
        pools = node_pools(node, slices)
        candidates = _candidates(pools)
        try:
            fits = [[_fits(r, c, cache) for c in candidates] for r in pending]
            found = _Search(slots, pools, candidates, fits, (in_use, frozenset(tainted)), max_steps).run()
        except _Abort as err:
            return AllocationError(err)
        if isinstance(found, str):
            return f"{CANNOT_ALLOCATE}: {found}"
        chosen = found

    by_claim: dict[str, list[tuple[_Request, _Candidate]]] = {}
    for pending_request, devices in zip(pending, chosen, strict=True):
        by_claim.setdefault(pending_request.claim.key, []).extend((pending_request, d) for d in devices)
    out: list[tuple[ResourceClaim, AllocationResult]] = []
    new: list[str] = []
    for claim in unique.values():
        existing = _existing(claim, allocated)
        if existing is None:
            existing = _result(node, by_claim.get(claim.key, []))
            new.append(claim.key)
        out.append((claim, existing))
    return Allocation(node.name, tuple(out), tuple(new))


def _result(node: Node, picked: Sequence[tuple[_Request, _Candidate]]) -> AllocationResult:
    """A new claim's allocation: its devices, admin access marked (``allocateDevice``), and the nodes
    its consumers may run on (``createNodeSelector``)."""
    results = tuple(
        DeviceRequestAllocationResult(r.ref, c.driver, c.id.pool, c.id.device, r.request.admin_access)
        for r, c in picked
    )
    candidates = [c for _, c in picked]
    if any(c.node_local for c in candidates):
        return AllocationResult(results, node.name)
    return AllocationResult(results, node_selector=_union_term(candidates))


def _union_term(candidates: Sequence[_Candidate]) -> tuple[SelectorTerm, ...]:
    """``createNodeSelector`` for devices none of them node-local: one term with every requirement of
    their slices' ``nodeSelector`` terms, each once (``addNewNodeSelectorRequirements``); no term when
    every device is reachable from all nodes."""
    expressions: list[Requirement] = []
    fields: list[Requirement] = []
    for candidate in candidates:
        for term in candidate.selector:
            _add_new(term.expressions, expressions)
            _add_new(term.fields, fields)
    return (SelectorTerm(tuple(expressions), tuple(fields)),) if expressions or fields else ()


def _add_new(requirements: Iterable[Requirement], to: list[Requirement]) -> None:
    """``addNewNodeSelectorRequirements``: a requirement is there already when one has its key, its
    operator and the same set of values."""
    for new in requirements:
        if not any(
            (r.key, r.operator, set(r.values)) == (new.key, new.operator, set(new.values)) for r in to
        ):
            to.append(new)


class _Search:
    """Backtracking over the pending requests, device by device, in candidate order. ``slots`` holds
    each request of the claims to allocate as its alternatives: the request itself, or the
    subrequests of its prioritized list in order; index ``i`` below numbers the alternatives of all
    slots together, as the rows of ``fits`` do. ``unavailable``: the devices allocated claims hold
    (but for admin access), and the tainted ones."""

    def __init__(
        self,
        slots: Sequence[tuple[_Request, ...]],
        pools: Sequence[_Pool],
        candidates: Sequence[_Candidate],
        fits: Sequence[Sequence[bool]],
        unavailable: tuple[Collection[DeviceID], Collection[DeviceID]],
        max_steps: int,
    ) -> None:
        self.requests = [r for slot in slots for r in slot]
        self.slots: list[range] = []
        for slot in slots:
            start = self.slots[-1].stop if self.slots else 0
            self.slots.append(range(start, start + len(slot)))
        self.slot_of = [k for k, slot in enumerate(self.slots) for _ in slot]
        self.pools, self.candidates, self.fits = pools, candidates, fits
        self.held, self.tainted = unavailable
        self.taking: dict[DeviceID, list[str]] = {}  # the claims getting a device in this search
        self.steps, self.max_steps = 0, max_steps
        self.signature: list[tuple[object, ...]] = [
            tuple(row[j] for row in fits) for j in range(len(candidates))
        ]
        self.matching = _Matching(self.requests, candidates, self.signature)
        self.chosen: list[list[_Candidate]] = [[] for _ in self.requests]
        self.wanted = [self._wanted(i) for i in range(len(self.requests))]
        self.per_claim: dict[str, int] = {}  # devices chosen so far per claim
        self.dead = [False] * len(self.requests)  # alternatives the prechecks ruled out
        self.invalid = next((pool for pool in pools if pool.invalid), None)
        self.failure = ""

    def run(self) -> list[list[_Candidate]] | str:
        """Upstream's checks of every request first (``Allocate`` before ``allocateOne``), then the search.
        A search that fails without getting past an invalid pool reaches it, as upstream's does."""
        reason = self._validate()
        if reason:
            return reason
        found = self._search()
        if isinstance(found, str) and self.invalid is not None:
            return f"pool {self.invalid.name} is invalid: {self.invalid.invalid_reason}"
        return found

    def _search(self) -> list[list[_Candidate]] | str:
        for slot in self.slots:  # cheap checks first, for a precise reason
            reasons = [self._precheck(i) for i in slot]
            for i, reason in zip(slot, reasons, strict=True):
                self.dead[i] = bool(reason)
            if all(reasons):
                return "; ".join(reasons)
        if self._slot(0):
            return [list(c) for c in self.chosen]
        if self.steps > self.max_steps:
            return f"gave up after {self.max_steps} allocation attempts"
        return self.failure or "no combination of free devices satisfies every request"

    def _where(self, r: _Request) -> str:
        return f"claim {r.claim.key}, request {r.ref}"

    def _fitting(self, i: int) -> list[_Candidate]:
        return [c for j, c in enumerate(self.candidates) if self.fits[i][j]]

    def _wanted(self, i: int) -> int:
        """``numDevices``: ``count``, or for ``All`` the matching devices."""
        r = self.requests[i]
        return len(self._fitting(i)) if r.request.allocation_mode == ALL else r.request.count

    def _validate(self) -> str:
        """``validateDeviceRequest`` for ``All``: every pool the node reaches is complete and valid;
        then ``Allocate``'s limit: the devices each claim asks for at least (``All``: its matching
        ones; a prioritized list: its smallest subrequest)."""
        for r in self.requests:
            if r.request.allocation_mode == ALL:
                for pool in self.pools:
                    if pool.incomplete or pool.invalid:
                        state = "being updated" if pool.incomplete else "invalid"
                        return (
                            f"{self._where(r)}: asks for all devices, but resource pool "
                            f"{pool.pool_id} is currently {state}"
                        )
        per_claim: dict[str, int] = {}
        for slot in self.slots:
            key = self.requests[slot.start].claim.key
            per_claim[key] = per_claim.get(key, 0) + min(self.wanted[i] for i in slot)
        for key, total in per_claim.items():
            if total > ALLOCATION_RESULTS_MAX_SIZE:
                return (
                    f"claim {key}: number of requested devices {total} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
        return ""

    def _precheck(self, i: int) -> str:
        """Why alternative ``i`` cannot be satisfied whatever the other requests take; "" if it may be.
        An ``All`` request whose devices a constraint turns away before one is found taken is left to
        the search, which reports that as an error when it gets there."""
        r, fitting = self.requests[i], self._fitting(i)
        if r.request.allocation_mode == ALL:
            if not fitting:
                return f"{self._where(r)}: asks for all devices, but the node has no matching device"
            taken = self._first_taken(i, fitting)
            if taken < min(len(fitting), self.matching.first_misfit(i, fitting)):
                busy = [c for c in fitting if self._busy(i, c)]
                return (
                    f"{self._where(r)}: asks for all devices, but {len(busy)} of the {len(fitting)} "
                    f"matching devices are already allocated"
                )
            return ""
        free = [c for c in fitting if not self._busy(i, c)]
        if len(free) < r.request.count:
            return (
                f"{self._where(r)}: needs {r.request.count} matching device(s), the node has "
                f"{len(fitting)} matching, {len(free)} of them free"
            )
        return ""

    def _slot(self, k: int) -> bool:
        """Satisfy slot ``k`` and every later one: its alternatives in order (``allocateOne``'s loop over
        ``subRequestIndex``); one that would take its claim past the limit is passed over."""
        if k == len(self.slots):
            return True
        for i in self.slots[k]:
            if self.dead[i] or self._over_limit(i):
                continue
            if self._request(i):
                return True
            if self.steps > self.max_steps:
                return False
        return False

    def _over_limit(self, i: int) -> bool:
        claim = self.requests[i].claim.key
        return self.per_claim.get(claim, 0) + self.wanted[i] > ALLOCATION_RESULTS_MAX_SIZE

    def _request(self, i: int) -> bool:
        r = self.requests[i]
        if r.request.allocation_mode == ALL:
            picked = self._fitting(i)
            if not self._all_addable(i, picked):
                self.failure = f"{self._where(r)}: asks for all devices, but some are taken by other requests"
                return False
            self._take(i, picked)
            if self._slot(self.slot_of[i] + 1):
                return True
            self._release(i, picked)
            return False
        return self._pick(i, 0, r.request.count)

    def _busy(self, i: int, candidate: _Candidate) -> bool:
        """``deviceInUse`` for a request without admin access: held or being allocated to any claim;
        ``allocatingDeviceForClaim`` for one with: being allocated to its own claim. A tainted device
        is busy for both."""
        device, request = candidate.id, self.requests[i]
        if device in self.tainted:
            return True
        getting = self.taking.get(device, ())
        if request.request.admin_access:
            return request.claim.key in getting
        return device in self.held or bool(getting)

    def _first_taken(self, i: int, picked: Sequence[_Candidate]) -> int:
        return next((n for n, c in enumerate(picked) if self._busy(i, c)), len(picked))

    def _all_addable(self, i: int, picked: Sequence[_Candidate]) -> bool:
        """``allocateOne`` for ``All`` adds the devices one by one (``allocateDevice`` with ``must``): a
        device in use ends this branch; one a constraint turns away first is an error."""
        taken = self._first_taken(i, picked)
        misfit = self.matching.first_misfit(i, picked)
        if misfit < taken:
            raise _Abort(
                f"{self._where(self.requests[i])}: cannot add device {picked[misfit].id} because a claim "
                "constraint would not be satisfied"
            )
        return taken == len(picked)

    def _pick(self, i: int, start: int, remaining: int) -> bool:
        if remaining == 0:
            return self._slot(self.slot_of[i] + 1)
        tried: set[tuple[tuple[object, ...], bool]] = set()
        for j in range(start, len(self.candidates)):
            candidate = self.candidates[j]
            if not self.fits[i][j] or self._busy(i, candidate):
                continue
            # an interchangeable device already failed here (a held one, free for admin access, is not:
            # taking it leaves more to the other claims than taking a free one)
            key = (self.signature[j], candidate.id in self.held)
            if key in tried:
                continue
            if self.matching.of_request[i] and not self.matching.admits(i, candidate):
                continue
            self.steps += 1
            if self.steps > self.max_steps:
                return False
            tried.add(key)
            self._take(i, [candidate])
            if self._pick(i, j + 1, remaining - 1):
                return True
            self._release(i, [candidate])
            if self.steps > self.max_steps:
                return False
        if not self.failure:
            r = self.requests[i]
            self.failure = f"{self._where(r)}: " + (
                self.matching.failure(i) or "not enough free matching devices left by the other requests"
            )
        return False

    def _take(self, i: int, picked: Sequence[_Candidate]) -> None:
        self.chosen[i].extend(picked)
        claim = self.requests[i].claim.key
        for c in picked:
            self.taking.setdefault(c.id, []).append(claim)
        self.matching.take(i, picked)
        self.per_claim[claim] = self.per_claim.get(claim, 0) + len(picked)

    def _release(self, i: int, picked: Sequence[_Candidate]) -> None:
        claim = self.requests[i].claim.key
        for c in picked:
            self.chosen[i].remove(c)
            self.taking[c.id].remove(claim)
        self.matching.release(i, picked)
        self.per_claim[claim] -= len(picked)


#: an attribute value with its type: ``True`` and ``1`` differ, as upstream compares by type
_Value = tuple[type, AttributeValue]


def _value(constraint: DeviceConstraint, candidate: _Candidate) -> _Value | None:
    value = candidate.device.attribute(constraint.match_attribute, candidate.driver)
    return None if value is None else (type(value), value)


class _Matching:
    """The ``matchAttribute`` constraints of the pending claims during the search: per constraint,
    the value the devices picked so far share and how many there are. Without constraints every
    method returns at once."""

    def __init__(
        self,
        requests: Sequence[_Request],
        candidates: Sequence[_Candidate],
        signature: list[tuple[object, ...]],
    ) -> None:
        index: dict[tuple[str, DeviceConstraint], int] = {}
        for r in requests:
            for c in r.constraints:
                index.setdefault((r.claim.key, c), len(index))
        self.of_request = [tuple(index[(r.claim.key, c)] for c in r.constraints) for r in requests]
        self.constraints = [c for _, c in index]
        self.values: list[_Value | None] = [None] * len(index)
        self.counts = [0] * len(index)
        self.blocked = [False] * len(requests)
        if index:  # devices that differ in a constrained attribute are not interchangeable
            for j, candidate in enumerate(candidates):
                signature[j] += tuple(_value(c, candidate) for c in self.constraints)

    def admits(self, i: int, candidate: _Candidate) -> bool:
        for n in self.of_request[i]:
            value = _value(self.constraints[n], candidate)
            if value is None or (self.counts[n] and value != self.values[n]):
                self.blocked[i] = True
                return False
        return True

    def first_misfit(self, i: int, picked: Sequence[_Candidate]) -> int:
        """The index of the first of ``picked``, added in order, that a constraint of request ``i`` turns
        away (``matchAttributeConstraint.add``); ``len(picked)`` when none does."""
        first = len(picked)
        for n in self.of_request[i]:
            shared = self.values[n] if self.counts[n] else None
            for index, candidate in enumerate(picked[:first]):
                value = _value(self.constraints[n], candidate)
                if value is None or (shared is not None and value != shared):
                    first = index
                    break
                shared = value
        return first

    def take(self, i: int, picked: Sequence[_Candidate]) -> None:
        for n in self.of_request[i]:
            if picked and not self.counts[n]:
                self.values[n] = _value(self.constraints[n], picked[0])
            self.counts[n] += len(picked)

    def release(self, i: int, picked: Sequence[_Candidate]) -> None:
        for n in self.of_request[i]:
            self.counts[n] -= len(picked)

    def failure(self, i: int) -> str:
        """Why request ``i`` found no devices, when a constraint turned some away."""
        if not self.blocked[i]:
            return ""
        names = ", ".join(sorted({self.constraints[n].match_attribute for n in self.of_request[i]}))
        return f"no free matching devices share one value of {names} (constraints: matchAttribute)"
