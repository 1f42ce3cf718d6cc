"""The ProvisioningRequests cluster-autoscaler's loop handles (``--enable-provisioning-requests``; upstream
``provisioningrequest/``: the ``provReqProcessor``, the injector, the check-capacity and best-effort-atomic
orchestrators; the decisions themselves are ``autoscaling.provisioning_request``).

Each scan first expires their bookings and fails or deletes the old ones (``provReqProcessor.refresh``), then
takes the next one available (``Provisioned`` false: after its backoff, 1 minute doubling up to 10) and
provisions it: check-capacity looks for room, best-effort-atomic grows one group for all its pods or none;
each condition set is a ``provisioning-request`` event. A pod consuming a request
(``autoscaling.x-k8s.io/consume-provisioning-request``) triggers no scale-up of its own
(``ProvisioningRequestPodsFilter``: a ``no-scale-up`` event says so), and the pods of the requests whose
capacity is booked are put in the scale-up snapshot before the pending pods (``bookCapacity``); a node they
go to is no scale-down candidate while booked (upstream's booked pods are in the scale-down snapshot too:
here the node is simply kept, whatever its utilisation). Not modelled: check-capacity batch processing, and
the wrapper orchestrator's alternation between a loop for ProvisioningRequests and one for other pods (here
both run in each scan).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleUp
from gpufleet.autoscaling.expendable import DEFAULT_CUTOFF
from gpufleet.autoscaling.provisioning_request import (
    BOOKING_EXPIRED,
    FAILED,
    INITIAL_RETRY_S,
    PROVISIONED,
    RESERVATION_TIME_S,
    ProvisioningRequest,
    ProvisionRequest,
    booked_nodes,
    booked_pods,
    next_request,
    provision,
    refresh,
    should_book,
)
from gpufleet.cluster.state import ClusterState
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.model.pod import Pod
from gpufleet.scheduling.profile import Profile

#: builds the orchestrator's ask from every request (the client's order) and the chosen one's key
Ask = Callable[[Sequence[ProvisioningRequest], str], ProvisionRequest]


class ProvisioningRequests:
    """The ProvisioningRequests, their conditions as it set them, and each one's retry backoff; its
    condition changes logged to ``events``."""

    def __init__(self, requests: Sequence[ProvisioningRequest], events: list[ScaleEvent]) -> None:
        self.requests: list[ProvisioningRequest] = list(requests)
        self.events = events
        self._retry: dict[str, float] = {}

    def get(self, key: str) -> ProvisioningRequest | None:
        """The request ``<namespace>/<name>`` with its conditions now, None when there is none."""
        return next((r for r in self.requests if r.key == key), None)

    def create(self, request: ProvisioningRequest, now: float) -> None:
        """A request another controller made (Kueue's admission check), replacing one of its key."""
        self.requests = [r for r in self.requests if r.key != request.key]
        self.requests.append(request)
        self._retry.pop(request.key, None)
        self.events.append(ScaleEvent(now, "provisioning-request", None, (), (request.key,), "created"))

    def delete(self, key: str, now: float) -> None:
        """The request ``key`` deleted by the controller that made it (none: nothing)."""
        if self.get(key) is None:
            return
        self.requests = [r for r in self.requests if r.key != key]
        self._retry.pop(key, None)
        self.events.append(ScaleEvent(now, "provisioning-request", None, (), (key,), "deleted"))

    def wakeups(self) -> list[float]:
        """When a ProvisioningRequest next needs a loop (at the scan after it: both checks are a strict
        ``Before(now)``): a booking's expiry (``Provisioned`` true 10 minutes ago), a retry's backoff's end
        (``Provisioned`` false)."""
        out = []
        for r in self.requests:
            c = r.condition(PROVISIONED)
            if c is None or r.is_true(FAILED) or r.is_true(BOOKING_EXPIRED):
                continue
            if c.status is True:
                out.append(c.last_transition + RESERVATION_TIME_S)
            elif c.status is False:
                out.append(c.last_transition + self._retry.get(r.key, INITIAL_RETRY_S))
        return out

    def provision(self, now: float, ask: Ask) -> tuple[bool, ScaleUp | None]:
        """The ProvisioningRequests' part of a loop: their bookings expire and the old ones go
        (``provReqProcessor.refresh``), the next one available is taken (``GetPodsFromNextRequest``) and
        provisioned (``provReqOrchestrator.ScaleUp``, asked as ``ask`` builds it). Each condition set is a
        ``provisioning-request`` event naming the request. Whether a request's conditions changed or one was
        deleted, and the scale-up to execute."""
        if not self.requests:
            return False, None
        before = {r.key: r.conditions for r in self.requests}
        requests, old = refresh(self.requests, now)
        injected = next_request([r for r in requests if r.key not in old], now, self._retry)
        self._retry = dict(injected.retry_s)
        requests, up = list(injected.requests), None
        if injected.chosen is not None:
            done = provision(ask(requests, injected.chosen.key))
            requests, up = list(done.requests), done.scale_up
        self.requests = requests
        for r in requests:
            for c in r.conditions:
                if c not in before.get(r.key, ()):
                    status = {True: "True", False: "False", None: "Unknown"}[c.status]
                    message = f"{c.type}={status} {c.reason}: {c.message}"
                    self.events.append(ScaleEvent(now, "provisioning-request", None, (), (r.key,), message))
        for key in old:
            self.events.append(ScaleEvent(now, "provisioning-request", None, (), (key,), "deleted"))
        return any(before.get(r.key) != r.conditions for r in requests) or bool(old), up

    def booked_pods(self) -> list[Pod]:
        """``bookCapacity``'s pods: those of every request whose capacity is booked."""
        return booked_pods(self.requests)

    def bookings(self) -> tuple[str, ...]:
        """The requests whose capacity is booked (``should_book``), by key."""
        return tuple(r.key for r in self.requests if should_book(r))

    def unbooked(
        self,
        candidates: list[Candidate],
        state: ClusterState,
        profile: Profile,
        going: AbstractSet[str],
        cutoff: int = DEFAULT_CUTOFF,
    ) -> list[Candidate]:
        """The scale-down candidates that hold no booked capacity (``booked_nodes``, the booked pods put on
        the cluster's nodes but those ``going``, the snapshot without the pods below ``cutoff``: upstream's
        booked pods in the scale-down snapshot keep their nodes; here such a node is no candidate)."""
        if not any(should_book(r) for r in self.requests):
            return candidates
        exclude = frozenset(state.index[n] for n in going if n in state.index)
        held = booked_nodes(state, profile, self.requests, exclude, cutoff=cutoff)
        return [c for c in candidates if c.node not in held]
