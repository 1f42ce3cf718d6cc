"""Kueue's admission checks, as its workload controller handles them and its ProvisioningRequest admission
check controller runs them (upstream ``pkg/controller/core/workload_controller.go``: the check handling;
``pkg/controller/admissionchecks/provisioning/controller.go``; the pure rules are
``scheduling.kueue.admission_checks``).

A workload whose ClusterQueue has checks for the flavors it was assigned (``scheduling.kueue.admission_
checks``) gets its quota reserved (``QuotaReserved``; its pods stay gated, saying which checks are not
Ready) and is admitted -- its pods released, ``waitForPodsReady`` timed from then -- only once every check
is Ready. Kueue's ProvisioningRequest controller (``kueue.x-k8s.io/provisioning-request``) creates a
ProvisioningRequest ``<workload>-<check>-<attempt>`` (the workload named ``<kind>-<name>``: upstream adds a
hash of the owner's UID, which a simulation has none of) with a PodTemplate per pod set (the set's
template with its flavors' labels and tolerations) and its config's class and parameters, which
cluster-autoscaler's loop handles; Provisioned makes the check Ready and the pods get
``autoscaling.x-k8s.io/consume-provisioning-request`` and the class annotation. A request that Failed (or
whose booking expired before admission) makes the check Retry: the workload is evicted (reason
``AdmissionCheck``), releases its quota, its requests are deleted
(``CleanupProvisioningRequestsOnEviction``) and it waits out the check's backoff; past
``backoffLimitCount`` the check is Rejected and the workload deactivated. A check of another controller is
not modelled: it stays Pending, the workload never admitted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from gpufleet.control.clock import Clock, Priority
from gpufleet.control.kueue_workload import Evict, KueueWorkload, flavored
from gpufleet.control.port import ClusterReads, ProvisioningRequests
from gpufleet.model.kueue import PROVISIONING_REQUEST_CONTROLLER, KueueObjects, ProvisioningRequestConfig
from gpufleet.model.provisioning_request import PodSet as RequestPodSet
from gpufleet.model.provisioning_request import ProvisioningRequest
from gpufleet.scheduling.kueue.admission_checks import (
    ADMITTED,
    ADMITTED_EVENT,
    NOT_ALL_CHECKS_READY,
    NOT_MODELLED_MESSAGE,
    CheckState,
    InconsistentAssignments,
    PodSetNeed,
    active_or_last,
    admitted_condition,
    check_based_eviction,
    checks_for_workload,
    merged_pod_sets,
    next_attempt,
    pod_template_name,
    provisioning_request_name,
    request_needed,
    request_parameters,
    requeue_at_update,
    reset_on_eviction,
    sync_check,
    sync_check_list,
    update_event,
)
from gpufleet.scheduling.kueue.workload import Admitted


class AdmissionChecks:
    """The checks of ``workloads`` (Kueue's, by key) with ``objects``' AdmissionChecks and
    ProvisioningRequestConfigs; ``provisioning``: cluster-autoscaler's ProvisioningRequests, which the
    ProvisioningRequest controller creates and reads (None: no ProvisioningRequest API; its checks stay
    Pending); ``port``: the pods, as a workload's pod sets read them. A workload's checks act back through
    ``evict`` (a Retry or Rejected check), ``tell`` (a message on its pods), ``start`` (its checks all Ready:
    admitted) and ``request_cycle`` (its backoff over)."""

    def __init__(
        self,
        objects: KueueObjects,
        clock: Clock,
        port: ClusterReads,
        provisioning: ProvisioningRequests | None,
        workloads: Mapping[str, KueueWorkload],
        *,
        evict: Evict,
        tell: Callable[[KueueWorkload, str], None],
        start: Callable[[KueueWorkload], None],
        request_cycle: Callable[[], None],
    ) -> None:
        self.objects = objects
        self.clock = clock
        self.port = port
        self.provisioning = provisioning
        self.workloads = workloads
        self._evict = evict
        self._tell = tell
        self._start = start
        self._request_cycle = request_cycle

    def provisioning_changed(self) -> None:
        """cluster-autoscaler set conditions on ProvisioningRequests: the controller reconciles the workloads
        holding a reservation with checks (at once, as a controller's next pass)."""
        if any(wl.checks and wl.admitted is not None for wl in self.workloads.values()):
            self.clock.at(self.clock.now, Priority.CONTROLLER, self._sync_all)

    def inactive(self, queue: str) -> bool:
        """A ClusterQueue naming a check that does not exist, or a ProvisioningRequest check without its
        config, is inactive (``AdmissionCheckNotFound``, ``AdmissionCheckInactive``)."""
        cq = self.objects.cluster_queues.get(queue)
        if cq is None:
            return False
        for name, _ in cq.admission_checks:
            check = self.objects.admission_checks.get(name)
            if check is None:
                return True
            if check.controller_name == PROVISIONING_REQUEST_CONTROLLER and (
                check.config not in self.objects.provisioning_configs
            ):
                return True
        return False

    def reserved(self, wl: KueueWorkload, admitted: Admitted) -> bool:
        """Its quota reserved (``admitted``): the checks it gets are those for the flavors assigned
        (``AdmissionChecksForWorkload``), each keeping its state from an earlier reservation
        (``syncAdmissionCheckConditions``). True when it has some: it waits for them (reconciled at once)."""
        now = self.clock.now
        cq = self.objects.cluster_queues[admitted.workload.cluster_queue]
        names = checks_for_workload(cq, {f for fs in admitted.flavors.values() for f in fs.values()})
        checks, _ = sync_check_list(tuple(wl.checks.values()), names, now)
        wl.checks = {c.name: c for c in checks}
        if not wl.checks:
            return False
        wl.reservations.append(now)
        for check in wl.checks.values():
            self._history(wl, check)
        self._sync(wl)
        return True

    def admitted(self, wl: KueueWorkload, admitted: Admitted) -> Admitted:
        """``Admitted``: one with checks is admitted by the workload controller now, its checks Ready, with
        its ``Admitted`` event; one without, as its quota was reserved."""
        if not wl.checks:
            return admitted
        now = self.clock.now
        wl.admitted = admitted = replace(admitted, admitted_s=now)
        waited = now - wl.reservations[-1]
        self._event(wl, "Admitted", ADMITTED_EVENT.format(admitted.workload.cluster_queue, waited))
        return admitted

    def evicted(self, wl: KueueWorkload) -> None:
        """``resetChecksOnEviction``; its requests go (``CleanupProvisioningRequestsOnEviction``)."""
        if not wl.checks:
            return
        states = list(wl.checks.values())
        for old, new in zip(states, reset_on_eviction(states, self.clock.now), strict=True):
            if new != old:
                wl.checks[new.name] = new
                self._history(wl, new)
        self._delete_requests(wl)

    def _sync_all(self) -> None:
        for key in sorted(self.workloads):
            wl = self.workloads[key]
            if wl.checks and wl.admitted is not None and not wl.admitted.evicting:
                self._sync(wl)

    def _needs(self, wl: KueueWorkload, admitted: Admitted) -> list[PodSetNeed]:
        """Its pod sets as the controller reads them: spec count, assigned count, resources used."""
        assigned = {ps.name: ps.count for ps in admitted.workload.pod_sets}
        return [
            PodSetNeed(
                s.name,
                s.count,
                assigned.get(s.name),
                frozenset(r for r, v in s.template.requests.items() if v > 0),
            )
            for s in wl.pod_sets(self.port.pods)
        ]

    @staticmethod
    def _history(wl: KueueWorkload, check: CheckState) -> None:
        series = wl.check_history.setdefault(check.name, [])
        row = [check.last_transition_s, check.state, check.message]
        if not series or series[-1][1:] != row[1:]:
            series.append(row)

    def _event(self, wl: KueueWorkload, reason: str, message: str) -> None:
        wl.check_events.append({"t_s": self.clock.now, "reason": reason, "message": message})

    def _request_of(
        self, wl: KueueWorkload, check: str, config: ProvisioningRequestConfig
    ) -> ProvisioningRequest | None:
        """``activeOrLastPRForChecks`` over the check's requests still there."""
        if self.provisioning is None:
            return None
        found = (self.provisioning.provisioning_request(k) for k in wl.requests.get(check, []))
        return active_or_last([r for r in found if r is not None], workload_name(wl), check, config)

    def _delete_requests(self, wl: KueueWorkload, keep: set[str] | None = None) -> None:
        """``deleteUnusedProvisioningRequests``: its requests other than ``keep`` go."""
        for check, keys in wl.requests.items():
            for key in list(keys):
                if keep is not None and key in keep:
                    continue
                if self.provisioning is not None and self.provisioning.provisioning_request(key) is not None:
                    self.provisioning.delete_provisioning_request(key)
                keys.remove(key)
            wl.requests[check] = keys

    def _create_request(
        self,
        wl: KueueWorkload,
        admitted: Admitted,
        check: str,
        config: ProvisioningRequestConfig,
        attempt: int,
    ) -> None:
        """``syncOwnedProvisionRequest``: the request ``<workload>-<check>-<attempt>``, a PodTemplate
        ``ppt-<request>-<podset>`` per pod set it covers (the set's template with its flavors' labels and
        tolerations: ``createPodTemplate``), the config's class and parameters."""
        if self.provisioning is None:
            return
        request_name = provisioning_request_name(workload_name(wl), check, attempt)
        templates = {s.name: s.template for s in wl.pod_sets(self.port.pods)}
        try:
            merged = merged_pod_sets(self._needs(wl, admitted), config.managed_resources)
        except InconsistentAssignments:
            return
        pod_sets = []
        for pod_set, count in merged:
            selector, tolerations = flavored(
                templates[pod_set], admitted.flavors.get(pod_set, {}), self.objects.flavors
            )
            template = pod_template_name(request_name, pod_set)
            pod = replace(
                templates[pod_set].renamed(template), node_selector=selector, tolerations=tolerations
            )
            pod_sets.append(RequestPodSet(template, count, pod))
        parameters = request_parameters(config, {})
        request = ProvisioningRequest(
            request_name, wl.namespace, config.class_name, tuple(pod_sets), parameters, created=self.clock.now
        )
        self.provisioning.create_provisioning_request(request)
        wl.requests.setdefault(check, []).append(request.key)
        wl.created_requests.setdefault(check, []).append(request_name)
        self._event(wl, "ProvisioningRequestCreated", f'Created ProvisioningRequest: "{request_name}"')

    def _sync(self, wl: KueueWorkload) -> None:
        """The admission check controllers' reconcile of a workload holding a reservation: each
        ProvisioningRequest check's state from its request (``syncCheckStates``), the requests no longer
        used deleted, the next one created (``syncOwnedProvisionRequest``); a check of a controller gpufleet
        does not run stays Pending, saying so. Then the workload controller's: evicted for a Retry check,
        deactivated for a Rejected one (``reconcileCheckBasedEviction``), admitted when all are Ready."""
        admitted = wl.admitted
        if admitted is None or admitted.evicting or not wl.checks:
            return
        now = self.clock.now
        name = workload_name(wl)
        needs = self._needs(wl, admitted)
        in_use: set[str] = set()
        needing: list[tuple[str, ProvisioningRequestConfig]] = []  # the checks whose request is needed
        for check_name in list(wl.checks):
            state = wl.checks[check_name]
            check = self.objects.admission_checks.get(check_name)
            if check is None or check.controller_name != PROVISIONING_REQUEST_CONTROLLER:
                controller = "" if check is None else check.controller_name
                new: CheckState | None = replace(state, message=NOT_MODELLED_MESSAGE.format(controller))
            else:
                config = None if check.config is None else self.objects.provisioning_configs.get(check.config)
                request = None if config is None else self._request_of(wl, check_name, config)
                try:
                    needed = config is not None and request_needed(needs, config.managed_resources)
                except InconsistentAssignments:
                    continue
                if needed and config is not None:
                    needing.append((check_name, config))
                new = sync_check(state, config, needed, request, name, wl.started, active=wl.active)
                if request is not None:
                    in_use.add(request.key)
            if new is not None and new != state:
                if new.state != state.state:
                    new = replace(new, last_transition_s=now)
                    event = update_event(state, new)
                    if event is not None:
                        self._event(wl, "AdmissionCheckUpdated", event)
                wl.checks[check_name] = new
                self._history(wl, new)
        self._delete_requests(wl, in_use)
        for check_name, config in needing:
            state = wl.checks[check_name]
            attempt = next_attempt(state, self._request_of(wl, check_name, config), name, wl.started)
            if attempt is not None:
                self._create_request(wl, admitted, check_name, config, attempt)
        self._after_checks(wl)

    def _after_checks(self, wl: KueueWorkload) -> None:
        """``reconcileCheckBasedEviction`` and ``SyncAdmittedCondition``."""
        checks = list(wl.checks.values())
        admitted = wl.admitted
        if admitted is None:
            return
        queue = admitted.workload.cluster_queue
        eviction = check_based_eviction(checks)
        if eviction is not None and eviction.deactivated:
            self._event(wl, *eviction.event)
            wl.active, wl.requeue_at = False, None
            wl.message = eviction.evicted[1]
            self._evict(wl, *eviction.scheduling_stats)
            self._tell(wl, wl.message)
            return
        if eviction is not None:
            message = eviction.condition_message
            self._event(wl, *eviction.event)
            at = requeue_at_update(checks, wl.requeue_at, self.clock.now)
            if at is not None:
                wl.requeue_at = at
            at = wl.requeue_at
            wl.message = (
                message if at is None else f"{message}; waiting for the requeue backoff until {at:g}s"
            )
            self._evict(wl, *eviction.scheduling_stats)
            self._tell(wl, wl.message)
            if at is not None:
                self.clock.at(at, Priority.CONTROLLER, self._request_cycle, background=True)
            return
        if admitted_condition(True, checks) == ADMITTED:
            if not wl.started:
                self._start(wl)
            return
        waiting = "; ".join(
            f'"{c.name}" {c.state}' + (f" ({c.message})" if c.message else "") for c in checks
        )
        self._tell(wl, f"Quota reserved in ClusterQueue {queue}; {NOT_ALL_CHECKS_READY}: {waiting}")


def workload_name(wl: KueueWorkload) -> str:
    """The Workload's name: ``<kind>-<name>`` (``GenerateWorkloadNamePrefix``, without the hash of the
    owner's UID upstream appends)."""
    kind, _, name = wl.key.split("/", 2)
    return f"{kind.lower()}-{name}"


def pod_set_annotations(checks: Iterable[CheckState], pod_set: str) -> dict[str, str]:
    """The annotations the checks' ``podSetUpdates`` give the pod set's pods (``podset.Merge``)."""
    annotations: dict[str, str] = {}
    for check in checks:
        for update in check.pod_set_updates:
            if update.name == pod_set:
                annotations.update(update.annotations)
    return annotations
