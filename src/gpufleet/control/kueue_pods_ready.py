"""Kueue's ``waitForPodsReady``, as its workload controller acts on it (upstream
``pkg/controller/core/workload_controller.go``: ``reconcileNotReadyTimeout``; the pure rules are
``scheduling.kueue.pods_ready``).

With the manager Configuration's ``waitForPodsReady``, an admitted workload is PodsReady once as many of
its pods are Ready or Succeeded as it was admitted with (a Job's ``ready + succeeded >= parallelism``,
``Job.PodsReady``). One not PodsReady ``timeout`` after its admission, or ``recoveryTimeout`` after it lost
PodsReady (one of its pods ended), is evicted with reason ``PodsReadyTimeout`` (a Job suspended and
requeued, pods end ``Evicted``), its ``requeueState`` count incremented, and waits out its backoff (its pods
say so) before its queue sees it again, ordered by its eviction time (``requeuingStrategy.timestamp:
Eviction``). Past ``backoffLimitCount`` it is deactivated instead (``spec.active: false``: evicted with
reason ``Deactivated``, ``RequeuingLimitExceeded``) and never admitted again. With ``blockAdmission`` no
workload is admitted while one that holds quota is not PodsReady (an evicted one holds it until its pods
are gone: upstream's cache keeps it among its ``WorkloadsNotReady`` until its quota reservation goes).
"""

from __future__ import annotations

from collections.abc import Callable

from gpufleet.control.clock import Clock, Priority
from gpufleet.control.kueue_workload import Evict, KueueWorkload
from gpufleet.control.port import ClusterReads
from gpufleet.model.kueue import DEACTIVATED, PODS_READY_TIMEOUT, REQUEUING_LIMIT_EXCEEDED, WaitForPodsReady
from gpufleet.scheduling.kueue.pods_ready import (
    DEACTIVATED_MESSAGE,
    TIMEOUT_MESSAGE,
    Deactivate,
    on_timeout,
    pods_ready_deadline,
)

#: gpufleet's word for a workload waiting out its requeue backoff (upstream's Requeued=False condition)
IN_BACKOFF = "{}; waiting for the requeue backoff (requeue {}) until {:g}s"


class PodsReadyTimeouts:
    """``waitForPodsReady`` (``config``; None: off) over the admitted workloads: their PodsReady from
    ``port``'s pods, their deadlines on ``clock``; a workload past its deadline goes through ``evict``, and
    ``request_cycle`` asks Kueue's scheduler for a cycle (a workload turned PodsReady under
    ``blockAdmission``, a requeue backoff over)."""

    def __init__(
        self,
        config: WaitForPodsReady | None,
        clock: Clock,
        port: ClusterReads,
        evict: Evict,
        request_cycle: Callable[[], None],
    ) -> None:
        self.config = config
        self.clock = clock
        self.port = port
        self._evict = evict
        self._request_cycle = request_cycle

    def due(self, wl: KueueWorkload) -> bool:
        """Whether the workload, admitted and not PodsReady, has a deadline to come."""
        config = self.config
        admitted = wl.admitted
        if config is None or admitted is None or admitted.evicting or not wl.started:
            return False
        return pods_ready_deadline(config, admitted.admitted_s, wl.ready, wl.ready_lost_s) is not None

    def changed(self, wl: KueueWorkload) -> None:
        """Its PodsReady condition follows its pods: when it turns true, a held admission may go on
        (``blockAdmission``); when it turns false, the recovery timeout starts."""
        config = self.config
        if config is None or wl.admitted is None or not wl.started:
            return
        ready = self._pods_ready(wl)
        if ready == wl.ready:
            return
        wl.ready = ready
        if ready:
            if config.block_admission:
                self._request_cycle()
        else:
            wl.ready_lost_s = self.clock.now
            self.arm(wl)

    def arm(self, wl: KueueWorkload) -> None:
        """Check the workload at its PodsReady deadline (if it has one)."""
        config = self.config
        admitted = wl.admitted
        if config is None or admitted is None or not wl.started:
            return
        due = pods_ready_deadline(config, admitted.admitted_s, wl.ready, wl.ready_lost_s)
        if due is not None:
            self.clock.at(due[1], Priority.CONTROLLER, lambda: self._check(wl), background=True)

    def _pods_ready(self, wl: KueueWorkload) -> bool:
        """``PodsReady``: as many of its pods Ready or Succeeded as it was admitted with (Kueue's
        ``PodsReady`` of each integration: a Job's ``ready + succeeded``), its pods of earlier runs that
        succeeded and still exist counted (a suspended MPIJob keeps its succeeded workers under
        ``cleanPodPolicy: Running`` and does not make them again)."""
        admitted = wl.admitted
        if admitted is None:
            return False
        wanted = sum(ps.count for ps in admitted.workload.pod_sets)
        ready = 0
        for k in (*wl.succeeded_before, *wl.pods):
            rec = self.port.pods[k]
            if rec.deleted_s is None and (rec.phase == "Succeeded" or (rec.ready and rec.phase == "Running")):
                ready += 1
        return ready >= wanted

    def _check(self, wl: KueueWorkload) -> None:
        """``reconcileNotReadyTimeout``: past its deadline and still not PodsReady, the workload is evicted
        and requeued after its backoff, or deactivated past ``backoffLimitCount``."""
        config = self.config
        admitted = wl.admitted
        if config is None or admitted is None or admitted.evicting or not wl.active or not wl.started:
            return
        wl.ready = self._pods_ready(wl)
        due = pods_ready_deadline(config, admitted.admitted_s, wl.ready, wl.ready_lost_s)
        now = self.clock.now
        if due is None or due[1] > now:
            return
        outcome = on_timeout(config, wl.requeue_count, now)
        if isinstance(outcome, Deactivate):
            wl.active, wl.requeue_count, wl.requeue_at = False, 0, None
            wl.message = DEACTIVATED_MESSAGE
            self._evict(wl, DEACTIVATED, REQUEUING_LIMIT_EXCEEDED)
            return
        wl.requeue_count, wl.requeue_at = outcome.count, outcome.requeue_at_s
        name = wl.key.split("/", 1)[1]
        wl.message = IN_BACKOFF.format(TIMEOUT_MESSAGE.format(name), outcome.count, outcome.requeue_at_s)
        self._evict(wl, PODS_READY_TIMEOUT, due[0])
        self.clock.at(outcome.requeue_at_s, Priority.CONTROLLER, self._request_cycle, background=True)
